"""The `hurray view` server: one page and its JSON, on 127.0.0.1.

    GET /                        the page (page.html: its script and style inline)
    GET /api/info                {"mode": "file" | "diff", "files": [path, ...]}
    GET /api/summary?f=0         the summary (and its HTML) and the table, as columns
    GET /api/tensor?f=0&name=N   one tensor's values summarised now (bounded), and HTML
    GET /api/verify?f=0          File.verify(): structure and data checksums (reads all)
    GET /api/diff                the two files' names compared (no data read)
    GET /api/compare?name=N      max |a - b| of tensor N in the two files

The summary and the table come from the files' index and descriptors alone;
only /api/tensor, /api/verify and /api/compare read tensor data. Requests
whose Host is not this server's loopback address are refused (a page on
another site cannot reach it through DNS rebinding).
"""

from __future__ import annotations

import json
import math
import os
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import model as _model
from . import render

COLUMNS = ("name", "shape", "dtype", "layout", "scheme", "bytes", "params", "kind",
           "view_of", "member_of", "error")


def clean(v: Any) -> Any:
    """v with every non-finite float as a string (JSON has no NaN)."""
    if isinstance(v, float):
        return v if math.isfinite(v) else repr(v)
    if isinstance(v, dict):
        return {str(k): clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [clean(x) for x in v]
    if isinstance(v, bytes):
        return {"bytes": len(v)}
    return v


def page() -> bytes:
    """page.html with the fragments' style (render.STYLE) in place."""
    with open(os.path.join(os.path.dirname(__file__), "page.html"), encoding="utf-8") as fh:
        return fh.read().replace("<!--HRV-STYLE-->", render.STYLE, 1).encode()


class Viewer:
    """The files being shown (one, or two for a diff) and what was computed."""

    def __init__(self, paths: list[str], options: dict | None = None) -> None:
        self.paths = list(paths)
        self.models = [_model.FileModel(p, options if _model._remote.is_url(p) else None)
                       for p in self.paths]
        self._diff: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        for m in self.models:
            m.close()

    def info(self) -> dict[str, Any]:
        return {"mode": "diff" if len(self.models) == 2 else "file", "files": self.paths}

    def summary(self, i: int) -> dict[str, Any]:
        m = self.models[i]
        s = m.summary()
        rows = m.rows()
        return {"summary": s, "html": render.summary_html(s), "columns": list(COLUMNS),
                "rows": [[r.get(c) for c in COLUMNS] for r in rows]}

    def tensor(self, i: int, name: str) -> dict[str, Any]:
        m = self.models[i]
        st = _model.tensor_stats(m, name)
        return {"stats": st, "html": render.tensor_detail_html(st)}

    def verify(self, i: int) -> dict[str, Any]:
        return self.models[i].verify()

    def diff(self) -> dict[str, Any]:
        with self._lock:
            if self._diff is None:
                self._diff = _model.diff_rows(self.models[0], self.models[1])
            return self._diff

    def compare(self, name: str) -> dict[str, Any]:
        return _model.compare(self.models[0], self.models[1], name)


class Handler(BaseHTTPRequestHandler):
    server: "Server"
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True   # headers and body leave at once (no 40 ms delayed ACK)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, code: int, body: bytes, ctype: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, doc: Any, code: int = 200) -> None:
        body = json.dumps(clean(doc), allow_nan=False, ensure_ascii=False,
                          separators=(",", ":")).encode()
        self._send(code, body, "application/json; charset=utf-8")

    def do_HEAD(self) -> None:  # noqa: N802
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]")
        if host not in ("127.0.0.1", "localhost", "::1"):
            self._send(403, b"forbidden host\n", "text/plain")
            return
        url = urllib.parse.urlsplit(self.path)
        q = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        v = self.server.viewer
        try:
            i = int(q.get("f", "0"))
            if not 0 <= i < len(v.models):
                raise ValueError(f"no file {i}")
            if url.path in ("/", "/index.html"):
                self._send(200, page(), "text/html; charset=utf-8")
            elif url.path == "/api/info":
                self._json(v.info())
            elif url.path == "/api/summary":
                self._json(v.summary(i))
            elif url.path == "/api/tensor":
                self._json(v.tensor(i, q["name"]))
            elif url.path == "/api/verify":
                self._json(v.verify(i))
            elif url.path == "/api/diff" and len(v.models) == 2:
                self._json(v.diff())
            elif url.path == "/api/compare" and len(v.models) == 2:
                self._json(v.compare(q["name"]))
            else:
                self._send(404, b"not found\n", "text/plain")
        except KeyError as e:
            self._json({"error": f"unknown name or missing parameter: {e}"}, 404)
        except (ValueError, OSError) as e:
            self._json({"error": f"{type(e).__name__}: {e}"}, 400)
        except BrokenPipeError:
            pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, viewer: Viewer, port: int = 0, verbose: bool = False) -> None:
        self.viewer = viewer
        self.verbose = verbose
        super().__init__(("127.0.0.1", port), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"


def serve(paths: list[str], *, port: int = 0, browser: bool = True, options: dict | None = None,
          out: Any = None) -> int:
    """Serves the page of `paths` (one file, or two to compare) until interrupted."""
    import sys
    out = out if out is not None else sys.stdout
    viewer = Viewer(paths, options)
    srv = Server(viewer, port)
    try:
        print(f"hurray view: serving {srv.url} (Ctrl-C to stop)", file=out, flush=True)
        if browser:
            import webbrowser
            threading.Thread(target=webbrowser.open, args=(srv.url,), daemon=True).start()
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()
        viewer.close()
    return 0

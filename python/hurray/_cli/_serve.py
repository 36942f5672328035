"""`hurray serve FILE... [--host H] [--port P] [--max-clients N] [--writable]
[--max-put-bytes BYTES] [--transcode-limit BYTES]`: serves
the tensors of .hrry files over the network transport (hurray.serve) until SIGINT or
SIGTERM; one line per request on stderr."""

from __future__ import annotations

import signal
import sys
import threading
import time
from typing import Any, Sequence

from ._errors import CliError


def serve(files: Sequence[str], *, host: str, port: int, max_clients: int, writable: bool,
          max_put_bytes: int, transcode_limit: int = 256 << 20, out: Any = None,
          err: Any = None) -> int:
    from .. import _net
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    lock = threading.Lock()

    def log(line: str) -> None:
        with lock:
            err.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}\n")
            err.flush()

    try:
        server = _net.serve(list(files), host, port, max_clients=max_clients,
                            writable=writable, max_put_bytes=max_put_bytes, log=log,
                            transcode_limit=transcode_limit)
    except ValueError as e:  # a name twice, a bad option
        raise CliError(str(e)) from None
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        if not _net.is_loopback(host):
            log(f"warning: serving on {host}, beyond this machine: the protocol has no "
                f"authentication, anyone who reaches the port can read"
                f"{' and write' if writable else ''} every tensor (put it behind SSH or "
                f"TLS: docs/guide/network.md)")
        n = len(server.keys())
        out.write(f"serving {n} tensor{'s' if n != 1 else ''} at {server.url}\n")
        out.flush()
        while not stop.wait(0.5):
            pass
        log("stopping")
    finally:
        server.close()
        for s, h in old.items():
            signal.signal(s, h)
    return 0

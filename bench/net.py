"""The network transport on loopback against its peers, same bytes, same run
(docs/reference/benchmarks.md, "Serving over the network").

    PYTHONPATH=build-quick/stage python3 bench/net.py [--size-mib 1024] [--repeat 3]

Each server runs in a process of its own (so its memory can be read from /proc):
- hurray: `hurray serve FILE` (the file mapped read-only), fetched with hurray.connect;
- Apache Arrow Flight: a pyarrow.flight server whose do_get streams the same bytes as one
  float32 column (record batches of 64 MiB), read with do_get(...).read_all();
- raw TCP: a server that sendall()s the same bytes from the same mapping, read with a
  recv_into loop into preallocated memory: the floor any protocol pays on this machine.
Measured: a 1 GiB tensor; a whole 1 GiB file (16 tensors of 64 MiB: hurray.load of the
URL vs 16 Flight tickets vs 16 raw copies); the round trip of a 4-byte tensor; 8 clients
at once (each a process of its own; --client-mode threads for threads of one); the server's private memory (RssAnon) at its peak with 1 and 8 clients.
Needs pyarrow (bench only; the test command needs none of it).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

import hurray

MiB = 1 << 20
PARALLEL = 4


def pattern(nbytes: int, seed: int = 0) -> np.ndarray:
    p = ((np.arange(4099, dtype=np.uint32) * 2654435761 + seed) >> 13).astype(np.uint8)
    return np.resize(p, nbytes).view(np.float32)


# ---- the peers' servers (run as `python bench/net.py --serve-flight PATH PORTFILE`) ------------

def serve_flight(path: str, portfile: str) -> None:
    import pyarrow as pa
    import pyarrow.flight as fl
    f = hurray.open(path, mmap="r")
    tables = {}
    for name in f.keys():
        arr = np.asarray(f[name])  # a view of the mapping
        col = pa.array(arr.reshape(-1))
        tables[name.encode()] = pa.table({"x": col})

    class S(fl.FlightServerBase):
        def do_get(self, context, ticket):
            t = tables[ticket.ticket]
            return fl.RecordBatchStream(pa.Table.from_batches(
                t.to_batches(max_chunksize=16 * MiB)))

    s = S("grpc://127.0.0.1:0")
    with open(portfile + ".tmp", "w") as fh:
        fh.write(str(s.port))
    os.rename(portfile + ".tmp", portfile)
    s.serve()


def serve_raw(path: str, portfile: str) -> None:
    f = hurray.open(path, mmap="r")
    views = {name: memoryview(np.asarray(f[name]).view(np.uint8).reshape(-1))
             for name in f.keys()}
    ls = socket.create_server(("127.0.0.1", 0))
    with open(portfile + ".tmp", "w") as fh:
        fh.write(str(ls.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)

    def one(conn):
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn:
            while True:
                req = conn.recv(257)
                if not req:
                    return
                k = req[1:].decode()
                mv = views[k]
                conn.sendall(len(mv).to_bytes(8, "little"))
                conn.sendall(mv)

    while True:
        c, _ = ls.accept()
        threading.Thread(target=one, args=(c,), daemon=True).start()


def start(kind: str, path: str) -> tuple[subprocess.Popen, str]:
    if kind == "hurray":
        p = subprocess.Popen([sys.executable, "-m", "hurray", "serve", path, "--port", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return p, p.stdout.readline().split()[-1]
    portfile = tempfile.mktemp()
    p = subprocess.Popen([sys.executable, __file__, f"--serve-{kind}", path, portfile])
    while not os.path.exists(portfile):
        time.sleep(0.05)
    port = open(portfile).read()
    os.unlink(portfile)
    return p, port


# ---- how the server writes data frames: sendmsg vs sendfile vs splice --------------------------

def serve_send(path: str, offset: int, size: int, method: str, frame: int, port: int) -> None:
    """Sends `size` bytes of `path` from `offset` to 127.0.0.1:`port`, in frames of `frame`
    bytes, each behind a 20-byte frame header (as TENSOR_DATA): `sendmsg` (header and data
    from the file's mapping in one call, what src/net/socket.c does), `sendfile` (header
    with send, data with sendfile from the file), `splice` (data file -> pipe -> socket),
    `vmsplice` (the mapping's pages -> pipe -> socket: zero-copy from memory alone)."""
    import mmap
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    fd = os.open(path, os.O_RDONLY)
    m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    mv = memoryview(m)
    head = bytes(20)
    if method in ("splice", "vmsplice"):
        r, w = os.pipe()
        import fcntl
        fcntl.fcntl(w, 1031, frame)  # F_SETPIPE_SZ: a frame fits the pipe
    if method == "vmsplice":
        import ctypes

        class IoVec(ctypes.Structure):
            _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
        libc = ctypes.CDLL(None, use_errno=True)
        libc.vmsplice.restype = ctypes.c_ssize_t
        pages = np.frombuffer(m, dtype=np.uint8)  # the read-only mapping, by address
        base = pages.ctypes.data
    off = 0
    while off < size:
        k = min(frame, size - off)
        if method == "sendmsg":
            s.sendmsg([head, mv[offset + off:offset + off + k]])
        elif method == "sendfile":
            s.sendall(head)
            done = 0
            while done < k:
                done += os.sendfile(s.fileno(), fd, offset + off + done, k - done)
        elif method == "vmsplice":  # the mapping's pages into the pipe, then to the socket
            s.sendall(head)
            done = 0
            while done < k:
                iov = IoVec(base + offset + off + done, k - done)
                n = libc.vmsplice(w, ctypes.byref(iov), 1, 0)
                if n < 0:
                    raise OSError(ctypes.get_errno(), "vmsplice")
                left = n
                while left:
                    left -= os.splice(r, s.fileno(), left)
                done += n
        else:
            s.sendall(head)
            done = 0
            while done < k:
                n = os.splice(fd, w, k - done, offset_src=offset + off + done)
                left = n
                while left:
                    left -= os.splice(r, s.fileno(), left)
                done += n
        off += k
    s.close()
    if method == "vmsplice":
        del pages
    mv.release()
    m.close()
    os.close(fd)


def send_methods(path: str, offset: int, size: int, repeat: int) -> dict[str, float]:
    """GB/s of each way of sending data frames, into the same receiver (a recv_into loop
    over preallocated memory, in this process); the sender in a process of its own."""
    out: dict[str, float] = {}
    buf = np.empty(size + (size // MiB + 1) * 20, np.uint8)
    mv = memoryview(buf)
    for method in ("sendmsg", "sendfile", "splice", "vmsplice"):
        best = float("inf")
        for _ in range(repeat):
            ls = socket.create_server(("127.0.0.1", 0))
            port = ls.getsockname()[1]
            p = subprocess.Popen([sys.executable, __file__, "--send", path, str(offset), str(size),
                                  method, str(MiB), str(port)])
            c, _ = ls.accept()
            t0 = time.perf_counter()
            got = 0
            while True:
                k = c.recv_into(mv[got:], len(mv) - got)
                if not k:
                    break
                got += k
            el = time.perf_counter() - t0
            p.wait()
            c.close()
            ls.close()
            if p.returncode != 0 or got < size:
                raise RuntimeError(f"{method}: {got} of {size} bytes")
            best = min(best, el)
        out[f"send_{method}_GBps"] = size / best / 1e9
    return out


# ---- clients ---------------------------------------------------------------------------------

class RawClient:
    def __init__(self, port: str) -> None:
        self.s = socket.create_connection(("127.0.0.1", int(port)))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def get(self, name: str) -> memoryview:
        self.s.sendall(b"g" + name.encode())
        head = bytearray(8)
        self.s.recv_into(head, 8, socket.MSG_WAITALL)
        n = int.from_bytes(head, "little")
        buf = np.empty(n, dtype=np.uint8)  # preallocated, as the others allocate theirs
        mv = memoryview(buf)
        got = 0
        while got < n:
            k = self.s.recv_into(mv[got:], n - got)
            if not k:
                raise EOFError
            got += k
        return mv

    def close(self) -> None:
        self.s.close()


def clients(kind: str, where: str):
    if kind == "hurray":
        c = hurray.connect(where, timeout=120, parallel=PARALLEL)
        return c.get_tensor, c.close
    if kind == "flight":
        import pyarrow.flight as fl
        c = fl.connect(f"grpc://127.0.0.1:{where}")
        return (lambda name: c.do_get(fl.Ticket(name.encode())).read_all()), c.close
    r = RawClient(where)
    return r.get, r.close


def prefault(nbytes: int) -> None:
    """Touches then frees nbytes of memory. On a VM whose host takes back the guest's free
    memory (free page reporting, ballooning), the first touch of memory freed a while ago costs
    a host fault per page: 0.3 GB/s on the development VM against 7 GB/s for memory touched a
    moment before. Eight clients filling 1 GiB each measure that, not the transport, unless the
    memory is provisioned first."""
    a = np.ones(nbytes, dtype=np.uint8)
    del a


def concurrent_threads(kind: str, where: str, n: int) -> float:
    """n clients, threads of this process, fetch "big" at once: seconds until the last has it."""
    gets = [clients(kind, where) for _ in range(n)]
    t0 = time.perf_counter()
    ths = [threading.Thread(target=g[0], args=("big",)) for g in gets]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    el = time.perf_counter() - t0
    for g in gets:
        g[1]()
    return el


def _client_proc(kind: str, where: str, parallel: int, ready, go, done) -> None:
    global PARALLEL
    PARALLEL = parallel
    get, close = clients(kind, where)
    ready.put(True)
    go.wait()
    r = get("big")
    done.put(time.perf_counter())  # CLOCK_MONOTONIC: one clock for every process
    del r
    close()


def concurrent_procs(kind: str, where: str, n: int) -> float:
    """n clients, each a process of its own (as n inference workers are), connected first,
    then released at once: seconds from the release until the last has its tensor."""
    import multiprocessing as mp
    ctx = mp.get_context("spawn")
    ready, done, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    ps = [ctx.Process(target=_client_proc, args=(kind, where, PARALLEL, ready, go, done))
          for _ in range(n)]
    for q in ps:
        q.start()
    for _ in ps:
        ready.get(timeout=120)
    t0 = time.perf_counter()
    go.set()
    ends = [done.get(timeout=600) for _ in ps]
    for q in ps:
        q.join()
    return max(ends) - t0


def timed(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = fn()
        best = min(best, time.perf_counter() - t0)
        del r
    return best


def rss_anon(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0


class PeakRss:
    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self.stop = pid, 0, False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self) -> None:
        while not self.stop:
            self.peak = max(self.peak, rss_anon(self.pid))
            time.sleep(0.005)

    def done(self) -> int:
        self.stop = True
        self.t.join()
        return self.peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--send-methods", action="store_true",
                    help="only compare how the server writes data frames (sendmsg, sendfile, "
                         "splice) on the 1 GiB tensor")
    ap.add_argument("--parallel", type=int, default=hurray._net.DEFAULT_PARALLEL,
                    help="connections hurray.connect fetches a large tensor over")
    ap.add_argument("--client-mode", choices=("processes", "threads"), default="processes",
                    help="the concurrent clients as processes of their own (default, as "
                         "inference workers are) or as threads of this one")
    ap.add_argument("--no-prefault", dest="prefault", action="store_false",
                    help="do not provision the concurrent clients' memory first (see prefault)")
    a = ap.parse_args()
    global PARALLEL
    PARALLEL = a.parallel
    size = a.size_mib * MiB
    out: dict = {"size_bytes": size, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as d:
        one = os.path.join(d, "one.hrry")
        many = os.path.join(d, "many.hrry")
        hurray.save(one, {"big": hurray.from_numpy(pattern(size)),
                          "tiny": hurray.from_numpy(np.ones(1, np.float32))}, checksums=False)
        parts = 16
        hurray.save(many, {f"p{i:02d}": hurray.from_numpy(pattern(size // parts, i))
                           for i in range(parts)}, checksums=False)
        for path in (one, many):  # in the page cache, for every peer alike
            with open(path, "rb") as fh:
                while fh.read(64 * MiB):
                    pass
        if a.send_methods:
            r = send_methods(one, 0, size, a.repeat)  # the file's first `size` bytes
            for k, v in r.items():
                print(f"{k:32s} {v:.3f}")
            return
        for what, path in (("tensor", one), ("file", many)):
            for kind in ("hurray", "flight", "raw"):
                p, where = start(kind, path)
                try:
                    get, close = clients(kind, where)
                    if what == "tensor":
                        get("big")  # warm up
                        s = timed(lambda: get("big"), a.repeat)
                    elif kind == "hurray":
                        close()
                        s = timed(lambda: hurray.load(where), a.repeat)
                        get, close = clients(kind, where)
                    else:
                        s = timed(lambda: [get(f"p{i:02d}") for i in range(parts)], a.repeat)
                    out[f"{what}_{kind}_GBps"] = size / s / 1e9
                    if what == "tensor":
                        mem = PeakRss(p.pid)
                        get("big")
                        out[f"mem_1_client_{kind}_MiB"] = mem.done() / MiB
                        if kind in ("hurray", "raw"):
                            lat = []
                            for _ in range(200):
                                t0 = time.perf_counter()
                                get("tiny")
                                lat.append(time.perf_counter() - t0)
                            out[f"latency_4B_{kind}_us"] = float(np.median(lat)) * 1e6
                    close()
                    if what == "tensor" and kind in ("hurray", "raw", "flight"):
                        n = a.clients
                        if a.prefault:
                            prefault((n + 1) * size)
                        mem = PeakRss(p.pid)
                        el = (concurrent_procs if a.client_mode == "processes"
                              else concurrent_threads)(kind, where, n)
                        out[f"clients_{n}_{kind}_GBps"] = n * size / el / 1e9
                        out[f"mem_{n}_clients_{kind}_MiB"] = mem.done() / MiB
                finally:
                    p.kill()
                    p.wait()
    r = out
    r["tensor_vs_flight"] = r["tensor_hurray_GBps"] / r["tensor_flight_GBps"]
    r["tensor_vs_raw"] = r["tensor_hurray_GBps"] / r["tensor_raw_GBps"]
    r["file_vs_flight"] = r["file_hurray_GBps"] / r["file_flight_GBps"]
    r["file_vs_raw"] = r["file_hurray_GBps"] / r["file_raw_GBps"]
    r[f"clients_{a.clients}_vs_single_raw"] = r[f"clients_{a.clients}_hurray_GBps"] / \
        r["tensor_raw_GBps"]
    for k, v in r.items():
        print(f"{k:32s} {v:.3f}" if isinstance(v, float) else f"{k:32s} {v}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(r, fh, indent=2)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-flight":
        serve_flight(sys.argv[2], sys.argv[3])
    elif len(sys.argv) > 1 and sys.argv[1] == "--serve-raw":
        serve_raw(sys.argv[2], sys.argv[3])
    elif len(sys.argv) > 1 and sys.argv[1] == "--send":
        serve_send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5],
                   int(sys.argv[6]), int(sys.argv[7]))
    else:
        main()

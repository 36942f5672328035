"""hurray.serve and hurray.connect: the specification's network transport
(docs/guide/network.md; docs/internals/decisions.md § Network transport).

The protocol is spoken in C (include/hurray/net.h, src/net/); the extension's
_NetServer and _NetClient (python/src/io/net.c) move the bytes without the
GIL. This module owns the sockets and the threads: a server accepts on a
listening socket and serves each connection in a thread of a bounded pool
(`max_clients`); a client is one connection, its calls one at a time.

No authentication exists in the protocol: a server binds to 127.0.0.1 unless
told otherwise.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator, Mapping, Sequence

from . import _hurray

#: The port `hurray serve` listens on when none is given, and the port of a
#: hurray:// URL without one (docs/internals/decisions.md § Network transport).
DEFAULT_PORT = 7470
#: A request for this key is answered with the server's catalog (names and
#: descriptors); no tensor may be served under it.
CATALOG_KEY = "__hurray_catalog__"
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_CLIENTS = 64
DEFAULT_MAX_PUT_BYTES = 1 << 30
#: The bytes of transcoded copies (to a layout a client prefers) a server holds at
#: once, all its connections together; 0 turns transcoding off
#: (docs/guide/network.md, What is negotiated).
DEFAULT_TRANSCODE_LIMIT = 256 << 20
SCHEME = "hurray://"
#: Connections a client fetches a large tensor over, in shards, when the server
#: advertises PARALLEL_STREAMS; tensors of at least this many bytes qualify.
DEFAULT_PARALLEL = 4
DEFAULT_PARALLEL_THRESHOLD = 64 << 20
CAP_PARALLEL_STREAMS = 0x2


def is_net_url(path: Any) -> bool:
    return isinstance(path, str) and path[:len(SCHEME)].lower() == SCHEME


def parse_url(url: str) -> tuple[str, int]:
    """(host, port) of `hurray://host[:port]` (IPv6 hosts in brackets)."""
    if not is_net_url(url):
        raise ValueError(f"connect: {url!r} is not a hurray://host:port URL")
    u = urllib.parse.urlsplit(url)
    try:
        port = u.port
    except ValueError:
        raise ValueError(f"connect: {url!r}: the port is not a number from 0 to 65535") \
            from None
    host = u.hostname
    if not host or u.path not in ("", "/") or u.query or u.fragment or u.username:
        raise ValueError(f"connect: {url!r} is not a hurray://host:port URL (no path, "
                         f"query or user)")
    return host, DEFAULT_PORT if port is None else port


def _url(host: str, port: int) -> str:
    return f"hurray://[{host}]:{port}" if ":" in host else f"hurray://{host}:{port}"


def is_loopback(host: str) -> bool:
    """Whether binding to `host` keeps the server on this machine."""
    if host == "localhost":
        return True
    try:
        import ipaddress
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _tensors_of(paths: Any) -> tuple[dict[str, Any], list[Any]]:
    """{name: Tensor} of what serve() is given, and the files to close."""
    if isinstance(paths, Mapping):
        return dict(paths), []
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    from . import _files
    out: dict[str, Any] = {}
    where: dict[str, str] = {}
    files: list[Any] = []
    try:
        for p in paths:
            f = _files.open(p, mmap="r")
            files.append(f)
            for name in f.keys():
                if name in where:
                    raise ValueError(f"serve: the name {name!r} is in both {where[name]} and "
                                     f"{os.fspath(p)}; a server serves each name once")
                out[name] = f[name]  # a Tensor or a Composite
                where[name] = os.fspath(p)
    except BaseException:
        for f in files:
            f.close()
        raise
    return out, files


class Server:
    """A running server (hurray.serve): serves in background threads until
    `close()` (or the end of a `with` block). `port` and `url` say where;
    `transcode_limit` bounds the transcoded copies it holds at once (0: none)."""

    def __init__(self, paths: Any, host: str = "127.0.0.1", port: int = 0, *,
                 max_clients: int = DEFAULT_MAX_CLIENTS, writable: bool = False,
                 max_put_bytes: int = DEFAULT_MAX_PUT_BYTES, timeout: float = 300.0,
                 log: Callable[[str], None] | None = None,
                 transcode_limit: int = DEFAULT_TRANSCODE_LIMIT) -> None:
        if not isinstance(max_clients, int) or max_clients < 1:
            raise ValueError(f"serve: max_clients must be a whole number >= 1, not "
                             f"{max_clients!r}")
        if not isinstance(max_put_bytes, int) or max_put_bytes < 0:
            raise ValueError(f"serve: max_put_bytes must be a whole number >= 0, not "
                             f"{max_put_bytes!r}")
        if not isinstance(transcode_limit, int) or transcode_limit < 0:
            raise ValueError(f"serve: transcode_limit must be a whole number >= 0, not "
                             f"{transcode_limit!r}")
        self._log = log
        tensors, self._files = _tensors_of(paths)
        try:
            if CATALOG_KEY in tensors:
                raise ValueError(f"serve: {CATALOG_KEY!r} is reserved (the catalog)")
            self._srv = _hurray._NetServer(log, writable=writable, max_put_bytes=max_put_bytes,
                                           timeout=timeout, transcode_limit=transcode_limit)
            for name, t in tensors.items():
                self._srv.add(name, t)
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            self._sock = socket.create_server((host, port), family=family, backlog=128)
        except BaseException:
            for f in self._files:
                f.close()
            raise
        self.host = host
        self.port: int = self._sock.getsockname()[1]
        self.max_clients = max_clients
        self.transcode_limit = transcode_limit
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._closed = False
        self._pool = ThreadPoolExecutor(max_clients, thread_name_prefix="hurray-serve")
        self._thread = threading.Thread(target=self._accept, name="hurray-accept",
                                        daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return _url(self.host, self.port)

    def keys(self) -> list[str]:
        """The names served (pushes included)."""
        return self._srv.keys()

    def _accept(self) -> None:
        while True:
            try:
                conn, addr = self._sock.accept()
            except OSError:
                if self._closed:
                    return
                time.sleep(0.01)
                continue
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                self._conns.add(conn)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                self._pool.submit(self._serve, conn, addr)
            except RuntimeError:  # the pool was shut down: closing
                self._drop(conn)
                return

    def _serve(self, conn: socket.socket, addr: Any) -> None:
        peer = f"{addr[0]}:{addr[1]}" if isinstance(addr, tuple) else str(addr)
        try:
            if not self._closed:
                self._srv.serve(conn.fileno(), peer)
        except (OSError, ValueError) as e:
            if self._log is not None and not self._closed:
                self._log(f"{peer} closed: {e}")
        finally:
            self._drop(conn)

    def _drop(self, conn: socket.socket) -> None:
        with self._lock:
            self._conns.discard(conn)
        try:
            conn.close()
        except OSError:
            pass

    def close(self) -> None:
        """Stops accepting, ends every connection (a transfer in flight is cut:
        its client gets StreamError) and waits for the threads."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            conns = list(self._conns)
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join()
        self._pool.shutdown(wait=True)
        for f in self._files:
            f.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def serve_forever(self) -> None:
        """Blocks until close() is called from elsewhere (a signal handler)."""
        self._thread.join()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "serving"
        return f"<hurray.Server {self.url} {state}, {len(self.keys())} tensors>"


def serve(paths: Any, host: str = "127.0.0.1", port: int = 0, *,
          max_clients: int = DEFAULT_MAX_CLIENTS, writable: bool = False,
          max_put_bytes: int = DEFAULT_MAX_PUT_BYTES, timeout: float = 300.0,
          log: Callable[[str], None] | None = None,
          transcode_limit: int = DEFAULT_TRANSCODE_LIMIT) -> Server:
    """serve(paths, host="127.0.0.1", port=0, *, max_clients=64, writable=False, max_put_bytes=1073741824, timeout=300.0, log=None, transcode_limit=268435456)

    Serves every tensor of the `.hrry` files `paths` (a path or a list of paths; a
    `{name: hurray.Tensor}` mapping is served as it is) over the network transport of the
    specification, in background threads, and returns the running `hurray.Server` (a
    context manager; `.port`, `.url`, `.keys()`, `.close()`). Files are mapped read-only:
    every client is sent the same pages of the page cache, nothing is copied per client.

    `port=0` picks a free port (`server.port` says which). `host` is `"127.0.0.1"`: the
    protocol has no authentication, so serving beyond this machine is a choice to make
    (docs/guide/network.md, Security). At most `max_clients` connections are served at
    once; more wait their turn. `writable=True` accepts pushes (`Client.put`) into memory,
    `max_put_bytes` in all (a push over it is refused with `MESSAGE_TOO_LARGE`). A client
    silent for `timeout` seconds is disconnected. `log`, when given, is called with one
    line per request (`hurray serve` prints them on stderr).

    A client may ask for a tensor in another layout (`Client.get_tensor(name,
    layout="col_major")`): a dense tensor that is not quantized is transcoded to row-major
    or column-major for that response when the copy fits in what is left of
    `transcode_limit` (256 MiB for all connections together; a copy holds its share until it
    is sent), else it is sent in the next layout asked for, or as stored. `transcode_limit=0` turns transcoding off (the server no longer advertises it).

    A composite is served as the specification streams it (its head, then its members in
    pre-order, on one stream); a client receives a `hurray.Composite`. A name found in two
    files is a `ValueError`.
    """
    return Server(paths, host, port, max_clients=max_clients, writable=writable,
                  max_put_bytes=max_put_bytes, timeout=timeout, log=log,
                  transcode_limit=transcode_limit)


# ---- client ----------------------------------------------------------------------------

class RemoteSlice:
    """Client.get_slice(name): shape, dtype and layout from the server's catalog;
    indexing fetches the tensor once and slices it as File.get_slice does."""

    def __init__(self, client: Client, name: str, desc: Any) -> None:
        self._client = client
        self.name = name
        self._desc = desc
        self._slice: Any = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._desc.shape)

    @property
    def ndim(self) -> int:
        return int(self._desc.ndim)

    @property
    def dtype(self) -> Any:
        return self._desc.dtype

    @property
    def layout(self) -> Any:
        return self._desc.layout

    def get_shape(self) -> list[int]:
        return list(self.shape)

    def get_dtype(self) -> str:
        return str(self._desc.dtype.name)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __getitem__(self, key: Any) -> Any:
        if self._slice is None:
            from . import _files
            t = self._client.get_tensor(self.name)
            f = _hurray.open(memoryview(_files.save_bytes({self.name: t}, checksums=False)))
            self._slice = f.get_slice(self.name)
        return self._slice[key]


def _open(host: str, port: int, url: str, to: float, max_tensor_bytes: int | None,
          parallel_ok: bool) -> tuple[socket.socket, Any]:
    """A connected socket and the protocol session over it (HELLO done)."""
    try:
        sock = socket.create_connection((host, port), timeout=to)
    except OSError as e:
        raise _stream_error(f"connect: {url}: {e}") from e
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(None)  # the C side waits with poll, bounded by `timeout`
        return sock, _hurray._NetClient(sock.fileno(), timeout=to,
                                        max_tensor_bytes=max_tensor_bytes or 0,
                                        parallel_ok=parallel_ok)
    except BaseException:
        sock.close()
        raise


def shard_plan(rows: int, n: int) -> list[tuple[int, int]]:
    """(first row, row count) of shard k of n, for k in 0..n-1: what the server sends
    for "NAME#shard=K/N" (the first rows % n shards one row longer)."""
    q, r = divmod(rows, n)
    return [(q * k + min(k, r), q + (k < r)) for k in range(n)]


def check_shards(whole: Any, shards: list[Any], plan: list[tuple[int, int]]) -> None:
    """The shards a server sent cover the whole tensor exactly: each is the part of
    `whole` (a Descriptor) it was asked for (its shard section's parent shape and
    offset, its shape), and together they leave no gap and no overlap. A StreamError
    naming the shard otherwise."""
    shape = tuple(whole.shape)
    spans = []
    for k, (d, (start, count)) in enumerate(zip(shards, plan)):
        sh = d.shard
        if sh is None:
            raise _stream_error(f"get: shard {k} of {len(plan)} has no shard section")
        if tuple(sh.parent_shape) != shape:
            raise _stream_error(f"get: shard {k}: parent shape {tuple(sh.parent_shape)}, "
                                f"not the tensor's {shape}")
        off = tuple(sh.shard_offset)
        if any(off[1:]) or tuple(d.shape[1:]) != shape[1:] or d.dtype != whole.dtype:
            raise _stream_error(f"get: shard {k} is not a run of whole rows of the tensor")
        spans.append((off[0], off[0] + d.shape[0], k))
    at = 0
    for lo, hi, k in sorted(spans):
        if lo > at:
            raise _stream_error(f"get: the shards leave rows {at}..{lo} uncovered (a gap "
                                f"before shard {k})")
        if lo < at:
            raise _stream_error(f"get: shard {k} (rows {lo}..{hi}) overlaps rows already "
                                f"received (up to {at})")
        at = hi
    if at != shape[0]:
        raise _stream_error(f"get: the shards cover rows 0..{at} of {shape[0]} (a gap at "
                            f"the end)")
    for k, (d, (start, count)) in enumerate(zip(shards, plan)):
        if (d.shard.shard_offset[0], d.shape[0]) != (start, count):
            raise _stream_error(f"get: shard {k} holds rows {d.shard.shard_offset[0]}.."
                                f"{d.shard.shard_offset[0] + d.shape[0]}, not the rows "
                                f"{start}..{start + count} asked for")


def _splittable(d: Any, n: int, threshold: int) -> bool:
    """Whether a tensor of descriptor `d` is fetched in n shards: row-major, one
    buffer, no quantization or shard, whole rows, at least `threshold` bytes."""
    try:
        hs = d.buffer_handles
        return (n > 1 and d.layout.name == "row_major" and len(hs) == 1 and d.ndim >= 1
                and d.quantization is None and d.shard is None and d.shape[0] >= n
                and hs[0].byte_size >= threshold and hs[0].byte_size % d.shape[0] == 0)
    except (AttributeError, TypeError, ValueError):
        return False


class Client:
    """A connection to a hurray server (hurray.connect): `keys()`, `client[name]` /
    `get_tensor(name)`, `get_slice(name)`, `put(name, tensor)`, `ping()`, `close()`;
    a context manager. Calls from several threads are served one at a time."""

    def __init__(self, url: str, *, timeout: float | None = DEFAULT_TIMEOUT,
                 max_tensor_bytes: int | None = None, parallel: int = DEFAULT_PARALLEL,
                 parallel_threshold: int = DEFAULT_PARALLEL_THRESHOLD) -> None:
        if not isinstance(parallel, int) or parallel < 1:
            raise ValueError(f"connect: parallel must be a whole number >= 1, not "
                             f"{parallel!r}")
        host, port = parse_url(url)
        self.url = _url(host, port)
        to = DEFAULT_TIMEOUT if timeout is None else float(timeout)
        self._where = (host, port, to, max_tensor_bytes)
        self._sock, self._c = _open(host, port, self.url, to, max_tensor_bytes, parallel > 1)
        self._closed = False
        # Parallel shards: only when the server advertised PARALLEL_STREAMS.
        caps = self._c.peer_capabilities
        self.parallel = parallel if caps & CAP_PARALLEL_STREAMS else 1
        self.parallel_threshold = int(parallel_threshold)
        self._extra: list[tuple[socket.socket, Any]] = []  # opened on first use
        self._descs: dict[str, Any] | None = None
        self._plock = threading.Lock()

    # -- the File-like surface --
    def _catalog(self) -> dict[str, Any]:
        data = self._c.get_raw(CATALOG_KEY)
        out: dict[str, Any] = {}
        at = 0
        while at < len(data):
            (n,) = struct.unpack_from("<I", data, at)
            name = data[at + 4:at + 4 + n].decode("utf-8")
            at += 4 + n
            (m,) = struct.unpack_from("<I", data, at)
            out[name] = data[at + 4:at + 4 + m]
            at += 4 + m
        return out

    def keys(self) -> list[str]:
        """The names the server serves (one request: its catalog)."""
        return list(self._catalog())

    def descriptors(self) -> dict[str, Any]:
        """{name: hurray.Descriptor} of everything served, without fetching data."""
        return {k: _hurray.Descriptor.decode(v, permissive=True)
                for k, v in self._catalog().items()}

    def get_tensor(self, name: str, *, layout: str | Sequence[str] | None = None) -> Any:
        """The tensor served under `name` (KeyError if none): fetched whole, into
        64-byte aligned memory of its own; a composite comes as a `hurray.Composite`.
        A tensor of at least `parallel_threshold` bytes comes in `parallel` shards over
        as many connections, when the server offers parallel transfers.

        `layout`: a layout name ("row_major", "col_major", ...) or a sequence of names,
        most preferred first. The server sends the tensor in the first of them it stores
        it in or can transcode it to (a dense tensor, not quantized, to row_major or
        col_major, within its transcode limit), else in the layout it is stored in: the
        tensor returned says which (`.layout`); its values are the same either way. A
        composite's members are each sent that way."""
        prefs: list[str] | None = None
        if layout is not None:
            if isinstance(layout, str):
                prefs = [layout]
            elif isinstance(layout, (bytes, bytearray, memoryview)) or not hasattr(
                    layout, "__iter__"):
                raise TypeError(f"get_tensor: layout= takes a layout name or a sequence of "
                                f"names, not {type(layout).__name__}")
            else:
                prefs = list(layout)
        # Shards are cut from the stored layout, row-major: only when the
        # selection would keep it anyway (no preference, or row_major first).
        if self.parallel > 1 and not self._closed and (prefs is None or prefs[:1] == [
                "row_major"]):
            t = self._get_parallel(name)
            if t is not None:
                return t
        return self._c.get(name, layout=prefs)

    def _get_parallel(self, name: str) -> Any:
        with self._plock:
            if self._descs is None or name not in self._descs:
                self._descs = self.descriptors()
            d = self._descs.get(name)
            n = self.parallel
            if d is None or not _splittable(d, n, self.parallel_threshold):
                return None
            host, port, to, mtb = self._where
            while len(self._extra) < n - 1:
                self._extra.append(_open(host, port, self.url, to, mtb, True))
            conns = [self._c] + [c for _, c in self._extra[:n - 1]]
            total = d.buffer_handles[0].byte_size
            row_bytes = total // d.shape[0]
            plan = shard_plan(d.shape[0], n)
            import numpy as np
            raw = np.empty(total + 64, np.uint8)
            skip = (-raw.ctypes.data) % 64
            out = raw[skip:skip + total]  # 64-byte aligned
            got: list[Any] = [None] * n
            errors: list[BaseException] = []

            def fetch(k: int) -> None:
                lo, cnt = plan[k]
                try:
                    got[k] = conns[k].get_into(f"{name}#shard={k}/{n}",
                                               out[lo * row_bytes:(lo + cnt) * row_bytes])
                except BaseException as e:  # noqa: BLE001 - re-raised below
                    errors.append(e)
            ths = [threading.Thread(target=fetch, args=(k,)) for k in range(1, n)]
            for th in ths:
                th.start()
            fetch(0)
            for th in ths:
                th.join()
            if errors:
                self._descs = None
                raise errors[0]
            shards = [_hurray.Descriptor.decode(b, permissive=True) for b in got]
            if any(s.shard is not None and tuple(s.shard.parent_shape) != tuple(d.shape)
                   for s in shards):
                # the tensor changed since the catalog was read (a push): fetch it whole
                self._descs = None
                return None
            check_shards(d, shards, plan)
            return _hurray.Tensor([out.data], d.dtype, tuple(d.shape))

    __getitem__ = get_tensor

    def get_slice(self, name: str) -> RemoteSlice:
        """A slice object as File.get_slice gives: shape, dtype and layout without
        fetching; indexing fetches the tensor (the protocol has no ranges)."""
        cat = self._catalog()
        if name not in cat:
            raise KeyError(name)
        return RemoteSlice(self, name, _hurray.Descriptor.decode(cat[name], permissive=True))

    def put(self, name: str, tensor: Any) -> None:
        """Pushes `tensor` (a hurray.Tensor, or what hurray.save takes: a NumPy array,
        a torch tensor, ...) under `name`; returns once the server acknowledged it."""
        if not isinstance(tensor, _hurray.Tensor):
            from . import _files
            tensor = _files.stream_item(tensor)
        self._c.put(name, tensor)

    def ping(self) -> float:
        """A PING / PONG round trip; returns its duration in seconds."""
        t0 = time.perf_counter()
        self._c.ping()
        return time.perf_counter() - t0

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._catalog()

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._catalog())

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._c.close()
        self._sock.close()
        for sock, c in self._extra:
            c.close()
            sock.close()
        self._extra = []

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<hurray.Client {self.url}{' closed' if self._closed else ''}>"


def _stream_error(msg: str) -> Exception:
    e = _hurray.StreamError(msg)
    e.status = "ERR_IO"
    e.field = None
    e.offset = None
    e.reason = msg
    return e


def connect(url: str, *, timeout: float | None = DEFAULT_TIMEOUT,
            max_tensor_bytes: int | None = None, parallel: int = DEFAULT_PARALLEL,
            parallel_threshold: int = DEFAULT_PARALLEL_THRESHOLD) -> Client:
    """connect(url, *, timeout=30.0, max_tensor_bytes=None, parallel=4, parallel_threshold=67108864)

    Connects to a hurray server (`hurray serve`, `hurray.serve`) at `hurray://host:port`
    (the port defaults to 7470) and returns a `hurray.Client`. Every wait for the server
    is bounded by `timeout` seconds: a server that stops answering or goes away, even in
    the middle of a tensor, raises `hurray.StreamError`, and the client is then unusable
    (connect again). `max_tensor_bytes` bounds the size of a tensor accepted (default 64
    GiB): a larger one is refused before any memory is taken for it.

    A tensor of at least `parallel_threshold` bytes (row-major, one buffer) is fetched
    as `parallel` shards over as many connections into one 64-byte aligned buffer when
    the server advertises parallel transfers; the client checks that the shards cover
    the tensor with no gap and no overlap (`StreamError` otherwise). `parallel=1`
    fetches everything over the one connection.
    """
    return Client(url, timeout=timeout, max_tensor_bytes=max_tensor_bytes, parallel=parallel,
                  parallel_threshold=parallel_threshold)


def load(url: str, names: Any = None, *, timeout: float | None = DEFAULT_TIMEOUT) \
        -> dict[str, Any]:
    """hurray.load("hurray://..."): every tensor served (or those of `names`)."""
    with connect(url, timeout=timeout) as c:
        wanted = c.keys() if names is None else list(names)
        return {n: c[n] for n in wanted}

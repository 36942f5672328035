"""Remote .hrry files: s3://, http(s):// and fsspec URLs as sources of bytes.

A `.hrry` file's footer index says where every tensor is, so a reader needs
the head, one read at the tail (trailer, index, KV) and then one range per
tensor it is asked for. This module is the byte source the C reader reads
through (`hurray_file_open_reader`, via the extension's `_hurray.open(source)`):
`Source.readinto(offset, memoryview)` fills the caller's memory straight from
the socket (`http.client` with one connection per thread, `readinto`, no extra
copy).

- `s3://bucket/key`: the AWS environment (`AWS_ENDPOINT_URL(_S3)`,
  `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
  `AWS_REGION`/`AWS_DEFAULT_REGION`) or `storage_options`; requests signed with
  AWS Signature V4 here (hashlib/hmac); path-style for a custom endpoint.
- `http://`, `https://`: any server that honours `Range`.
- any other scheme (`gs://`, `az://`, `hf://`, `memory://`, ...): fsspec, when
  installed, with `storage_options` passed through.
- `hurray://host:port`: a hurray server (hurray/_net.py), not a byte source:
  load, open and load_kv hand it to the network client.

Faults: connection resets, timeouts, 5xx and throttling (429, 503 SlowDown) are
retried with exponential backoff and full jitter, resuming a range from the
byte where it broke; after the last try, or at once for what retrying cannot
fix (401/403, 404, a server ignoring `Range`, an object replaced while being
read), `hurray.FileError` names the cause and the URL. The object's identity
(ETag, else Last-Modified) is taken at open, sent as `If-Match` and checked on
every response.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import http.client
import mmap
import os
import random
import re
import socket
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ._hurray import FileError

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

#: bytes read at open: the head, then the tail (trailer, KV, index; widened
#: when the index starts before it)
HEAD_BYTES = 65536
TAIL_BYTES = 262144
DEFAULT_PART_SIZE = 8 << 20
DEFAULT_WORKERS = 8
DEFAULT_TIMEOUT = 30.0
DEFAULT_RETRIES = 5
BACKOFF_BASE = 0.05
BACKOFF_CAP = 5.0


def is_url(path: Any) -> bool:
    """Whether `path` is a URL this module reads (`scheme://...`, file:// aside)."""
    return (isinstance(path, str) and _URL.match(path) is not None
            and not path.lower().startswith("file://"))


def _error(msg: str) -> FileError:
    e = FileError(msg)
    e.status = "ERR_IO"
    e.field = None
    e.offset = None
    e.reason = msg
    return e


def workers_from(workers: int | None) -> int:
    """workers= as given, else $HURRAY_WORKERS, else the default; at least 1."""
    if workers is None:
        env = os.environ.get("HURRAY_WORKERS")
        if env:
            try:
                workers = int(env)
            except ValueError:
                raise ValueError(f"HURRAY_WORKERS must be a positive integer, not {env!r}") \
                    from None
        else:
            workers = DEFAULT_WORKERS
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, not {workers!r}")
    return workers


def _part_size_from(part_size: int | None) -> int:
    if part_size is None:
        return DEFAULT_PART_SIZE
    if isinstance(part_size, bool) or not isinstance(part_size, int) or part_size < 4096:
        raise ValueError(f"part_size must be an integer of at least 4096 bytes, not "
                         f"{part_size!r}")
    return part_size


class _Retry(Exception):
    """A failure worth another try (reset, timeout, 5xx, throttling); `got`: the
    bytes of the range already in place (None: as before the try)."""

    def __init__(self, msg: str, got: int | None = None):
        super().__init__(msg)
        self.got = got


class _Redirect(Exception):
    """The request is to be sent again to the new target (3xx with a Location)."""


MAX_REDIRECTS = 10


class _Parts:
    """What both sources share: a range larger than a part fetched in parts,
    `workers` at once (the pool made on first use)."""

    workers: int
    part_size: int
    _pool: ThreadPoolExecutor | None = None
    _pool_lock = threading.Lock()

    def _range(self, offset: int, mv: memoryview) -> Any:
        raise NotImplementedError

    def fetch(self, offset: int, mv: memoryview) -> None:
        """mv's bytes from offset: one range, or parts fetched by `workers`
        threads at once when it is larger than a part."""
        n = len(mv)
        ps = self.part_size
        if n <= ps or self.workers < 2:
            self._range(offset, mv)
            return
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="hurray-remote")
        futs = [self._pool.submit(self._range, offset + s, mv[s:s + ps])
                for s in range(0, n, ps)]
        err = None
        for f in futs:
            try:
                f.result()
            except BaseException as e:  # every part waited for: none writes later
                err = err or e
        if err is not None:
            raise err

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


# ---- AWS Signature V4 -----------------------------------------------------------------------

def _sign(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


class _S3Signer:
    def __init__(self, access_key: str, secret_key: str, token: str | None, region: str):
        self.access_key, self.secret_key, self.token, self.region = (
            access_key, secret_key, token, region)

    def headers(self, method: str, host: str, path: str, query: str = "",
                now: datetime.datetime | None = None) -> dict[str, str]:
        """The x-amz-* and Authorization headers of an empty-bodied request
        (`path` URI-encoded, `query` canonical)."""
        now = now or datetime.datetime.now(datetime.timezone.utc)
        amz_date = now.strftime("%Y%m%dT%H%M%SZ")
        day = amz_date[:8]
        payload = hashlib.sha256(b"").hexdigest()
        h = {"host": host, "x-amz-content-sha256": payload, "x-amz-date": amz_date}
        if self.token:
            h["x-amz-security-token"] = self.token
        names = sorted(h)
        canonical = "\n".join([
            method, path, query,
            "".join(f"{k}:{h[k].strip()}\n" for k in names),
            ";".join(names), payload])
        scope = f"{day}/{self.region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                             hashlib.sha256(canonical.encode()).hexdigest()])
        k = _sign(("AWS4" + self.secret_key).encode(), day)
        for part in (self.region, "s3", "aws4_request"):
            k = _sign(k, part)
        sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        h["authorization"] = (f"AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, "
                              f"SignedHeaders={';'.join(names)}, Signature={sig}")
        del h["host"]
        return h


def s3_target(url: str, storage_options: dict) -> tuple[str, _S3Signer | None]:
    """The https URL of s3://bucket/key (path-style on a custom endpoint) and
    its signer (None: anonymous)."""
    so = dict(storage_options)
    ck = so.pop("client_kwargs", None) or {}
    p = urllib.parse.urlsplit(url)
    bucket, key = p.netloc, p.path.lstrip("/")
    if not bucket or not key:
        raise ValueError(f"{url}: an S3 URL is s3://bucket/key")
    env = os.environ
    endpoint = (so.pop("endpoint_url", None) or ck.get("endpoint_url")
                or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL"))
    region = (so.pop("region", None) or so.pop("region_name", None) or ck.get("region_name")
              or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1")
    access = so.pop("key", None) or so.pop("aws_access_key_id", None) \
        or env.get("AWS_ACCESS_KEY_ID")
    secret = so.pop("secret", None) or so.pop("aws_secret_access_key", None) \
        or env.get("AWS_SECRET_ACCESS_KEY")
    token = so.pop("token", None) or so.pop("aws_session_token", None) \
        or env.get("AWS_SESSION_TOKEN")
    anon = so.pop("anon", False)
    quoted = urllib.parse.quote(key, safe="/-_.~")
    if endpoint:
        target = f"{endpoint.rstrip('/')}/{bucket}/{quoted}"
    else:
        target = f"https://{bucket}.s3.{region}.amazonaws.com/{quoted}"
    signer = None if anon or not (access and secret) else _S3Signer(access, secret, token,
                                                                      region)
    return target, signer


# ---- HTTP (and S3 over it) ---------------------------------------------------------------

class HttpSource(_Parts):
    """Range reads of one object over HTTP(S): size and identity at open,
    one connection per thread, retries, identity checked on every response."""

    def __init__(self, url: str, *, target: str | None = None, signer=None,
                 headers: dict | None = None, timeout: float = DEFAULT_TIMEOUT,
                 retries: int = DEFAULT_RETRIES, workers: int = DEFAULT_WORKERS,
                 part_size: int = DEFAULT_PART_SIZE):
        self.url = url  # what messages name
        self._set_target(target or url)
        self._signer = signer
        self._headers = dict(headers or {})
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.workers = workers
        self.part_size = part_size
        self._local = threading.local()
        self._lock = threading.Lock()
        self.identity: tuple[str, str] | None = None  # ("ETag"|"Last-Modified", value)
        self.requests = 0
        self.size = -1  # learnt from the first answer
        self._cache: list[tuple[int, bytes]] = []
        head = bytearray(HEAD_BYTES)
        n, total = self._range(0, memoryview(head), first=True)
        self.size = total
        self._cache.append((0, bytes(head[:n])))
        if total > n:  # the tail: trailer, KV and index in one read
            start = max(n, total - TAIL_BYTES)
            tail = bytearray(total - start)
            self._range(start, memoryview(tail))
            self._cache.append((start, bytes(tail)))

    def __str__(self) -> str:
        return self.url

    def _set_target(self, where: str) -> None:
        """Where requests go: (https, host, port, Host header, path, query), replaced
        whole (a redirect) so that every thread sees one target."""
        t = urllib.parse.urlsplit(where)
        if t.scheme not in ("http", "https") or not t.hostname:
            raise _error(f"not an http(s) URL: {where} (for {self.url})")
        self._target_url = where
        self._target = (t.scheme == "https", t.hostname, t.port, t.netloc.rsplit("@", 1)[-1],
                        t.path or "/", t.query)

    # -- connections --
    def _conn(self, tgt: tuple) -> http.client.HTTPConnection:
        c = getattr(self._local, "conn", None)
        if c is not None and self._local.key != tgt[:3]:
            self._drop()
            c = None
        if c is None:
            cls = http.client.HTTPSConnection if tgt[0] else http.client.HTTPConnection
            c = cls(tgt[1], tgt[2], timeout=self.timeout)
            self._local.conn, self._local.key = c, tgt[:3]
        return c

    def _drop(self) -> None:
        c = getattr(self._local, "conn", None)
        self._local.conn = None
        if c is not None:
            c.close()

    # -- one range, retried and resumed --
    def _range(self, offset: int, mv: memoryview, first: bool = False) -> tuple[int, int]:
        """Fills mv with the bytes at offset (first: as many as there are, the
        object's size learnt); (bytes read, object size)."""
        n = len(mv)
        got = 0
        total = -1
        tries = redirects = 0
        while True:
            try:
                total = self._once(offset + got, mv[got:n], first and got == 0)
                if first:  # (a resumed first read asks for the n bytes there are)
                    n = min(n, total - offset)
                got = self._fill(mv, got, n)
                return got, total
            except _Retry as e:
                self._drop()
                got = got if e.got is None else e.got
                tries += 1
                if tries > self.retries:
                    raise _error(f"{e.args[0]}, after {tries} tries: {self.url}") from None
                time.sleep(random.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2 ** tries)))
            except _Redirect:
                redirects += 1
                if redirects > MAX_REDIRECTS:
                    raise _error(f"more than {MAX_REDIRECTS} redirects (the last to "
                                 f"{self._target_url}): {self.url}") from None
            except FileError:
                self._drop()
                raise

    def _once(self, start: int, mv: memoryview, first: bool) -> int:
        """Sends the request for mv's bytes from start; checks the response
        head; leaves the body in self._local.resp. The object's size."""
        end = start + len(mv) - 1
        tgt = self._target
        _, host, _, hosthdr, path, query = tgt
        h = {"Range": f"bytes={start}-{end}", "Accept-Encoding": "identity", "Host": hosthdr}
        h.update(self._headers)
        if (self.identity is not None and self.identity[0] == "ETag"
                and not self.identity[1].startswith("W/")):
            # (If-Match compares strongly: a weak ETag would never match; it is
            # still compared on every response)
            h["If-Match"] = self.identity[1]
        if self._signer is not None:
            h.update(self._signer.headers("GET", hosthdr, path, query))
        target = path + ("?" + query if query else "")
        try:
            c = self._conn(tgt)
            with self._lock:
                self.requests += 1
            c.request("GET", target, headers=h)
            r = c.getresponse()
        except (socket.timeout, TimeoutError) as e:
            raise _Retry(f"timed out after {self.timeout:g} s ({e})") from None
        except (ConnectionError, http.client.HTTPException, OSError) as e:
            raise _Retry(f"connection failed ({type(e).__name__}: {e})") from None
        st = r.status
        if st in (301, 302, 303, 307, 308) and r.getheader("Location"):
            where = urllib.parse.urljoin(self._target_url, r.getheader("Location"))
            r.read()
            if urllib.parse.urlsplit(where).hostname != host:
                # the caller's credentials stay with the host they were given for
                self._headers = {k: v for k, v in self._headers.items()
                                 if k.lower() not in ("authorization", "cookie")}
            self._set_target(where)
            raise _Redirect()
        if st in (429, 500, 502, 503, 504) or st >= 500:
            why = "throttled" if st in (429, 503) else "server error"
            r.read()
            raise _Retry(f"HTTP {st} {r.reason} ({why})")
        if st == 416 and first:  # an empty object (the reader says so)
            r.read()
            self._take_identity(r)
            self._local.resp = None
            return 0
        if st in (401, 403):
            body = r.read(2048)
            code = re.search(rb"<Code>([^<]+)</Code>", body)
            more = f" ({code.group(1).decode(errors='replace')})" if code else ""
            raise _error(f"HTTP {st} {r.reason}{more}: access refused, check the credentials "
                         f"(storage_options or the AWS_* variables): {self.url}")
        if st == 404:
            r.read(2048)
            raise _error(f"HTTP 404: no such object: {self.url}")
        if st == 412:
            r.read(2048)
            raise _error(f"the object changed while being read (HTTP 412 on If-Match "
                         f"{self.identity[1] if self.identity else ''}); open it again: "
                         f"{self.url}")
        if st == 200:
            r.close()
            raise _error(f"the server ignores Range (HTTP 200 instead of 206 for bytes "
                         f"{start}-{end}); serve the file from one that honours it, or "
                         f"download it: {self.url}")
        if st != 206:
            r.read(2048)
            raise _error(f"HTTP {st} {r.reason}: {self.url}")
        cr = r.getheader("Content-Range") or ""
        m = re.fullmatch(r"\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*", cr)
        if m is None or int(m.group(1)) != start:
            r.close()
            raise _error(f"a bad Content-Range {cr!r} for bytes {start}-{end}: {self.url}")
        if first:
            self._take_identity(r)
        else:
            self._check_identity(r)
        total = int(m.group(3)) if m.group(3) != "*" else -1
        if total < 0:
            r.close()
            raise _error(f"the server gives no object size in Content-Range {cr!r}: {self.url}")
        if not first and (int(m.group(2)) != end or (self.size >= 0 and total != self.size)):
            r.close()
            raise _error(f"the object changed while being read (Content-Range {cr!r}, "
                         f"{self.size} bytes at open); open it again: {self.url}")
        self._local.resp = r
        return total

    def _fill(self, mv: memoryview, got: int, n: int) -> int:
        r = self._local.resp
        self._local.resp = None
        if r is None:
            return got
        try:
            while got < n:
                k = r.readinto(mv[got:n])
                if not k:
                    raise _Retry(f"the connection closed after {got} of {n} bytes", got)
                got += k
        except (socket.timeout, TimeoutError) as ex:
            raise _Retry(f"timed out after {self.timeout:g} s reading the body ({ex})",
                         got) from None
        except (ConnectionError, http.client.HTTPException, OSError) as ex:
            raise _Retry(f"connection lost mid-body ({type(ex).__name__}: {ex})",
                         got) from None
        if r.length:  # a first read shorter than asked: the rest is not wanted
            self._drop()
        return got

    def _take_identity(self, r) -> None:
        etag = r.getheader("ETag")
        lm = r.getheader("Last-Modified")
        self.identity = ("ETag", etag) if etag else ("Last-Modified", lm) if lm else None

    def _check_identity(self, r) -> None:
        if self.identity is None:
            return
        kind, was = self.identity
        now = r.getheader(kind)
        if now != was:
            r.close()
            raise _error(f"the object changed while being read ({kind} {was} at open, "
                         f"{now} now); open it again: {self.url}")

    # -- what the C reader calls --
    def readinto(self, offset: int, mv: memoryview) -> int:
        n = len(mv)
        for start, data in self._cache:
            if start <= offset and offset + n <= start + len(data):
                mv[:] = data[offset - start:offset - start + n]
                return n
        # a read ending in the tail that starts before it (a large index):
        # the missing part is fetched and the tail widened
        if len(self._cache) == 2:
            ts, tail = self._cache[1]
            if offset < ts <= offset + n <= ts + len(tail) and ts - offset <= 64 << 20:
                extra = bytearray(ts - offset)
                self.fetch(offset, memoryview(extra))
                self._cache[1] = (offset, bytes(extra) + tail)
                mv[:] = self._cache[1][1][:n]
                return n
        self.fetch(offset, mv)
        return n


# ---- fsspec -------------------------------------------------------------------------------

# What fsspec's file systems report of an object's version in info(), first found wins
# (s3fs ETag / VersionId, gcsfs generation, adlfs etag, huggingface_hub's blob id, the
# memory and local file systems' times); the size is always compared too.
_FSSPEC_IDENTITY = ("ETag", "etag", "VersionId", "version_id", "generation", "blob_id",
                    "md5Hash", "checksum", "LastModified", "last_modified", "mtime", "created")


def _fsspec_identity(info: dict) -> tuple:
    for k in _FSSPEC_IDENTITY:
        if info.get(k) is not None:
            return (int(info["size"]), k, str(info[k]))
    return (int(info["size"]), None, None)


class FsspecSource(_Parts):
    """Range reads through an fsspec file system (gs://, az://, hf://, memory://, ...).
    Retries are the file system's own. The object's identity (its version, else its
    modification time, and its size: _FSSPEC_IDENTITY) is taken at open and checked
    again after every fetch, before its bytes are used: fsspec sends no If-Match, so a
    replacement is found after the read rather than refused by the server, at the cost
    of one metadata request per fetch."""

    def __init__(self, url: str, storage_options: dict, workers: int, part_size: int):
        try:
            import fsspec
        except ImportError:
            raise _error(f"{url}: this URL scheme is read through fsspec, which is not "
                         f"installed (pip install fsspec and the package of the scheme)") \
                from None
        self.url = url
        self.workers, self.part_size = workers, part_size
        try:
            self.fs, self.path = fsspec.core.url_to_fs(url, **storage_options)
            info = self.fs.info(self.path)
        except FileNotFoundError:
            raise _error(f"no such object: {url}") from None
        except (ValueError, ImportError) as e:
            raise _error(f"{url}: fsspec cannot read it ({e})") from None
        self.size = int(info["size"])
        self.identity = _fsspec_identity(info)
        self.requests = 0

    def __str__(self) -> str:
        return self.url

    def fetch(self, offset: int, mv: memoryview) -> None:
        super().fetch(offset, mv)
        invalidate = getattr(self.fs, "invalidate_cache", None)
        if invalidate is not None:
            invalidate(self.path)   # info() from the server, not a listing cached at open
        try:
            now = _fsspec_identity(self.fs.info(self.path))
        except FileNotFoundError:
            raise _error(f"no such object (it was removed): {self.url}") from None
        if now != self.identity:
            was = self.identity
            what = (f"{was[1]} {was[2]} at open, {now[2]} now" if was[1] == now[1] and
                    was[2] != now[2] else f"{was[0]} bytes at open, {now[0]} now")
            raise _error(f"the object changed while being read ({what}); open it again: "
                         f"{self.url}")

    def _range(self, offset: int, mv: memoryview) -> None:
        n = len(mv)
        try:
            data = self.fs.cat_file(self.path, start=offset, end=offset + n)
        except FileNotFoundError:
            raise _error(f"no such object (it was removed): {self.url}") from None
        if len(data) != n:
            raise _error(f"{n} bytes asked at byte {offset}, {len(data)} given (the object "
                         f"changed?): {self.url}")
        mv[:] = data

    def readinto(self, offset: int, mv: memoryview) -> int:
        self.fetch(offset, mv)
        return len(mv)



# ---- entry points ---------------------------------------------------------------------------

def open_source(url: str, storage_options: dict | None = None, workers: int | None = None,
                part_size: int | None = None):
    """The byte source of `url` (opened: its size and identity known)."""
    so = dict(storage_options or {})
    w = workers_from(workers)
    ps = _part_size_from(part_size)
    scheme = url.split("://", 1)[0].lower()
    if scheme in ("s3", "http", "https"):
        common = dict(timeout=so.pop("timeout", DEFAULT_TIMEOUT),
                      retries=so.pop("retries", DEFAULT_RETRIES),
                      headers=so.pop("headers", None), workers=w, part_size=ps)
        if scheme == "s3":
            target, signer = s3_target(url, so)
            for k in ("endpoint_url", "region", "region_name", "key", "secret", "token",
                      "anon", "client_kwargs", "aws_access_key_id", "aws_secret_access_key",
                      "aws_session_token"):
                so.pop(k, None)
            common.update(target=target, signer=signer)
        if so:
            s3 = ", endpoint_url, region, key, secret, token, anon" if scheme == "s3" else ""
            raise TypeError(f"{url}: unknown storage_options {sorted(so)} (this reader takes "
                            f"timeout, retries, headers{s3})")
        return HttpSource(url, **common)
    return FsspecSource(url, so, w, ps)


def fetch_image(src) -> mmap.mmap:
    """The whole object in one page-aligned buffer of its own, fetched in
    parts by the source's workers (the buffer the loaded tensors are views of)."""
    buf = mmap.mmap(-1, max(src.size, 1))
    mv = memoryview(buf)
    try:
        src.fetch(0, mv[:src.size])
    finally:
        mv.release()
    return buf


def open_file(url: str, *, storage_options=None, workers=None, part_size=None,
              permissive=False, max_kv_memory=268435456, pickle="bytes"):
    """hurray.open(url): the lazy reader over the URL's source (hurray://: a
    hurray.Client, which reads as a File does)."""
    from . import _files, _hurray, _net
    if _net.is_net_url(url):
        return _net.connect(url)
    if pickle != "bytes":
        raise ValueError(f"open: pickle={pickle!r} names a local file; a URL pickles as "
                         f"'bytes' (the receiver opens the URL again)")
    src = open_source(url, storage_options, workers, part_size)
    f = _hurray.open(src, permissive=permissive, max_kv_memory=max_kv_memory)
    reopen = dict(storage_options=storage_options, workers=workers, part_size=part_size,
                  permissive=permissive, max_kv_memory=max_kv_memory)
    f._set_pickling((_files._reopen, (url, reopen)), None)
    return f


def load_kv(url: str, *, storage_options=None, max_kv_memory=268435456, raw=False) -> dict:
    """hurray.load_kv(url): the KV section, from the two reads of an open (a
    hurray:// server serves tensors only: no KV)."""
    from . import _net, _shared
    if _net.is_net_url(url):
        return {}
    with open_file(url, storage_options=storage_options, workers=1,
                   max_kv_memory=max_kv_memory) as f:
        kv = f.kv  # the user's entries: hurray's own records left out
        if raw:
            for k in _shared.PACKAGE_KEYS:
                v = f._kv_value(k)
                if v is not None:
                    kv[k] = v
    return kv


def load(url: str, *, names=None, storage_options=None, workers=None, part_size=None,
         permissive=False, verify=False, with_views=False):
    """hurray.load(url) (with_views: load_stored's pair): a whole load fetches
    the object in parts concurrently into one aligned buffer the tensors are
    (writable) views of; names= reads only those tensors' ranges. hurray://:
    each tensor fetched from the server (no views: a server sends each whole)."""
    from . import _hurray, _net
    if _net.is_net_url(url):
        tensors = _net.load(url, None if names is None else _names_tuple(names))
        return (tensors, ()) if with_views else tensors
    src = open_source(url, storage_options, workers, part_size)
    try:
        if names is not None and not with_views:
            wanted = _names_tuple(names)
            f = _hurray.open(src, permissive=permissive)
            with f:
                if verify:
                    f.verify()
                if len(wanted) < 2 or src.workers < 2:
                    return {n: f[n] for n in wanted}
                # the tensors asked for, `workers` at once (each f[n] reads its own
                # range without the GIL, its read_at taking it only to call readinto)
                with ThreadPoolExecutor(min(src.workers, len(wanted))) as pool:
                    got = list(pool.map(f.__getitem__, wanted))
                return dict(zip(wanted, got))
        buf = fetch_image(src)
    finally:
        src.close()
    if with_views:
        return _hurray._load_bytes_with_views(buf, permissive=permissive, verify=verify,
                                              copy=False)
    return _hurray.load_bytes(buf, names=names, permissive=permissive, verify=verify,
                              copy=False)


def _names_tuple(names):
    if isinstance(names, (str, bytes)):
        raise TypeError(f"load: names must be a sequence of str, not a "
                        f"{type(names).__name__}")
    return tuple(names)

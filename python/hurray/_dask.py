"""Dask serializers for hurray tensors and composites (docs/guide/processes.md § Dask,
docs/internals/decisions.md § "Dask: a serializer that realigns in place").

Why: the format wants every buffer at a 64-byte boundary (MIN_BUFFER_ALIGNMENT).
Dask's TCP comm reads a message into memory of its own choosing, where the first
large buffer of a message lands at whatever offset the headers before it leave,
so a tensor sent through Dask's pickle serializer was copied once more on the
receiving worker, into fresh aligned memory: 256 MiB cost 90 ms there, a NumPy
array (which takes any address) nothing.

What: the frames are those of pickle protocol 5 (the in-band pickle, then one
frame per buffer, zero-copy on the sender), with two changes:

- the largest buffer comes first, and, when it is at least ``SLACK_MIN`` bytes,
  is followed by a *slack frame*: a second view of its own last ``SLACK`` bytes
  (no copy, no allocation). Dask reads a message's first buffer together with
  the frames of the same object that follow it into one block, so on the
  receiver the slack frame lies right after the buffer;
- the receiver then moves the buffer forward, inside that block, to its first
  64-byte boundary (a memmove of memory already faulted in, on two threads from
  16 MiB: 256 MiB in 11 ms), and wraps it. No second block, no page faults.

Moving changes the received frames, and Dask may deserialize one set of frames
twice or pass them on to another process (a scheduler forwarding what it
received). So the slack frame says what happened to it: the sub-header carries a
digest of the sender's slack bytes; after a move, the last 64 bytes of the slack
(which the data, moved by under 64 bytes, never reaches) hold a record: a magic
string, the digest and the shift. A receiver reads the data from where the
record says it is. A slack frame matching neither is refused by name.

Frames that do not lie end to end (another comm, compression, a message whose
first buffer is another object's) are used as they are: aligned ones are
wrapped, the others copied once into aligned memory, as before.

Registration: in every process where both hurray and distributed.protocol are
imported, whichever comes first (``arm``, called by ``hurray/__init__``): now
when distributed's serializer module is already there, otherwise right after it
is imported (a one-shot import hook). A process that imported only one of them
needs nothing.
"""

from __future__ import annotations

import sys
import threading

from . import _hurray

VERSION = 1
SLACK = 128  # bytes of slack after the largest buffer
SLACK_MIN = 64 * 1024  # smaller buffers are copied when misaligned: cheap
ALIGN = _hurray.MIN_BUFFER_ALIGNMENT
RECORD = SLACK - ALIGN  # where the realignment record starts in the slack
MAGIC = b"hurray:realigned"  # 16 bytes
DIGEST = 16
SERIALIZE_MODULE = "distributed.protocol.serialize"

# What the deserializers did, per process (tests and benchmarks read it): buffers
# handed to the rebuild at a 64-byte boundary (wrapped, no copy) or not (copied
# once there), and of the wrapped ones those first moved in place (moved).
stats = {"wrapped": 0, "moved": 0, "copied": 0}
_lock = threading.Lock()  # one realignment of one block at a time
_registered = False


def _digest(b) -> bytes:
    import hashlib  # here, not at hurray's import (OpenSSL: 8 ms)
    return hashlib.blake2b(b, digest_size=DIGEST).digest()


def _record(digest: bytes, shift: int) -> bytes:
    r = MAGIC + digest + bytes([shift])
    return r + bytes(ALIGN - len(r))


class FramesError(ValueError):
    """Dask frames of a hurray object that are not what the sender made."""


def _fail(what: str) -> FramesError:
    return FramesError(f"hurray Dask frames: {what}; the frames were changed on the way, or "
                       f"come from a different hurray version (send them again, with the same "
                       f"hurray on every worker)")


# ---- sending ---------------------------------------------------------------------------

def dumps(x):
    """(sub-header, frames) of a hurray.Tensor or hurray.Composite."""
    import pickle
    buffers = []
    pik = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
    views = [memoryview(b).cast("B") if memoryview(b).nbytes else memoryview(b)
             for b in buffers]
    order = sorted(range(len(views)), key=lambda i: -views[i].nbytes)
    frames = [pik]
    header = {"hurray": VERSION, "order": order,
              "writeable": [not views[i].readonly for i in order], "slack": 0}
    for k, i in enumerate(order):
        frames.append(views[i])
        if k == 0 and views[i].nbytes >= SLACK_MIN:
            tail = views[i][-SLACK:]
            frames.append(tail)
            header["slack"] = SLACK
            header["digest"] = _digest(tail)
    return header, frames


# ---- receiving -------------------------------------------------------------------------

def _where(mv):
    """(address, nbytes, readonly) of a frame, or None when it has no plain buffer."""
    try:
        return _hurray._buffer_address(mv)
    except (TypeError, ValueError, BufferError):
        return None


def _realign(data: memoryview, slack: memoryview, digest: bytes) -> memoryview:
    """The first buffer, moved to a 64-byte boundary inside its block when the
    frames lie end to end there; else as the slack frame says it is."""
    n = data.nbytes
    tail = bytes(slack)
    if _digest(tail) == digest:
        shift = 0  # as the sender made it
    elif (tail[RECORD:RECORD + len(MAGIC) + DIGEST] == MAGIC + digest
          and tail[RECORD + len(MAGIC) + DIGEST] < ALIGN):
        shift = tail[RECORD + len(MAGIC) + DIGEST]  # moved by an earlier receiver
    else:
        raise _fail("the slack frame after the first buffer holds neither the sender's bytes "
                    "nor a realignment record")
    base = data.obj
    d, s = _where(data), _where(slack)
    b = _where(base) if base is not None else None
    if (d is None or s is None or b is None or d[2] or s[2] or b[2] or s[0] != d[0] + n
            or not b[0] <= d[0] or d[0] + n + SLACK > b[0] + b[1]):
        if shift == 0:
            return data
        return memoryview(bytes(data[shift:]) + tail[:shift])  # the rebuild aligns it
    at = d[0] - b[0]  # where the frame starts in its block
    want = (-d[0]) % ALIGN
    if want != shift:
        _hurray._move_within(base, at + want, at + shift, n)
        stats["moved"] += 1
    whole = memoryview(base).cast("B")
    if want != 0 or shift != 0:
        whole[at + n + RECORD:at + n + SLACK] = _record(digest, want)
    return whole[at + want:at + want + n]


def _check_header(header) -> tuple[list, list, int, bytes | None]:
    if not isinstance(header, dict) or header.get("hurray") != VERSION:
        got = header.get("hurray") if isinstance(header, dict) else header
        raise _fail(f"sub-header version {got!r}, where this hurray reads {VERSION}")
    order, writeable, slack = header.get("order"), header.get("writeable"), header.get("slack")
    order = list(order) if isinstance(order, (list, tuple)) else None
    if (order is None or any(type(i) is not int for i in order)
            or sorted(order) != list(range(len(order)))):
        raise _fail(f"sub-header field 'order' is not a permutation: {header.get('order')!r}")
    writeable = list(writeable) if isinstance(writeable, (list, tuple)) else None
    if (writeable is None or len(writeable) != len(order)
            or any(type(w) is not bool for w in writeable)):
        raise _fail(f"sub-header field 'writeable' is not {len(order)} booleans")
    if type(slack) is not int or slack not in (0, SLACK) or (slack and not order):
        raise _fail(f"sub-header field 'slack' is {slack!r}, not 0 or {SLACK}")
    digest = header.get("digest") if slack else None
    if slack and (not isinstance(digest, bytes) or len(digest) != DIGEST):
        raise _fail(f"sub-header field 'digest' is not {DIGEST} bytes")
    return order, writeable, slack, digest


def loads(header, frames):
    """The hurray object of `dumps`'s frames, as Dask hands them over."""
    import pickle
    order, writeable, slack, digest = _check_header(header)
    want = 1 + len(order) + (1 if slack else 0)
    if not isinstance(frames, (list, tuple)) or len(frames) != want:
        got = len(frames) if isinstance(frames, (list, tuple)) else type(frames).__name__
        raise _fail(f"{got} frames where the sub-header describes {want}")
    try:
        views = [memoryview(f) for f in frames]
        views = [v if v.ndim == 1 and v.format == "B" else v.cast("B") for v in views]
    except (TypeError, ValueError) as e:
        raise _fail(f"a frame is not a contiguous buffer ({e})") from None
    buffers = [None] * len(order)
    rest = views[1:]
    for k, i in enumerate(order):
        if k == 0 and slack:
            if rest[1].nbytes != SLACK or rest[0].nbytes < SLACK:
                raise _fail(f"the slack frame holds {rest[1].nbytes} bytes, not {SLACK}, "
                            f"after a buffer of {rest[0].nbytes}")
            with _lock:
                b = _realign(rest[0], rest[1], digest)
            rest = rest[2:]
        else:
            b, rest = rest[0], rest[1:]
        if writeable[k] and b.readonly:
            b = memoryview(bytearray(b))  # writable as sent (the rebuild aligns it)
        if b.nbytes:
            where = _where(b)
            stats["wrapped" if where is not None and where[0] % ALIGN == 0 else "copied"] += 1
        buffers[i] = b if writeable[k] else b.toreadonly()
    return pickle.loads(views[0], buffers=buffers)


# ---- registration ----------------------------------------------------------------------

def register(module) -> None:
    """Registers the serializers with `module` (distributed.protocol.serialize)."""
    global _registered
    if _registered:
        return
    for cls in (_hurray.Tensor, _hurray.Composite):
        module.dask_serialize.register(cls)(dumps)
        module.dask_deserialize.register(cls)(loads)
    _registered = True


class _Watch:
    """Registers the serializers right after distributed.protocol.serialize is
    executed, then leaves sys.meta_path. Finds nothing itself: it borrows the
    spec the other finders give and runs the registration after the module."""

    def find_spec(self, name, path=None, target=None):
        if name != SERIALIZE_MODULE:
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec
        try:
            def exec_module(module, run=run, loader=loader):
                try:
                    run(module)
                finally:
                    loader.__dict__.pop("exec_module", None)
                register(module)
            loader.exec_module = exec_module  # this loader serves this module only
        except (AttributeError, TypeError):
            spec.loader = _After(loader)  # a loader without a __dict__ (zipimport)
        return spec


class _After:
    """A loader that runs another and then registers the serializers."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        self._loader.exec_module(module)
        register(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


def arm() -> None:
    """Registers now when distributed's serializers are there, else after they are.
    The watch answers for one module name only and costs an import nothing else;
    looking for distributed on sys.path first would cost hurray's import 2 ms."""
    mod = sys.modules.get(SERIALIZE_MODULE)
    if mod is not None and hasattr(mod, "dask_serialize") and hasattr(mod, "dask_deserialize"):
        register(mod)
    elif mod is None and not any(isinstance(f, _Watch) for f in sys.meta_path):
        sys.meta_path.insert(0, _Watch())

"""What the converter fuzz targets (fuzz_safetensors.py, fuzz_gguf.py,
fuzz_npy.py) share: the byte mutations of a seed file, the scratch file a
mutated input is written to, and the rule every input must keep: it either
converts (its source opens and every tensor reads) or raises one of our clean
errors (CliError, Refused, a hurray error), never another exception, a crash or
a long run."""
import os
import struct
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import hurray  # noqa: E402
from hurray._cli._errors import CliError, Refused  # noqa: E402
from hurray._cli._formats import open_source  # noqa: E402

# hurray's own errors (InternalError is left out: it is a bug)
CLEAN = (CliError, Refused, hurray.InvalidDescriptorError, hurray.BufferError,
         hurray.CopyRequiredError, hurray.UnsupportedError, hurray.FileError,
         hurray.StreamError)
SLOW_S = 5.0  # an input taking longer is a finding (under atheris; see one_file)
STRICT_TIME = False

INTERESTING = [0x00, 0x01, 0x02, 0x07, 0x08, 0x09, 0x0C, 0x0D, 0x20, 0x22, 0x2C, 0x2D, 0x30,
               0x39, 0x3A, 0x40, 0x5B, 0x5D, 0x7B, 0x7D, 0x7F, 0x80, 0xFE, 0xFF]
WORDS = [b"\xff" * 8, b"\x00" * 8, b"\x00" * 7 + b"\x80", (1 << 62).to_bytes(8, "little"),
         (1 << 32).to_bytes(8, "little"), (1 << 40).to_bytes(8, "little"),
         (255).to_bytes(8, "little"), (32).to_bytes(8, "little"), b"\xff\xff\xff\xff",
         b"\x09\x00\x00\x00", b"\x08\x00\x00\x00", b"\x00\x00\x00\x80"]


def mutate(inp, data, region=None, rounds=6):
    """Byte mutations of `data` (bytes), at positions in [0, region) when given
    (the header), else anywhere: a byte replaced (at random or by an
    interesting one), bytes inserted or cut, a 4- or 8-byte word overwritten."""
    b = bytearray(data)
    for _ in range(inp.small(0, rounds)):
        op = inp.u8() % 6
        span = min(region or len(b), len(b)) + 1
        pos = inp.uint(2) % span
        if op == 0 and pos < len(b):
            b[pos] = inp.u8()
        elif op == 1 and pos < len(b):
            b[pos] = inp.pick(INTERESTING)
        elif op == 2:
            b[pos:pos] = inp.take(inp.small(1, 8))
        elif op == 3:
            del b[pos:pos + inp.small(1, 16)]
        elif op == 4:
            w = inp.pick(WORDS)
            b[pos:pos + len(w)] = w
        elif op == 5 and pos < len(b):
            b[pos] ^= 1 << (inp.u8() % 8)
    return bytes(b)


def mutate_text(inp, text):
    """Mutations of a text header (JSON, a Python literal): a token replaced by
    one of the format's own, or the text around a position doubled or cut."""
    tokens = [b"0", b"-1", b"1e3", b"18446744073709551616", b"4611686018427387904", b'"16"',
              b"true", b"null", b"[", b"]", b"{", b"}", b",", b":", b'"dtype"', b'"shape"',
              b'"data_offsets"', b'"__metadata__"', b'"F32"', b'"BOOL"', b'"F4"', b'"I64"',
              b"[0,0]", b"[]", b"[0]", b"NaN", b'"\\ud800"', b"'<f8'", b"'|O'", b"(2,)",
              b"(0,)", b"()", b"True", b"'fortran_order'", b"'shape'", b"'descr'",
              b"[('a', '<i4')]", b"(-1,)", b"(4611686018427387904,)"]
    t = bytearray(text)
    for _ in range(inp.small(0, 4)):
        pos = inp.uint(2) % (len(t) + 1)
        op = inp.u8() % 3
        if op == 0:
            cut = inp.small(0, 6)
            t[pos:pos + cut] = inp.pick(tokens)
        elif op == 1:
            n = inp.small(1, 24)
            t[pos:pos] = t[pos:pos + n] * inp.small(1, 4)
        else:
            del t[pos:pos + inp.small(1, 12)]
    return bytes(t)


_SCRATCH = None


def scratch(ext):
    """A file path of this process with extension `ext`, in memory when it can."""
    global _SCRATCH
    if _SCRATCH is None:
        import atexit
        import shutil
        base = "/dev/shm" if os.path.isdir("/dev/shm") else None
        _SCRATCH = tempfile.mkdtemp(prefix="hurray-fuzz-", dir=base)
        atexit.register(shutil.rmtree, _SCRATCH, True)
    return os.path.join(_SCRATCH, "input" + ext)


def _touch(t):
    """Reads every byte of a tensor (each buffer, or each member's)."""
    members = getattr(t, "members", None)
    if members is not None:
        for m in members:
            _touch(m)
        return
    for i in range(t.buffer_count):
        bytes(np.asarray(t.buffer(i)))


def read_all(path):
    """Opens `path` as hurray convert does and reads every tensor: exactly, and
    as float values where that is what a conversion would do (--dequantize)."""
    with open_source(path) as src:
        _ = (dict(src.kv), list(src.gguf_types.items()), list(src.kv_problems))
        for e in src.entries:
            try:
                if e.foreign:
                    if e.values is not None:
                        np.asarray(e.values())
                    continue
                _touch(e.exact())
                if not e.composite and e.scheme is None:
                    _touch(e.dense())
                else:
                    _touch(e.float_values("float32"))
            except Refused:
                pass
            if e.release is not None:
                e.release()


def one_file(data, ext):
    """The rule, for the file bytes `data` given extension `ext`."""
    path = scratch(ext)
    with open(path, "wb") as fh:
        fh.write(data)
    t0 = time.monotonic()
    try:
        read_all(path)
    except CLEAN as e:
        _ = str(e)
    finally:
        dt = time.monotonic() - t0
    if STRICT_TIME and dt > SLOW_S:
        raise AssertionError(f"an input of {len(data)} bytes took {dt:.1f} s")


def with_length(prefix_fmt, text):
    return struct.pack(prefix_fmt, len(text)) + text


COVERED = ["hurray._cli._bounds", "hurray._cli._formats", "hurray._cli._gguf",
           "hurray._cli._values", "zipfile", "json.decoder", "numpy.lib._format_impl"]


def instrument(names):
    """Instruments, for atheris' coverage, the Python functions and methods
    defined in the modules `names` (and the functions nested in them):
    atheris.instrument_all would take minutes over NumPy and gguf, at every
    start (libFuzzer's merge starts the target again and again)."""
    import inspect
    import types

    import atheris
    done = set()

    def one(f):
        if isinstance(f, (staticmethod, classmethod)):
            f = f.__func__
        if isinstance(f, property):
            for g in (f.fget, f.fset, f.fdel):
                if g is not None:
                    one(g)
            return
        if isinstance(f, types.FunctionType) and id(f) not in done:
            done.add(id(f))
            atheris.instrument_func(f)

    for name in names:
        mod = sys.modules.get(name)
        if mod is None:
            continue
        for obj in list(vars(mod).values()):
            if inspect.isclass(obj) and obj.__module__ == name:
                for member in list(vars(obj).values()):
                    one(member)
            elif getattr(obj, "__module__", None) == name:
                one(obj)


def run(one_input, warm=None):
    """Fuzzes `one_input` with atheris. The parsers under test are Python, so
    their bytecode is instrumented for coverage (COVERED, after `warm` has
    imported everything the target reaches: the seeds made, gguf's quantizers
    loaded)."""
    global STRICT_TIME
    import atheris
    if warm is not None:
        warm()
    instrument(COVERED)
    STRICT_TIME = True
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()

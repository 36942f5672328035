"""No Python call may kill the process: the boundaries where other libraries hand
us memory (DLPack, NumPy, the buffer protocol) and where we hand it to them.

Each case runs in a subprocess, so a crash (SIGSEGV, an abort from a C++
library) is reported as a failed test instead of taking the suite down; the
child prints OK when every check passed.
"""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import hurray

HERE = os.path.dirname(os.path.abspath(__file__))

from isolation import has, isolated  # noqa: E402,F401 - shared with test_hardening_views


# ---- 1. views of a loaded (mapped) tensor ------------------------------------------------

# Child-side helpers: where an address lives (Linux /proc/self/maps; None elsewhere), and
# the check that a pointer is inside a mapping of the file with the permissions of `mode`
# ("r": shared read-only "r--s", "c": private writable "rw-p").
MAPS = """
import os

def mapping_of(ptr):
    if not os.path.exists("/proc/self/maps"):
        return None
    with open("/proc/self/maps") as fp:
        for line in fp:
            parts = line.split(None, 5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if lo <= ptr < hi:
                return parts[1], (parts[5].strip() if len(parts) > 5 else "")
    return ("", "")

def assert_in_mapping(ptr, path, mode):
    where = mapping_of(ptr)
    if where is None:
        return
    perms, name = where
    assert name == os.path.realpath(path), (hex(ptr), where, path)
    assert perms == ("rw-p" if mode == "c" else "r--s"), (mode, where)
"""


@pytest.mark.slow  # a child interpreter
@pytest.mark.parametrize("mode", ["r", "c"])
def test_views_of_a_mapped_tensor_never_crash_on_write(tmp_path, mode):
    """mmap="r": read-only views, writes refused or made into copies; mmap="c" (the
    default, also as mmap=True): writable zero-copy views of the private mapping, and
    the file never changes."""
    p = tmp_path / "m.hrry"
    isolated(MAPS + textwrap.dedent(f"""
        import numpy as np, hurray, pathlib, dlpack_ctypes as dl
        mode = {mode!r}
        w = np.arange(1024, dtype=np.float32)
        hurray.save({str(p)!r}, {{"w": hurray.from_numpy(w)}})
        before = pathlib.Path({str(p)!r}).read_bytes()
        t = hurray.load({str(p)!r}, mmap=mode)["w"]
        a = np.asarray(t)
        assert_in_mapping(a.ctypes.data, {str(p)!r}, mode)
        b = np.asarray(t.buffer(0))
        assert b.ctypes.data == a.ctypes.data
        _, info = dl.read(t.__dlpack__(max_version=(1, 0)))
        c = np.from_dlpack(t)
        if mode == "r":
            assert t.readonly and not b.flags.writeable
            try:  # NumPy: a read-only view; a write raises
                a[0] = 5
                raise SystemExit("NumPy wrote into a read-only view")
            except ValueError:
                pass
            # DLPack with copy=None: a copy, writable, the file untouched
            assert info["flags"] & dl.IS_COPIED and not info["flags"] & dl.READ_ONLY
            assert info["data"] != a.ctypes.data and c.ctypes.data != a.ctypes.data
            c[0] = 7
            assert a[0] == 0
        else:
            assert not t.readonly and a.flags.writeable and b.flags.writeable
            # DLPack with copy=None: zero-copy, no READ_ONLY flag
            assert info["flags"] == 0 and info["data"] == a.ctypes.data, info
            assert c.ctypes.data == a.ctypes.data and c.flags.writeable
            a[0] = 5
            assert b.view(np.float32)[0] == 5 and c[0] == 5
            c[1] = 7
            assert a[1] == 7 and np.asarray(t)[1] == 7
            a[:] = -1  # every page copied
            # another load maps the file afresh: the original bytes
            assert np.array_equal(np.asarray(hurray.load({str(p)!r})["w"]), w)
        # memoryview: a Tensor is no buffer-protocol object
        try:
            memoryview(t)
            raise SystemExit("a Tensor exported the buffer protocol")
        except TypeError:
            pass
        assert pathlib.Path({str(p)!r}).read_bytes() == before
        back = hurray.load({str(p)!r}, mmap=False)["w"]
        assert np.asarray(back)[0] == 0
    """))


@pytest.mark.slow  # a child interpreter
@pytest.mark.skipif(not has("torch"), reason="PyTorch is not installed")
@pytest.mark.parametrize("mode", ["r", "c"])
def test_torch_writes_into_a_loaded_tensor_never_crash(tmp_path, mode):
    """PyTorch ignores DLPack's READ_ONLY flag: a read-only mapping ("r") reaches it as a
    copy; a copy-on-write one ("c", the default) zero-copy, and its in-place writes stay
    in this process."""
    p = tmp_path / "m.hrry"
    isolated(MAPS + textwrap.dedent(f"""
        import numpy as np, hurray, torch, pathlib
        mode = {mode!r}
        hurray.save({str(p)!r}, {{"w": hurray.from_numpy(np.arange(64, dtype=np.float32))}})
        before = pathlib.Path({str(p)!r}).read_bytes()
        t = hurray.load({str(p)!r}, mmap=mode)["w"]
        mapped = np.asarray(t).ctypes.data
        assert_in_mapping(mapped, {str(p)!r}, mode)
        x = torch.from_dlpack(t)
        x.add_(1)
        y = t.to_torch()
        y.mul_(2)
        if mode == "r":  # writes into copies, never into the mapping
            assert x.data_ptr() != mapped and y.data_ptr() != mapped
            assert float(x[0]) == 1 and float(y[0]) == 0 and np.asarray(t)[0] == 0
        else:  # zero-copy: one memory, the mapping's
            assert x.data_ptr() == mapped and y.data_ptr() == mapped
            assert float(x[0]) == 2 and float(y[1]) == 4 and np.asarray(t)[1] == 4
            y.fill_(-3.0)
            assert float(x.sum()) == -3.0 * 64
        assert pathlib.Path({str(p)!r}).read_bytes() == before
        assert np.asarray(hurray.load({str(p)!r}, mmap=False)["w"])[0] == 0
    """))


@pytest.mark.slow  # a child interpreter
@pytest.mark.skipif(not has("jax"), reason="JAX is not installed")
@pytest.mark.skipif(bool(os.environ.get("HURRAY_EXPECT_ASAN")),
                    reason="jaxlib aborts under the ASan preload of python_tests.sh --asan "
                           "(without hurray loaded too; as tests/python/test_jax.py)")
def test_jax_reads_a_loaded_tensor(tmp_path):
    p = tmp_path / "m.hrry"
    isolated(f"""
        import numpy as np, hurray, jax.numpy as jnp
        hurray.save({str(p)!r}, {{"w": hurray.from_numpy(np.arange(8, dtype=np.float32))}})
        t = hurray.load({str(p)!r})["w"]
        j = jnp.asarray(np.asarray(t))
        assert float(j.sum()) == 28.0
        import jax.dlpack
        k = jax.dlpack.from_dlpack(t)
        assert float(k[7]) == 7.0
    """)


# ---- 2. what torch cannot take is copied ------------------------------------------------

@pytest.mark.slow  # a child interpreter
@pytest.mark.skipif(not has("torch"), reason="PyTorch is not installed")
def test_negative_strides_reach_torch_as_a_copy():
    isolated("""
        import numpy as np, hurray, torch
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        for view in (a[::-1], a[:, ::-2], a[::-1, ::-1]):
            t = hurray.from_numpy(view)
            for x in (t.to_torch(), torch.from_dlpack(t)):
                assert np.array_equal(x.numpy(), view), (x, view)
    """)


# ---- 3, 4. forged DLPack capsules ---------------------------------------------------------

@pytest.mark.slow  # a child interpreter
def test_forged_capsules_are_refused_before_anything_is_read():
    isolated("""
        import numpy as np, hurray, dlpack_ctypes as dl
        a = np.zeros(64, dtype=np.float32)
        cases = [
            ("NULL data with elements", dict(data=0, shape=[4]), hurray.BufferError),
            ("NULL shape", dict(data=a, shape=[4], shape_null=True),
             hurray.InvalidDescriptorError),
            ("strides overflow in bytes", dict(data=a, shape=[2, 2], strides=[2**62 + 16, 1]),
             hurray.InvalidDescriptorError),
            ("strides whose bytes wrap to 0", dict(data=a, shape=[2, 2], strides=[2**62, 1]),
             hurray.InvalidDescriptorError),
            ("extent past 2**63", dict(data=a, shape=[3, 2], strides=[2**61, 1]),
             hurray.InvalidDescriptorError),
            ("negative reach below 0", dict(data=a, shape=[2], strides=[-(2**62)]),
             hurray.InvalidDescriptorError),
            ("byte_offset wraps", dict(data=a, shape=[4], byte_offset=2**64 - 8),
             hurray.InvalidDescriptorError),
            ("negative shape", dict(data=a, shape=[-4]), hurray.InvalidDescriptorError),
            ("count overflows", dict(data=a, shape=[2**40, 2**40]),
             hurray.InvalidDescriptorError),
            ("rank 65", dict(data=a, shape=[1] * 65), hurray.InvalidDescriptorError),
        ]
        for what, kw, exc in cases:
            for copy in (None, True, False):
                try:
                    hurray.from_dlpack(dl.forge(**kw), copy=copy)
                except exc:
                    continue
                raise SystemExit(f"{what} (copy={copy}) was accepted")
        # an empty tensor may have a NULL pointer
        t = hurray.from_dlpack(dl.forge(data=0, shape=[0, 3]))
        assert np.asarray(t).shape == (0, 3)
        # and a sound capsule still works, zero-copy (a 64-byte aligned buffer: NumPy's
        # own allocations are only 16-byte aligned on some builds)
        raw = np.zeros(16 * 4 + 64, dtype=np.uint8)
        skip = (-raw.ctypes.data) % 64
        b = raw[skip:skip + 64].view(np.float32)
        b[:] = np.arange(16, dtype=np.float32)
        t = hurray.from_dlpack(dl.forge(data=b, shape=[4, 4], strides=[4, 1]), copy=False)
        assert np.asarray(t).ctypes.data == b.ctypes.data
    """)


# ---- 5. dimensions of 2**63 and more ------------------------------------------------------

@pytest.mark.slow  # a child interpreter
def test_huge_dimensions_are_refused_at_the_numpy_and_dlpack_boundary():
    isolated("""
        import numpy as np, hurray
        t = hurray.Tensor(b"", "float32", (0, 2**63))
        for attempt in (lambda: np.asarray(t), lambda: t.__array_interface__,
                        lambda: t.__array_struct__, lambda: t.__dlpack__(max_version=(1, 0)),
                        lambda: np.from_dlpack(t)):
            try:
                attempt()
            except hurray.UnsupportedError as e:
                assert "2**63" in str(e) or "NumPy dimension" in str(e), e
                continue
            raise SystemExit("a dimension of 2**63 was exported")
        u = hurray.Tensor(b"", "float32", (0, 2**62, 4))  # strides overflow: refused too
        try:
            u.__dlpack__(max_version=(1, 0))
            raise SystemExit("an overflowing stride was exported")
        except hurray.UnsupportedError:
            pass
    """)


@pytest.mark.slow  # a child interpreter
@pytest.mark.skipif(not has("torch"), reason="PyTorch is not installed")
def test_huge_dimensions_never_reach_torch():
    isolated("""
        import hurray, torch
        t = hurray.Tensor(b"", "float32", (0, 2**63))
        for attempt in (t.to_torch, lambda: torch.from_dlpack(t)):
            try:
                attempt()
            except hurray.UnsupportedError:
                continue
            raise SystemExit("torch was handed a dimension of 2**63")
    """)


# ---- 6. aligned_allocator misuse -----------------------------------------------------------

@pytest.mark.slow  # a child interpreter
def test_aligned_allocator_misuse_is_refused_and_order_does_not_matter():
    isolated("""
        import numpy as np, hurray
        from numpy.lib import NumpyVersion
        if NumpyVersion(np.__version__) < "1.22.0":
            raise SystemExit(0)
        import numpy._core.multiarray as ma
        default = ma.get_handler_name()
        a, b = hurray.aligned_allocator(), hurray.aligned_allocator()
        a.__enter__(); b.__enter__()
        a.__exit__(None, None, None)            # out of order
        assert ma.get_handler_name() == "hurray_aligned_64"  # b is still active
        b.__exit__(None, None, None)
        assert ma.get_handler_name() == default  # nothing left installed
        try:
            b.__exit__(None, None, None)        # a second exit
            raise SystemExit("a second __exit__ was accepted")
        except RuntimeError:
            pass
        with a:
            with a:                             # the same manager twice
                pass
            assert ma.get_handler_name() == "hurray_aligned_64"
        assert ma.get_handler_name() == default
    """)


# ---- 7. killed saves leave nothing ------------------------------------------------------------

@pytest.mark.slow  # a child interpreter
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="unnamed temporary files are Linux")
def test_killed_saves_leave_no_temporary_files(tmp_path):
    target = tmp_path / "big.hrry"
    saver = textwrap.dedent(f"""
        import sys
        sys.path[:0] = {sys.path!r}
        import numpy as np, hurray
        w = hurray.from_numpy(np.ones(8 << 20, dtype=np.float32))  # 32 MiB
        while True:
            hurray.save({str(target)!r}, {{"w": w}}, durable=False)
            print("saved", flush=True)
    """)
    import random
    rng = random.Random(13)
    for _ in range(12):
        p = subprocess.Popen([sys.executable, "-c", saver], stdout=subprocess.PIPE)
        time.sleep(rng.uniform(0.3, 1.5))
        p.send_signal(signal.SIGKILL)
        p.wait()
    left = sorted(os.listdir(tmp_path))
    strays = [n for n in left if n != "big.hrry"]
    # A temporary gets a name only once complete, and is renamed over the target
    # at once: a kill can leave one only in the instant between those two calls,
    # and then it is a complete file, which remove_stale_temporaries removes.
    assert len(strays) <= 1, left
    for n in strays:
        assert n.startswith(".big.hrry.tmp-"), left
        assert hurray.load(tmp_path / n)["w"].shape == (8 << 20,)
        assert hurray.remove_stale_temporaries(tmp_path, min_age=0) == 1
    if target.exists():  # the target is a complete file whenever it exists
        assert hurray.load(target)["w"].shape == (8 << 20,)


def test_remove_stale_temporaries_removes_only_old_strays(tmp_path):
    stray = tmp_path / ".m.hrry.tmp-abcdef"
    young = tmp_path / ".n.hrry.tmp-ghijkl"
    other = tmp_path / ".m.hrry.tmp-notmine!"  # not a name the writer makes
    for f in (stray, young, other):
        f.write_bytes(b"x")
    old = time.time() - 7200
    os.utime(stray, (old, old))
    os.utime(other, (old, old))
    assert hurray.remove_stale_temporaries(tmp_path) == 1
    assert not stray.exists() and young.exists() and other.exists()
    assert hurray.remove_stale_temporaries(tmp_path, min_age=0) == 1
    assert not young.exists() and other.exists()
    with pytest.raises(ValueError):
        hurray.remove_stale_temporaries(tmp_path, min_age=-1)


# ---- 8. closing a stream reader from another thread ----------------------------------------

@pytest.mark.slow  # a child interpreter
@pytest.mark.skipif(sys.platform == "win32", reason="a blocked read is not woken on Windows")
def test_closing_wakes_a_reader_blocked_mid_frame_in_a_child():
    isolated("""
        import os, threading, time, numpy as np, hurray
        w = hurray.StreamWriter()
        w.write(hurray.from_numpy(np.arange(1000, dtype=np.float32)))
        data = w.getvalue()
        r, wr = os.pipe()
        reader = hurray.StreamReader(r)
        out = []
        def read():
            try:
                out.extend(reader)
            except hurray.StreamError as e:
                out.append(e)
        th = threading.Thread(target=read, daemon=True)
        th.start()
        os.write(wr, data[: len(data) // 2])
        time.sleep(0.2)
        reader.close()
        th.join(10)
        assert not th.is_alive() and isinstance(out[-1], hurray.StreamError), out
    """)


# ---- 9. KV sections that decode to many times their size -----------------------------------

@pytest.mark.slow  # a child interpreter
def test_kv_decoded_size_is_bounded(tmp_path):
    p = tmp_path / "kv.hrry"
    isolated(f"""
        import resource, numpy as np, hurray
        hurray.save({str(p)!r}, {{"w": hurray.zeros([1])}}, kv={{"flags": [True] * 40_000_000}})
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            hurray.load_kv({str(p)!r})   # 40 MB on disk, ~320 MB as a list
            raise SystemExit("the KV section was decoded past the default bound")
        except hurray.FileError as e:
            assert "max_kv_memory" in str(e), e
        with hurray.open({str(p)!r}) as f:
            assert len(f) == 1          # the tensors are still reachable
            try:
                f.kv
                raise SystemExit("File.kv decoded past the bound")
            except hurray.FileError:
                pass
        grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        assert grown_mib < 150, grown_mib  # refused before building anything
        small = hurray.load_kv({str(p)!r}, max_kv_memory=None)
        assert len(small["flags"]) == 40_000_000
        try:
            hurray.load_kv({str(p)!r}, max_kv_memory=1 << 20)
            raise SystemExit("a 1 MiB bound was not applied")
        except hurray.FileError:
            pass
    """, timeout=300)

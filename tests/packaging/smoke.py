"""Smoke check of an installed `hurray` distribution (a wheel, or a build from the sdist).

Run it with the interpreter the package was installed into, from outside the source tree
(tests/packaging/test_wheel.sh does, and so does cibuildwheel's test step):

    python -I tests/packaging/smoke.py [--no-optional-deps] [--expect-version X.Y.Z]

It proves that the package imports from site-packages (not from a source checkout), that
importing it pulls in none of the optional frameworks, and that the compiled core works:
a tensor is made, its descriptor is encoded, decoded and re-encoded byte for byte, an
invalid descriptor is refused with the C library's detail, and a DLPack capsule is
produced and a tensor consumed through DLPack; the `hurray` command and hurray-inspect are
installed in the scripts folder and run on a file. Exits non-zero with a message on the first failure.
"""

import argparse
import importlib.machinery
import importlib.metadata
import importlib.util
import pathlib
import platform
import sys
import sysconfig

OPTIONAL = ("numpy", "scipy", "torch", "jax", "ml_dtypes")


def check(cond, what):
    if not cond:
        raise SystemExit(f"smoke: FAILED: {what}")


def installed_dirs():
    paths = sysconfig.get_paths()
    return {pathlib.Path(paths[k]).resolve() for k in ("purelib", "platlib")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-optional-deps", action="store_true",
                    help="also require that none of the optional frameworks is installed")
    ap.add_argument("--expect-version", help="the distribution version the wheel must carry")
    args = ap.parse_args()

    if args.no_optional_deps:
        present = [m for m in OPTIONAL if importlib.util.find_spec(m) is not None]
        check(not present, f"the environment is not clean: {present} installed")

    import hurray
    import hurray._hurray as ext

    pkg = pathlib.Path(hurray.__file__).resolve().parent
    check(pkg.parent in installed_dirs(),
          f"hurray was imported from {pkg}, not from this interpreter's site-packages")
    ext_path = pathlib.Path(ext.__file__)
    check(ext_path.parent.resolve() == pkg, f"extension module outside the package: {ext_path}")
    check(ext_path.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)),
          f"{ext_path.name} is not an extension module for this interpreter")
    check((pkg / "py.typed").is_file(), "py.typed is missing")

    dist_version = importlib.metadata.version("hurray")
    check(hurray.__version__ == dist_version,
          f"compiled version {hurray.__version__} != distribution version {dist_version}")
    if args.expect_version:
        check(dist_version == args.expect_version,
              f"distribution version {dist_version} != expected {args.expect_version}")
    requires = importlib.metadata.metadata("hurray")["Requires-Python"]
    check(requires == ">=3.10", f"Requires-Python is {requires!r}")
    check(isinstance(hurray.C_ABI_VERSION, int) and hurray.C_ABI_VERSION > 0,
          f"C_ABI_VERSION is {hurray.C_ABI_VERSION!r}")

    loaded = [m for m in OPTIONAL if m in sys.modules]
    check(not loaded, f"`import hurray` imported optional frameworks: {loaded}")

    # A tensor, and its descriptor through the wire and back.
    t = hurray.full([2, 3], 1.5, dtype=hurray.float32)
    check(t.shape == (2, 3) and t.dtype is hurray.float32, f"tensor is {t!r}")
    d = t.descriptor
    wire = d.encode()
    check(isinstance(wire, bytes) and len(wire) == d.encoded_len, "encode() length")
    check(wire[:4] == b"HRRY", f"descriptor magic is {wire[:4]!r}")
    back = hurray.Descriptor.decode(wire + b"\x00" * 16)
    check(back == d, "decoded descriptor differs from the original")
    check(back.encode() == wire, "re-encoding is not byte-identical")
    check(back.shape == (2, 3) and back.dtype is hurray.float32 and back.version == (1, 0),
          f"decoded descriptor is {back!r}")

    # An invalid descriptor is refused with the C library's detail.
    try:
        hurray.Descriptor.decode(b"XXXX" + bytes(40))
    except hurray.InvalidDescriptorError as e:
        check(e.status == "ERR_INVALID_MAGIC" and e.field == "magic" and e.offset == 0,
              f"bad-magic error carries {(e.status, e.field, e.offset)}")
    else:
        check(False, "a descriptor with a bad magic was accepted")

    # DLPack: a versioned capsule out, and a tensor back in sharing the same buffer.
    cap = t.__dlpack__(max_version=(1, 1))
    check(type(cap).__name__ == "PyCapsule", f"__dlpack__ returned {type(cap)!r}")
    check(t.__dlpack_device__() == (1, 0), f"__dlpack_device__ is {t.__dlpack_device__()}")
    u = hurray.from_dlpack(t)
    check(u.shape == t.shape and u.dtype is t.dtype, f"from_dlpack gave {u!r}")
    h = u.buffer_handles[0]
    check(h.byte_size == 24 and h.alignment >= 64, f"from_dlpack buffer is {h!r}")

    # The programs the wheel installs: the `hurray` command (a console script) and
    # hurray-inspect (a compiled program in the scripts folder), both on a .hrry file.
    import os
    import subprocess
    import tempfile
    scripts = pathlib.Path(sysconfig.get_path("scripts"))
    exe = ".exe" if os.name == "nt" else ""
    for prog in ("hurray", "hurray-inspect"):
        check((scripts / (prog + exe)).is_file(), f"{prog} is not installed in {scripts}")
    with tempfile.TemporaryDirectory() as d:
        f = pathlib.Path(d) / "t.hrry"
        hurray.save(f, {"t": t}, kv={"k": "v"})
        r = subprocess.run([str(scripts / ("hurray-inspect" + exe)), "--brief", str(f)],
                           capture_output=True, text=True)
        check(r.returncode == 0 and ".hrry container" in r.stdout,
              f"hurray-inspect --brief failed ({r.returncode}): {r.stderr or r.stdout}")
        env = dict(os.environ, HURRAY_INSPECT=str(scripts / ("hurray-inspect" + exe)))
        r = subprocess.run([str(scripts / ("hurray" + exe)), "inspect", str(f), "--brief"],
                           capture_output=True, text=True, env=env)
        check(r.returncode == 0 and ".hrry container" in r.stdout,
              f"hurray inspect failed ({r.returncode}): {r.stderr}")
        r = subprocess.run([str(scripts / ("hurray" + exe)), "--help"], capture_output=True,
                           text=True)
        check(r.returncode == 0 and "convert" in r.stdout, f"hurray --help: {r.stderr}")

    print(f"smoke: ok: hurray {dist_version} (C ABI {hurray.C_ABI_VERSION}) from {pkg} on "
          f"CPython {platform.python_version()} {sysconfig.get_platform()}")


if __name__ == "__main__":
    main()

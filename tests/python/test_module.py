"""Module surface: exceptions (docs/internals/decisions.md § Exceptions), the status table mapping, constants,
buffer_size_bytes and layout_tag_kind."""

import builtins
import inspect
import struct

import pytest

import hurray


def test_exception_hierarchy():
    assert issubclass(hurray.InvalidDescriptorError, ValueError)
    assert issubclass(hurray.BufferError, ValueError)
    assert issubclass(hurray.CopyRequiredError, ValueError)
    assert issubclass(hurray.UnsupportedError, NotImplementedError)
    assert issubclass(hurray.InternalError, RuntimeError)
    assert issubclass(hurray.FileError, OSError)
    assert issubclass(hurray.StreamError, OSError)
    assert hurray.BufferError is not builtins.BufferError
    assert not issubclass(hurray.BufferError, builtins.BufferError)
    for exc in (hurray.InvalidDescriptorError, hurray.BufferError, hurray.UnsupportedError,
                hurray.InternalError, hurray.FileError, hurray.StreamError):
        assert exc.__module__ == "hurray"


def test_status_becomes_exception_with_detail():
    # A C-library failure carries the library's detail: status, field, offset.
    with pytest.raises(hurray.InvalidDescriptorError) as ei:
        hurray.Descriptor.decode(b"XXXX" + bytes(40))
    e = ei.value
    assert e.status == "ERR_INVALID_MAGIC"
    assert e.field
    assert e.offset == 0
    assert str(e).startswith("Descriptor.decode: ")


def test_status_table_classes():
    # Different statuses reach different classes through the one table.
    enc = hurray.zeros([2], dtype=hurray.float32).descriptor.encode()
    bad_version = enc[:4] + bytes([9]) + enc[5:]
    with pytest.raises(hurray.InvalidDescriptorError) as ei:
        hurray.Descriptor.decode(bad_version)
    assert ei.value.status == "ERR_VERSION_MISMATCH"


def test_constants():
    assert hurray.MIN_BUFFER_ALIGNMENT == 64
    assert hurray.PAGE_ALIGNMENT == 4096
    assert hurray.MAX_RANK == 64
    assert isinstance(hurray.__version__, str)


@pytest.mark.parametrize("name,count,expected", [
    ("float32", 10, 40), ("float64", 3, 24), ("uint8", 0, 0), ("bool", 1, 1),
    ("bool", 8, 1), ("bool", 9, 2), ("bool", 10, 2), ("int4", 3, 2), ("int4", 4, 2),
    ("uint2", 5, 2), ("int2", 4, 1), ("float4_e2m1", 5, 3), ("float6_e2m3", 1, 3),
    ("float6_e3m2", 4, 3), ("float6_e2m3", 5, 6), ("float8_e4m3", 7, 7),
    ("complex128", 2, 32), ("float128", 1, 16), ("bfloat16", 3, 6),
])
def test_buffer_size_bytes(name, count, expected):
    assert hurray.buffer_size_bytes(hurray.Dtype.from_name(name), count) == expected
    assert hurray.buffer_size_bytes(name, count) == expected


def test_buffer_size_bytes_is_not_bit_width_arithmetic():
    # count * bit_width // 8 is wrong for every sub-byte type
    i4 = hurray.dtype.int4
    assert hurray.buffer_size_bytes(i4, 3) != 3 * i4.bit_width // 8


def test_buffer_size_bytes_errors():
    with pytest.raises(ValueError):
        hurray.buffer_size_bytes(hurray.float32, -1)
    with pytest.raises(TypeError):
        hurray.buffer_size_bytes(hurray.float32, 1.5)
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.buffer_size_bytes("nope", 1)
    with pytest.raises(hurray.UnsupportedError):
        hurray.buffer_size_bytes(hurray.Dtype.from_tag(0xF1), 4)
    with pytest.raises(ValueError):  # overflow of u64: ERR_INVALID_ARGUMENT -> ValueError
        hurray.buffer_size_bytes(hurray.float64, 2**63)
    assert hurray.buffer_size_bytes(hurray.uint8, 2**64 - 2) == 2**64 - 2


def test_layout_tag_kind_partitions_the_byte_space():
    kinds = [hurray.layout_tag_kind(t) for t in range(256)]
    assert set(kinds) == {"named", "reserved", "private", "invalid"}
    assert kinds[0x00] == kinds[0xFF] == "invalid"
    assert all(kinds[t] == "named" for t in list(range(0x01, 0x0C)) + [0x40])
    assert all(kinds[t] == "private" for t in range(0xF0, 0xFF))
    assert kinds[0x0C] == kinds[0x3F] == kinds[0x41] == kinds[0xEF] == "reserved"
    with pytest.raises(ValueError):
        hurray.layout_tag_kind(256)


def test_docstrings_carry_signatures():
    assert str(inspect.signature(hurray.buffer_size_bytes)) == "(dtype, count)"
    assert "copy" in str(inspect.signature(hurray.from_numpy))
    assert "max_version" in str(inspect.signature(hurray.Tensor.__dlpack__))
    assert str(inspect.signature(hurray.Tensor)).startswith("(buffer, dtype, shape, device=None, *")
    for f in (hurray.zeros, hurray.ones, hurray.empty, hurray.full, hurray.from_dlpack,
              hurray.from_torch, hurray.layout_tag_kind, hurray.Device, hurray.Dtype.from_tag,
              hurray.Dtype.from_name, hurray.Descriptor.decode, hurray.Descriptor.encode,
              hurray.Tensor.buffer, hurray.Tensor.__array__, hurray.Tensor.to_torch,
              hurray.Tensor.__dlpack_device__, hurray.asarray):
        inspect.signature(f)  # raises ValueError when the docstring has none


def test_no_array_api_namespace():
    t = hurray.Tensor(struct.pack("2f", 1, 2), hurray.float32, [2])
    assert not hasattr(t, "__array_namespace__")
    assert not hasattr(hurray, "__array_namespace_info__")


def test_stubs_cover_the_public_surface():
    import ast
    import pathlib

    pkg = pathlib.Path(hurray.__file__).parent
    names = set()
    for stub in ("__init__.pyi", "_hurray.pyi"):
        tree = ast.parse((pkg / stub).read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                names.add(node.name)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name)
    missing = [n for n in hurray.__all__ if n not in names]
    assert not missing
    assert (pkg / "py.typed").is_file()


def _stub_parameters(fn):
    """(name, kind, default) of each parameter of a stub's `def` (defaults are literals)."""
    import ast

    a = fn.args
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    out = []
    for i, (p, d) in enumerate(zip(pos, defaults)):
        kind = "POSITIONAL_ONLY" if i < len(a.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        out.append((p.arg, kind, inspect.Parameter.empty if d is None else ast.literal_eval(d)))
    if a.vararg is not None:
        out.insert(len(pos), (a.vararg.arg, "VAR_POSITIONAL", inspect.Parameter.empty))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((p.arg, "KEYWORD_ONLY", inspect.Parameter.empty if d is None else
                    ast.literal_eval(d)))
    if a.kwarg is not None:
        out.append((a.kwarg.arg, "VAR_KEYWORD", inspect.Parameter.empty))
    return out


def test_stub_signatures_match_the_runtime():
    """Every module-level function of the stubs has the runtime's parameters:
    names, kinds (positional-only, keyword-only) and defaults."""
    import ast
    import pathlib

    pkg = pathlib.Path(hurray.__file__).parent
    checked = 0
    for stub, module in (("_hurray.pyi", hurray._hurray), ("__init__.pyi", hurray)):
        for node in ast.parse((pkg / stub).read_text()).body:
            if not isinstance(node, ast.FunctionDef):
                continue
            runtime = inspect.signature(getattr(module, node.name))
            got = [(p.name, p.kind.name, p.default) for p in runtime.parameters.values()]
            assert got == _stub_parameters(node), (stub, node.name)
            checked += 1
    assert checked >= 20


# The binding's own table from C status to exception class (python/hurray/__init__.py's
# docstring, "Errors"); the C library's status table names no Python class.
STATUS_CLASSES = {
    -1: "InvalidDescriptorError", -2: "InvalidDescriptorError", -3: "InvalidDescriptorError",
    -4: "InvalidDescriptorError", -5: "BufferError", -6: "InternalError", -7: "InternalError",
    -8: "InvalidDescriptorError", -9: "BufferError", -10: "InternalError", -11: IndexError,
    -12: "InvalidDescriptorError", -13: "InvalidDescriptorError", -14: "BufferError",
    -15: "BufferError", -16: "InvalidDescriptorError", -17: "InvalidDescriptorError",
    -18: "UnsupportedError", -19: MemoryError, -20: "FileError", -21: "FileError",
    -22: "FileError", -23: "FileError", -24: KeyError, -25: "FileError", -26: "StreamError",
    -27: "StreamError", -28: "StreamError", -29: ValueError, -30: ValueError,
    -31: "InvalidDescriptorError", -32: "InvalidDescriptorError",
    -33: "StreamError",  # HURRAY_ERR_PROTOCOL: the network transport
}


@pytest.mark.parametrize("code", sorted(STATUS_CLASSES))
def test_every_status_raises_its_documented_class(code):
    want = STATUS_CLASSES[code]
    want = getattr(hurray, want) if isinstance(want, str) else want
    assert hurray._hurray._exception_for(code) is want


def test_unknown_statuses_are_internal_errors():
    for code in (0, 1, -34, -1000):
        assert hurray._hurray._exception_for(code) is hurray.InternalError


def test_exceptions_carry_the_reason_apart_from_field_and_offset():
    with pytest.raises(hurray.InvalidDescriptorError) as ei:
        hurray.Descriptor.decode(b"XXXX" + bytes(40))
    e = ei.value
    assert e.reason and e.reason in str(e)
    assert e.field not in e.reason and "at byte" not in e.reason
    # an error raised with a message only has the attributes too (None)
    assert hurray.InvalidDescriptorError("x").reason is None

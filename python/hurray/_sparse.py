"""Array-shaped sparse constructors and SciPy interop (cold paths).

A sparse tensor is an ordinary hurray.Tensor whose layout is COO, CSR or CSC:
these helpers only turn arrays into the buffers and the layout the Tensor
constructor takes. Every rule (the three validation tiers, the index-buffer
invariants, the per-buffer copy policy) runs in C inside hurray.Tensor.

Index buffers are uint64 on the wire (coo.md, csr.md, csc.md). An int64 or
uint64 index array is shared as is (an int64 array holds the same bits for
every valid index; a negative entry reads as an index >= 2**63, which the
bounds check rejects); int32 arrays (SciPy's default) are widened into a new
uint64 array, which copy=False refuses.
"""

from __future__ import annotations

from ._hurray import (
    BufferError,
    CooLayout,
    CscLayout,
    CsrLayout,
    Dtype,
    InvalidDescriptorError,
    Tensor,
    UnsupportedError,
    _coo_lexsorted,
)


def _numpy():
    try:
        import numpy
    except ImportError:
        raise UnsupportedError("sparse construction needs NumPy") from None
    return numpy


def _copy_refused(ctx, what, why):
    return BufferError(f"{ctx}: {what} {why}, which needs a copy, and copy=False forbids it")


def _index_buffer(np, arr, ctx, what, copy):
    """A C-contiguous uint64 array holding the entries of `arr`."""
    arr = np.asarray(arr)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{ctx}: {what} must hold integers, not {arr.dtype}")
    native = arr.dtype.isnative or arr.dtype.itemsize == 1
    if arr.dtype.itemsize == 8 and native:
        if not arr.flags.c_contiguous:
            if copy is False:
                raise _copy_refused(ctx, what, "is not contiguous")
            arr = np.ascontiguousarray(arr)
        return arr.view(np.uint64)
    if copy is False:
        raise _copy_refused(ctx, what, f"is {arr.dtype} and Hurray index buffers are uint64")
    if arr.dtype.kind == "i" and arr.size and int(arr.min()) < 0:
        raise InvalidDescriptorError(f"{ctx}: {what} holds a negative index")
    return np.ascontiguousarray(arr, dtype=np.uint64)


def _values_buffer(np, values, ctx, copy):
    """(buffer, Dtype) for a 1-D array of stored values."""
    v = np.asarray(values)
    if v.ndim != 1:
        raise InvalidDescriptorError(f"{ctx}: values must be 1-D, got shape {v.shape}")
    name = v.dtype.name
    if name in ("float128", "complex256", "longdouble", "clongdouble"):
        # NumPy's long double is the platform's extended type, not IEEE binary128
        raise UnsupportedError(f"{ctx}: values of dtype {v.dtype} have no Hurray type")
    try:
        dtype = Dtype.from_name(name)
    except InvalidDescriptorError:
        raise UnsupportedError(f"{ctx}: values of dtype {v.dtype} have no Hurray type") from None
    if not (v.dtype.isnative or v.dtype.itemsize == 1):
        raise UnsupportedError(
            f"{ctx}: values are in non-native byte order; convert them with "
            "values.astype(values.dtype.newbyteorder('='))")
    if name == "bool":  # Hurray packs bool 8 per byte, LSB first
        if copy is False:
            raise _copy_refused(ctx, "values", "are bool (bit-packed in Hurray)")
        return np.packbits(v, bitorder="little"), dtype
    if not v.flags.c_contiguous:
        if copy is False:
            raise _copy_refused(ctx, "values", "are not contiguous")
        v = np.ascontiguousarray(v)
    # A byte view exports a plain buffer whatever the element type (ml_dtypes too).
    return v.view(np.uint8), dtype


def _lexsorted(idx):
    """True when the rows of idx (a C-contiguous uint64 [nnz, rank] array) strictly
    increase lexicographically: one scan in C, which stops at the first row out of
    order, with no temporary array (the Tensor's own index check then verifies a
    True, as it verifies any is_sorted=True)."""
    return _coo_lexsorted(idx, idx.shape[0], idx.shape[1])


def _static_shape(shape, ctx):
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    for i, d in enumerate(shape):
        if d is None:
            raise InvalidDescriptorError(
                f"{ctx}: shape[{i}] is dynamic (None); a sparse tensor's index buffers are "
                "checked against every extent")
    return shape


def sparse_coo(values, indices, shape, *, is_sorted=None, copy=None):
    """sparse_coo(values, indices, shape, *, is_sorted=None, copy=None)

    A COO tensor from a 1-D array of stored values and an [nnz, rank] array
    of coordinates. nnz is the number of coordinate rows. is_sorted=None
    states whether the coordinates are in strictly increasing lexicographic
    order by looking at them; True or False states it (True is checked).
    Buffers are shared where the copy policy allows (see hurray.Tensor).
    """
    ctx = "sparse_coo"
    np = _numpy()
    shape = _static_shape(shape, ctx)
    idx = np.asarray(indices)
    if idx.ndim != 2 or idx.shape[1] != len(shape):
        raise InvalidDescriptorError(
            f"{ctx}: indices must have shape [nnz, rank] = [nnz, {len(shape)}], got {idx.shape}")
    nnz = idx.shape[0]
    vals, dtype = _values_buffer(np, values, ctx, copy)
    if np.asarray(values).shape[0] != nnz:
        raise InvalidDescriptorError(
            f"{ctx}: values has {np.asarray(values).shape[0]} entries, indices {nnz} rows")
    idx = _index_buffer(np, idx, ctx, "indices", copy)
    if is_sorted is None:
        is_sorted = _lexsorted(idx)
    return Tensor(vals, dtype, shape, aux_buffers=[idx], layout=CooLayout(nnz, is_sorted=is_sorted),
                  copy=copy)


_HINT = {
    "csr": " (SciPy: call matrix.sum_duplicates() and matrix.sort_indices() first)",
    "csc": " (SciPy: call matrix.sum_duplicates() and matrix.sort_indices() first)",
    "coo": " (SciPy: call matrix.sum_duplicates() first)",
}


def from_scipy(matrix, /, *, copy=None):
    """from_scipy(matrix, /, *, copy=None)

    A hurray.Tensor from a scipy.sparse matrix or array in CSR, CSC or COO
    format. The values are shared; index arrays are shared when they are
    int64 or uint64 and widened (a copy) when they are int32. A COO matrix's
    row and column arrays are always interleaved into one [nnz, rank] buffer,
    so copy=False refuses COO. Duplicate or unsorted entries are refused
    (InvalidDescriptorError), never fixed.
    """
    np = _numpy()
    fmt = getattr(matrix, "format", None)
    if fmt not in ("csr", "csc", "coo"):
        raise UnsupportedError(
            f"from_scipy: {type(matrix).__name__} (format {fmt!r}) is not supported; convert it "
            "with .tocsr(), .tocsc() or .tocoo()")
    ctx = f"from_scipy ({fmt})"
    shape = tuple(int(d) for d in matrix.shape)
    nnz = int(matrix.nnz)
    try:
        if fmt == "coo":
            coords = getattr(matrix, "coords", None)
            if coords is None:
                coords = (matrix.row, matrix.col)
            if copy is False:
                raise _copy_refused(
                    ctx, "the coordinates", "are separate arrays per dimension and Hurray "
                    "interleaves them in one [nnz, rank] buffer")
            idx = np.empty((nnz, len(coords)), dtype=np.uint64)
            for d, c in enumerate(coords):
                c = np.asarray(c)
                if c.dtype.kind == "i" and c.size and int(c.min()) < 0:
                    raise InvalidDescriptorError(f"{ctx}: coordinate {d} holds a negative index")
                idx[:, d] = c[:nnz]
            vals, dtype = _values_buffer(np, matrix.data[:nnz], ctx, copy)
            layout = CooLayout(nnz, is_sorted=_lexsorted(idx))
            return Tensor(vals, dtype, shape, aux_buffers=[idx], layout=layout, copy=copy)
        if len(shape) != 2:
            raise InvalidDescriptorError(f"{ctx}: a {fmt} matrix has rank 2, not {len(shape)}")
        vals, dtype = _values_buffer(np, matrix.data, ctx, copy)
        idx = _index_buffer(np, matrix.indices, ctx, "indices", copy)
        ptr = _index_buffer(np, matrix.indptr, ctx, "indptr", copy)
        layout = CsrLayout(nnz) if fmt == "csr" else CscLayout(nnz)
        return Tensor(vals, dtype, shape, aux_buffers=[idx, ptr], layout=layout, copy=copy)
    except InvalidDescriptorError as e:
        if getattr(e, "status", None) == "ERR_INVALID_INDEX_DATA":
            e.args = (str(e) + _HINT[fmt],)
        raise


def to_scipy(t):
    """The scipy.sparse matrix of a CSR, CSC or COO tensor (Tensor.to_scipy)."""
    name = t.layout.name
    if name not in ("csr", "csc", "coo"):
        raise UnsupportedError(
            f"to_scipy: a {name} tensor has no scipy.sparse counterpart (CSR, CSC and COO do)")
    if t.quantization is not None:
        raise UnsupportedError("to_scipy: SciPy has no quantized element types")
    np = _numpy()
    try:
        import scipy.sparse as sp
    except ImportError:
        raise UnsupportedError("to_scipy needs SciPy (pip install scipy)") from None
    shape = t.shape
    if any(d is None for d in shape):
        raise UnsupportedError("to_scipy: a dynamic dimension has no SciPy counterpart")
    values = np.asarray(t.values)  # a view (a copy for bool)

    def signed(view):  # SciPy indexes with signed integers: same bits, no copy
        return np.asarray(view).view(np.int64)

    # The matrices are built empty and then given the arrays: SciPy's
    # constructors would narrow int64 indices that fit in int32 (a copy).
    if name == "coo":
        idx = signed(t.indices)
        if len(shape) == 2:
            m = sp.coo_matrix(shape, dtype=values.dtype)
        else:
            m = sp.coo_array(shape, dtype=values.dtype)
        m.coords = tuple(idx[:, d] for d in range(len(shape)))
        m.data = values
        return m
    if name == "csr":
        m = sp.csr_matrix(shape, dtype=values.dtype)
        m.indices, m.indptr = signed(t.col_indices), signed(t.row_ptr)
    else:
        m = sp.csc_matrix(shape, dtype=values.dtype)
        m.indices, m.indptr = signed(t.row_indices), signed(t.col_ptr)
    m.data = values
    return m

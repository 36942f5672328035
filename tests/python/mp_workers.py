"""Worker functions and datasets for the multiprocessing, DataLoader, Ray and Dask
tests: an importable module (not a test file), so that spawn and forkserver
children, Ray workers and Dask workers can import what they run."""

import numpy as np

import hurray


def dense(n=1000, seed=0):
    return hurray.from_numpy(np.arange(n, dtype=np.float32) + seed)


def kinds(seed=0):
    """name -> one tensor of each kind the cluster tests move: dense, int4 per-block
    quantized, CSR, composite."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(256).astype(np.float32)
    values = np.arange(3, dtype=np.float32) + seed
    csr = hurray.Tensor([values, np.array([0, 2, 1], np.uint64), np.array([0, 2, 3], np.uint64)],
                        "float32", (2, 3), layout=hurray.CsrLayout(nnz=3))
    tiles = [hurray.Tensor(np.full((2, 4), k + seed, np.float32), "float32", (2, 4),
                           shard=hurray.Shard((4, 4), (2 * k, 0))) for k in range(2)]
    return {
        "dense": dense(1000, seed),
        "int4": hurray.quantize(x, "int4", block_size=32),
        "csr": csr,
        "composite": hurray.Composite("partition", (4, 4), "float32", tiles),
    }


def fingerprint(t):
    """What a tensor or composite is, as plain Python values: its descriptor
    (every field, the declared alignment included: a round trip keeps it) and
    every buffer's bytes."""
    if isinstance(t, hurray.Composite):
        return ("composite", t.composition_rule, t.shape, t.dtype.name,
                tuple(fingerprint(m) for m in t.members))
    return ("tensor", t.dtype.name, t.shape, repr(t.layout), repr(t.quantization),
            repr(t.shard), t.byte_offset, repr(t.device), t.descriptor.encode(),
            tuple(np.asarray(t.buffer(i)).tobytes() for i in range(t.buffer_count)))


def checksum(t):
    return float(np.asarray(t, dtype=np.float64).sum())


def double(t):
    return hurray.from_numpy(np.asarray(t) * 2)


def echo(t):
    return t


def fail(t):
    raise ValueError(f"boom in a worker (got a tensor of shape {t.shape})")


def closed_file(path):
    """Something that cannot be pickled back to the parent."""
    f = hurray.open(path)
    f.close()
    return f


def put_tensors(q, n):
    for k in range(n):
        q.put(dense(1000, k))
    q.put(None)


def sum_bytes(t):
    """The sum of every byte of t's buffers (any kind)."""
    if isinstance(t, hurray.Composite):
        return sum(sum_bytes(m) for m in t.members)
    return int(sum(int(np.asarray(t.buffer(i)).sum(dtype=np.uint64))
                   for i in range(t.buffer_count)))


def pick(d, key):
    return d[key]


def worker_address():
    """The Dask worker running this task."""
    from distributed import get_worker
    return get_worker().address


class Holder:
    """An actor (Ray) keeping a tensor it was given."""

    def __init__(self, t):
        self.t = t

    def get(self):
        return self.t

    def swap(self, t):
        old, self.t = self.t, t
        return old

    def fingerprint(self):
        return fingerprint(self.t)


def mapping_of(address):
    """The line of /proc/self/maps holding `address` (Linux), or None."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                if lo <= address < hi:
                    return line.strip()
    except OSError:
        return None
    return None

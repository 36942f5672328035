"""The aligned-frames experiment of bench/processes.py (figure (c'), docs/processes.md
§ Figures): a Dask worker preload (``LocalCluster(preload=["bench_dask_aligned"])``,
imported by the client too) that makes a hurray tensor arrive in 64-byte-aligned
frames, so the receiving worker wraps them instead of copying. Not part of hurray:
it measures what that would buy.

- NumPy's allocator is hurray.aligned_allocator() for the rest of the worker's main
  task, entered when the preload is imported (in Worker.__init__): every task and
  callback the worker creates later copies that context, and Dask's comm allocates
  its receive buffers with numpy.empty.
- Each buffer of a tensor travels in a frame of its own: Dask reads a message's
  first uncompressed frame together with the header (at whatever offset the header
  leaves) unless another uncompressed object comes first, so a one-byte bytearray
  frame comes first; compression False keeps Dask from cutting a frame into 64 MiB
  shards (read into separate buffers, they would be joined by a copy).
- Box: a NumPy array sent with the same frames, to tell what the frame layout costs
  from what hurray costs.
"""
import pickle

import numpy as np
from distributed.protocol import dask_deserialize, dask_serialize

import hurray

_ALIGNED = hurray.aligned_allocator()
_ALIGNED.__enter__()  # for this context and every one copied from it (see above)
wrapped = []  # per received tensor: did it wrap the frame it came in (no copy)?


class Box:
    """A NumPy array that travels in the frames a tensor travels in here."""

    def __init__(self, a):
        self.a = a


def _frames(head, buffers):
    frames = [head, memoryview(bytearray(1))] + [memoryview(b).cast("B") for b in buffers]
    return {"compression": (False,) * len(frames)}, frames


@dask_serialize.register(hurray.Tensor)
def _tensor_frames(t):
    buffers = []
    head = pickle.dumps(t, protocol=5, buffer_callback=buffers.append)
    return _frames(head, buffers)


@dask_deserialize.register(hurray.Tensor)
def _tensor_from_frames(header, frames):
    t = pickle.loads(frames[0], buffers=frames[2:])
    if len(frames) > 2 and memoryview(frames[2]).nbytes:
        wrapped.append(t.data_ptr() == np.frombuffer(frames[2], np.uint8).ctypes.data)
    return t


@dask_serialize.register(Box)
def _box_frames(box):
    return _frames(b"", [box.a])


@dask_deserialize.register(Box)
def _box_from_frames(header, frames):
    return Box(np.frombuffer(frames[2], np.uint8))


def make_box(nbytes, seed):
    import bench_workers
    return Box(bench_workers.make("numpy", nbytes, seed))


def received(x):
    """(bytes, whether the last tensor received here wrapped its frame)."""
    if isinstance(x, Box):
        return x.a.nbytes, None
    if isinstance(x, np.ndarray):
        return x.nbytes, None
    return x.buffer_handles[0].byte_size, wrapped[-1] if wrapped else None

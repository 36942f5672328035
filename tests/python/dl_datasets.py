"""Datasets for the DataLoader tests: an importable module, so that spawn
workers can import them (torch is imported here only, not by mp_workers)."""

import numpy as np
import torch.utils.data

import hurray


class Samples(torch.utils.data.Dataset):
    """Sample i: (a dense hurray tensor filled with i, an int4 quantized one, i)."""

    def __init__(self, n=16):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = np.full(64, i, dtype=np.float32)
        return hurray.from_numpy(x), hurray.quantize(x, "int4", block_size=32), i


class Failing(Samples):
    def __getitem__(self, i):
        if i == 5:
            raise ValueError("boom in a DataLoader worker")
        return super().__getitem__(i)


class DeviceMemory(Samples):
    """Sample i: a tensor whose buffer is device memory handed over by a foreign
    producer (capi.Producer): it cannot be pickled back to the parent."""

    def __getitem__(self, i):
        import capi
        import samples
        decl = hurray.Tensor(samples.buf(16, 5), "float32", (4,), device=hurray.Device("cuda"))
        prod = capi.Producer()
        cap, _, _ = prod.capsule(decl.descriptor.encode(), [b"\1" * 16], device=0x01)
        self.keep = prod
        return hurray.from_hurray(cap)

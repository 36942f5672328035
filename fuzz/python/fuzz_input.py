"""Reading fuzz inputs: each choice a target makes takes the next byte(s) of the
input, and an exhausted input reads zeros. The same decoding runs under atheris
and when the corpus is replayed (tests/python/test_fuzz_corpus.py), so a saved
input always means the same case."""


class Input:
    def __init__(self, data):
        self.data = bytes(data)
        self.pos = 0

    def u8(self):
        if self.pos >= len(self.data):
            return 0
        b = self.data[self.pos]
        self.pos += 1
        return b

    def uint(self, nbytes):
        v = 0
        for _ in range(nbytes):
            v = (v << 8) | self.u8()
        return v

    def bit(self):
        return bool(self.u8() & 1)

    def chance(self, num, den):
        """True with probability num/den over the byte's values."""
        return self.u8() % den < num

    def pick(self, options):
        return options[self.u8() % len(options)]

    def small(self, lo, hi):
        """An int in [lo, hi]."""
        return lo + self.u8() % (hi - lo + 1)

    def take(self, n):
        """Up to n raw bytes."""
        chunk = self.data[self.pos:self.pos + n]
        self.pos += len(chunk)
        return chunk

    def rest(self):
        return self.take(len(self.data))


def instrument_hurray(atheris):
    """Instruments, for atheris' coverage, every function of hurray's own
    modules loaded so far (not torch's or NumPy's)."""
    import inspect
    import sys
    for name, mod in list(sys.modules.items()):
        if not (name == "hurray" or name.startswith("hurray.")) or mod is None:
            continue
        for obj in list(vars(mod).values()):
            funcs = [obj] if inspect.isfunction(obj) else (
                [f for f in vars(obj).values() if inspect.isfunction(f)]
                if inspect.isclass(obj) and obj.__module__ == name else [])
            for f in funcs:
                if f.__module__ == name:
                    atheris.instrument_func(f)

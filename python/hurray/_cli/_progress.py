"""Progress of long work: tqdm's bar on a terminal when tqdm is installed
(the optional dependency `hurray[cli]`), a one-line counter on a terminal
without it, nothing when standard error is not a terminal or with --quiet."""

from __future__ import annotations

import sys
import time
from typing import Any


class Progress:
    def __init__(self, total: int, desc: str, quiet: bool = False, stream: Any = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        self.bar: Any = None
        self.plain = False
        self.last = 0.0
        isatty = getattr(self.stream, "isatty", lambda: False)()
        if quiet or not isatty:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            self.plain = True
            self.desc = desc
            return
        # the sizes go in the text after the bar, in the command's one unit system
        # (KiB, MiB, GiB: _size), not tqdm's own ("MB" for 1024**2 bytes)
        self.bar = tqdm(total=total, desc=desc, file=self.stream, leave=False,
                        unit=self._sizes(), bar_format="{desc}: {percentage:3.0f}%|{bar}| {unit}")

    def update(self, n: int, what: str = "") -> None:
        self.done += n
        if self.bar is not None:
            self.bar.unit = self._sizes() + (f" {what[-40:]}" if what else "")
            self.bar.update(n)
        elif self.plain:
            now = time.monotonic()
            if now - self.last >= 0.2 or self.done >= self.total:
                self.last = now
                pct = 100.0 * self.done / self.total if self.total else 100.0
                self.stream.write(f"\r{self.desc}: {pct:5.1f}% {self._sizes()}")
                self.stream.flush()

    def _sizes(self) -> str:
        return f"{_size(self.done)} of {_size(self.total)}"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.plain:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


size = _size


def count(n: int, noun: str, plural: str | None = None) -> str:
    """'1 tensor', '3 tensors', '1 entry', '2 entries': the one way the command
    counts things."""
    if n == 1:
        return f"1 {noun}"
    if plural is None:
        plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{n:,} {plural}"

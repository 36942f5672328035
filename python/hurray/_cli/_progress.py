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
        self.bar = tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
                        file=self.stream, leave=False)

    def update(self, n: int, what: str = "") -> None:
        self.done += n
        if self.bar is not None:
            if what:
                self.bar.set_postfix_str(what[-40:], refresh=False)
            self.bar.update(n)
        elif self.plain:
            now = time.monotonic()
            if now - self.last >= 0.2 or self.done >= self.total:
                self.last = now
                pct = 100.0 * self.done / self.total if self.total else 100.0
                self.stream.write(f"\r{self.desc}: {pct:5.1f}% {_size(self.done)} of "
                                  f"{_size(self.total)}")
                self.stream.flush()

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

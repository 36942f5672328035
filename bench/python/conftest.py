"""Shared machinery of the Python benchmark suite (pytest-benchmark).

The suite lives outside tests/python (pyproject's only testpath), so the test
command never collects it; run it with scripts/bench.sh or
`python -m pytest bench/python --benchmark-only`.

Every hurray benchmark is paired with a peer measured in the same run (NumPy,
PyTorch, SciPy or a raw baseline doing the same job). Benchmarks are grouped one
comparison per pytest-benchmark group; `measure()` records in `extra_info`:

- ``role``: "hurray" or "peer" (the reference of its group);
- ``bytes`` and ``gib_s`` (GiB/s at the median) for memory-bound cases;
- ``target``: the largest acceptable hurray/peer ratio, when the issue sets one.

At the end of the session the terminal summary prints each group's ratio
(hurray median / peer median, and the same for the minimum) and whether a
target is met. Nothing here asserts a time: a missed target is reported, not
failed. The same ratios are added to the JSON report (``--benchmark-json``),
which bench/python/baseline.py compares with bench/baseline.json.
"""

from __future__ import annotations

import gc
import math

import pytest

try:
    import pytest_benchmark  # noqa: F401
except ImportError:  # pragma: no cover - the suite needs the plugin
    collect_ignore_glob = ["test_*.py"]

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30

# The tensor sizes of the size sweeps: a zero-copy path must not grow with them.
SWEEP = [("1KiB", KiB), ("64KiB", 64 * KiB), ("4MiB", 4 * MiB), ("256MiB", 256 * MiB)]

_RESULTS: list[dict] = []


def fmt_time(s: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def measure(benchmark, fn, *, role, bytes_=None, target=None, rounds=None, setup=None):
    """Runs `fn` under pytest-benchmark and records the figures of the report.

    `role` is "hurray" or "peer"; `bytes_` makes the case memory-bound (GiB/s is
    reported); `target` is the largest acceptable ratio to the group's peer.
    `rounds` switches to pedantic mode (for cases of a second or so), with a
    `setup` run outside the timing before each round when given.
    """
    benchmark.extra_info["role"] = role
    if bytes_ is not None:
        benchmark.extra_info["bytes"] = int(bytes_)
    if target is not None:
        benchmark.extra_info["target"] = float(target)
    if rounds is not None:
        if setup is not None:
            def pedantic_setup():
                setup()
                return (), {}
            benchmark.pedantic(fn, setup=pedantic_setup, rounds=rounds, iterations=1,
                               warmup_rounds=1)
        else:
            benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=1)
    else:
        benchmark(fn)
    stats = getattr(benchmark, "stats", None)
    if stats is None or getattr(stats, "stats", None) is None:
        return  # --benchmark-disable: ran once as a test, nothing to record
    st = stats.stats
    if bytes_:
        benchmark.extra_info["gib_s"] = round(bytes_ / st.median / GiB, 3) if st.median else None
        benchmark.extra_info["gib_s_best"] = round(bytes_ / st.min / GiB, 3) if st.min else None
    _RESULTS.append({
        "group": benchmark.group, "name": benchmark.name, "role": role,
        "median": st.median, "min": st.min, "mean": st.mean, "stddev": st.stddev,
        "bytes": bytes_, "target": target,
    })


def ratios(records):
    """Per group: each hurray record's ratio to the group's peer (median, min)."""
    by_group: dict[str, list[dict]] = {}
    for r in records:
        by_group.setdefault(r["group"] or "", []).append(r)
    out = []
    for group, rs in sorted(by_group.items()):
        peers = [r for r in rs if r["role"] == "peer"]
        if len(peers) != 1:
            continue
        p = peers[0]
        for r in rs:
            if r["role"] != "hurray":
                continue
            med = r["median"] / p["median"] if p["median"] else math.inf
            best = r["min"] / p["min"] if p["min"] else math.inf
            out.append({"group": group, "name": r["name"], "peer": p["name"],
                        "ratio_median": med, "ratio_min": best, "target": r["target"],
                        "median": r["median"], "peer_median": p["median"],
                        "gib_s": (r["bytes"] / r["median"] / GiB) if r["bytes"] else None})
    return out


def pytest_benchmark_update_json(config, benchmarks, output_json):
    """Adds each hurray benchmark's ratio to its peer to the JSON report."""
    recs = []
    for b in output_json.get("benchmarks", []):
        ei = b.get("extra_info", {})
        st = b.get("stats", {})
        if "role" in ei and st:
            recs.append({"group": b.get("group"), "name": b.get("fullname", b.get("name")),
                         "role": ei["role"], "median": st["median"], "min": st["min"],
                         "bytes": ei.get("bytes"), "target": ei.get("target")})
    output_json["ratios"] = ratios(recs)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    rows = ratios(_RESULTS)
    if not rows:
        return
    tr = terminalreporter
    tr.write_sep("=", "hurray / peer ratios (same run; < 1 means hurray is faster)")
    tr.write_line(f"{'group':<40} {'case':<34} {'hurray median':>13} {'peer median':>12} "
                  f"{'ratio med':>9} {'ratio min':>9} {'GiB/s':>8}  target")
    for r in rows:
        tgt = ""
        if r["target"] is not None:
            ok = r["ratio_min"] <= r["target"] or r["ratio_median"] <= r["target"]
            tgt = f"<= {r['target']:g}: {'met' if ok else 'MISSED'}"
        gib = f"{r['gib_s']:.2f}" if r["gib_s"] is not None else ""
        case = r["name"].split("::")[-1].removeprefix("test_")
        tr.write_line(f"{r['group'][:40]:<40} {case[:34]:<34} {fmt_time(r['median']):>13} "
                      f"{fmt_time(r['peer_median']):>12} {r['ratio_median']:>9.2f} "
                      f"{r['ratio_min']:>9.2f} {gib:>8}  {tgt}")


@pytest.fixture
def fresh():
    """Collects garbage before a benchmark so earlier cases' memory is gone."""
    gc.collect()
    yield
    gc.collect()


# ---- optional packages -------------------------------------------------------------


@pytest.fixture(scope="session")
def np():
    return pytest.importorskip("numpy")


@pytest.fixture(scope="session")
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(scope="session")
def hurray():
    return pytest.importorskip("hurray")


def needs(hurray_mod, *names):
    """Skips (naming what is missing) unless hurray has every attribute in `names`.

    The parts of the suite that need part 3 of the package (save/load, streams, the
    native protocol) skip with "not available in this build" on a build without it.
    """
    missing = [n for n in names if not _has(hurray_mod, n)]
    if missing:
        pytest.skip(f"{', '.join(missing)}: not available in this build")


def _has(mod, dotted):
    obj = mod
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def aligned(np, nbytes, dtype="float32", fill=1):
    """A 64-byte-aligned C-contiguous array of about `nbytes` bytes (hurray borrows it)."""
    import hurray

    dt = np.dtype(dtype)
    n = max(1, nbytes // dt.itemsize)
    with hurray.aligned_allocator():
        a = np.empty(n, dt)
    if fill is not None:
        a[...] = fill
    return a

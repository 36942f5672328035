"""Regression tracking against bench/baseline.json.

    python bench/python/baseline.py store RESULT.json bench/baseline.json
    python bench/python/baseline.py check RESULT.json bench/baseline.json

RESULT.json is a pytest-benchmark report (--benchmark-json) of the suite, whose
"ratios" list conftest.py adds: each hurray benchmark's time divided by its peer's,
measured in the same run. The baseline stores the ratio of the best (minimum)
times, the figure least disturbed by other load on a shared machine, and no
absolute time, so it holds across machines: a benchmark regresses when its ratio
grows.

`check` prints a warning for every benchmark whose ratio is more than 10% above
the baseline's (and on GitHub Actions an ::warning:: annotation), and always
exits 0: a regression is a warning for the pull request, never a failure. Cases
new since the baseline and cases no longer run are listed too.
"""

from __future__ import annotations

import json
import os
import platform
import sys

THRESHOLD = 1.10


def ratios(report: dict) -> dict[str, float]:
    return {r["name"]: r["ratio_min"] for r in report.get("ratios", [])}


def store(result: str, baseline: str) -> int:
    with open(result) as f:
        report = json.load(f)
    data = {
        "about": "hurray/peer best-time ratios of the Python benchmark suite "
                 "(scripts/bench.sh); regenerate with scripts/bench.sh --update-baseline",
        "machine": report.get("machine_info", {}).get("cpu", {}).get("brand_raw")
        or platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "threshold": THRESHOLD,
        "ratios": {k: round(v, 4) for k, v in sorted(ratios(report).items())},
    }
    with open(baseline, "w") as f:
        json.dump(data, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"baseline: {len(data['ratios'])} ratios stored in {baseline}")
    return 0


def check(result: str, baseline: str) -> int:
    with open(result) as f:
        now = ratios(json.load(f))
    try:
        with open(baseline) as f:
            base = json.load(f)
    except FileNotFoundError:
        print(f"baseline: {baseline} is missing; nothing to compare "
              "(scripts/bench.sh --update-baseline stores one)")
        return 0
    limit = float(base.get("threshold", THRESHOLD))
    old = base.get("ratios", {})
    slower, faster = [], 0
    for name, r in sorted(now.items()):
        if name not in old or not old[name]:
            continue
        change = r / old[name]
        if change > limit:
            slower.append((name, old[name], r, change))
        elif change < 1 / limit:
            faster += 1
    gha = os.environ.get("GITHUB_ACTIONS") == "true"
    for name, was, is_, change in slower:
        msg = (f"{name}: hurray/peer ratio {is_:.3f}, baseline {was:.3f} "
               f"({(change - 1) * 100:+.0f}%)")
        print(f"::warning title=benchmark regression::{msg}" if gha else f"WARNING {msg}")
    new = sorted(set(now) - set(old))
    gone = sorted(set(old) - set(now))
    print(f"baseline: {len(now)} ratios compared with {baseline}: {len(slower)} more than "
          f"{(limit - 1) * 100:.0f}% slower (warnings), {faster} faster, {len(new)} new, "
          f"{len(gone)} not run")
    for name in new:
        print(f"  new: {name}")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[1] not in ("store", "check"):
        print(__doc__.strip().splitlines()[2:4], file=sys.stderr)
        return 2
    return (store if argv[1] == "store" else check)(argv[2], argv[3])


if __name__ == "__main__":
    sys.exit(main(sys.argv))

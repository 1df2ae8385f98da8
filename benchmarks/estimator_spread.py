"""Which statistic of a kernel's timed calls is reproducible? Resampled from measured calls.

    python benchmarks/estimator_spread.py VERDICTS.jsonl [--draws 400] [--repeats 5]

Per kernel (records grouped by id without its `#repeat` suffix), the counted candidate times of
all its verdicts (`time_series.us`, verify/measure.py) are pooled; then, `--draws` times,
`--repeats` verifications of as many calls as one verdict had are drawn with replacement, and
for each statistic the max/min over those verifications is taken. Printed: the median and 95th
percentile of that max/min, and how often it exceeds 1.05 (issue 18's bound from 50 us up).
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import random
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))

from drtriton.verify.timing import trimmed_mean

STATISTICS = {
    "median": statistics.median,
    "mean": statistics.fmean,
    "trimmed 10%": lambda v: trimmed_mean(sorted(v)),
    "trimmed 25%": lambda v: trimmed_mean(sorted(v), 0.25),
}


def spread(pool: list[float], calls: int, repeats: int, draws: int,
           rng: random.Random) -> dict[str, tuple[float, float, float]]:  # fmt: skip
    """Per statistic: (median, 95th percentile, share above 1.05) of max/min over repeats."""
    out = {}
    for name, fn in STATISTICS.items():
        ratios = []
        for _ in range(draws):
            vals = [fn(rng.choices(pool, k=calls)) for _ in range(repeats)]
            ratios.append(max(vals) / min(vals))
        ratios.sort()
        out[name] = (ratios[len(ratios) // 2], ratios[int(0.95 * (len(ratios) - 1))],
                     sum(r > 1.05 for r in ratios) / len(ratios))  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("verdicts", type=pathlib.Path)
    ap.add_argument("--draws", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    if not args.verdicts.is_file() or args.draws < 1 or args.repeats < 2:
        print("estimator_spread: need an existing file, --draws >= 1, --repeats >= 2",
              file=sys.stderr)  # fmt: skip
        return 2
    pools: dict[str, list[float]] = collections.defaultdict(list)
    calls: dict[str, list[int]] = collections.defaultdict(list)
    for line in args.verdicts.read_text().splitlines():
        record = json.loads(line) if line.strip() else {}
        series = (record.get("time_series") or {}).get("us")
        if series:
            kernel = str(record["id"]).rpartition("#")[0]
            pools[kernel] += series
            calls[kernel].append(len(series))
    if not pools:
        print(f"estimator_spread: no time_series in {args.verdicts}", file=sys.stderr)
        return 2
    rng = random.Random(0)
    print("| kernel | calls pooled | statistic | median max/min | p95 max/min | share > 1.05 |")
    print("|---|---|---|---|---|---|")
    for kernel, pool in pools.items():
        per = int(statistics.median(calls[kernel]))
        for name, (mid, p95, over) in spread(pool, per, args.repeats, args.draws, rng).items():
            print(f"| {kernel} | {len(pool)} | {name} | {mid:.4f} | {p95:.4f} | {over:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

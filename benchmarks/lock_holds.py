"""Where the GPU lock's time went: a DRTRITON_LOCK_LOG file summed by mode and call site.

    DRTRITON_LOCK_LOG=/tmp/holds.jsonl drtriton eval kernelbench ...   # on the GPU machine
    python benchmarks/lock_holds.py /tmp/holds.jsonl [--depth 2]

One row per (mode, site): how many logged holds, seconds held (sum and longest) and seconds
waited before them. Shared holds overlap each other, so their sums are not GPU time; what a
row says is how long the GPU's timings were kept out (held) and how long processes queued.
Only holds held or waited for at least gpu_lock.LOG_MIN_S are in the log.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path


def summarize(records: list[dict], depth: int) -> list[tuple[str, str, int, float, float, float]]:
    """(mode, site, count, held_s, longest_s, wait_s) rows, most held first."""
    rows: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for r in records:
        site = " < ".join(str(r.get("site", "")).split(" < ")[:depth])
        row = rows[(str(r["mode"]), site)]
        row[0] += 1
        row[1] += float(r["held_s"])
        row[2] = max(row[2], float(r["held_s"]))
        row[3] += float(r["wait_s"])
    out = [(mode, site, int(v[0]), v[1], v[2], v[3]) for (mode, site), v in rows.items()]
    return sorted(out, key=lambda row: -row[3] - row[4])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", type=Path, help="a DRTRITON_LOCK_LOG file (JSON lines)")
    parser.add_argument("--depth", type=int, default=2, help="callers per site (default 2)")
    args = parser.parse_args(argv)
    try:
        records = [json.loads(line) for line in args.log.read_text().splitlines() if line]
    except (OSError, ValueError) as exc:
        print(f"lock_holds: cannot read {args.log}: {exc}", file=sys.stderr)
        return 2
    if not records:
        print(f"lock_holds: {args.log} holds no records", file=sys.stderr)
        return 2
    span = max(r["t"] for r in records) - min(r["t"] - r["held_s"] - r["wait_s"] for r in records)
    print(f"{len(records)} holds over {span:.0f} s, {len({r['pid'] for r in records})} processes")
    print("| mode | site | holds | held s | longest s | waited s |\n|---|---|---|---|---|---|")
    for mode, site, count, held, longest, wait in summarize(records, args.depth):
        print(f"| {mode} | {site} | {count} | {held:.1f} | {longest:.1f} | {wait:.1f} |")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `lock_holds.py FILE | head`: the reader had what it wanted
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
        from drtriton.cli_support import quiet_broken_pipe

        sys.exit(quiet_broken_pipe())

"""Synthesizer throughput: programs per second per core, by level, for both presets.

The paper generated 100k programs in about 1.5 h on 32 cores: 0.58 programs/s per core
(1-2 s per 20-operator DAG).  Per-core figures here run one thread; `--threads` adds
whole-machine figures for the 1-5 mix, with that many threads in one process and with
that many single-threaded processes (Gecode serializes space allocation inside a process,
so threads stop scaling past a few cores).  Every figure counts distinct programs only.

    python benchmarks/synth_throughput.py [--seconds 3] [--threads 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time

from drtriton.synth import Synthesizer

PAPER_PER_CORE = 100_000 / (1.5 * 3600 * 32)
LEVELS = ["1", "2", "3", "4", "5", "1-5", "10", "20"]


def measure(
    preset: str, levels: str, threads: int, seconds: float, processes: int = 1
) -> dict[str, float]:
    """Generates in growing chunks until `seconds` have passed; returns programs/s."""
    synth = Synthesizer(levels, preset, seed=12345, threads=threads, processes=processes)
    synth.next(4 * threads * processes)  # warm-up: catalog tables, threads, processes
    cores = threads * processes
    made, chunk = 0, 16 * cores
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        made += len(synth.next(chunk))
        chunk = min(chunk * 2, 4096)
    elapsed = time.perf_counter() - start
    stats = synth.stats()
    synth.close()
    return {
        "preset": preset,
        "levels": levels,
        "threads": threads,
        "processes": processes,
        "programs": made,
        "seconds": round(elapsed, 3),
        "programs_per_s": made / elapsed,
        "programs_per_s_per_core": made / elapsed / cores,
        "restarts_per_program": (
            stats["dead_ends"] + stats["solve_failures"] + stats["check_failures"]
        )
        / max(stats["samples"], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per figure")
    parser.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="threads (and processes) for the whole-machine figures",
    )
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()

    rows = []
    print(f"paper's rate: {PAPER_PER_CORE:.2f} programs/s per core\n")
    print(
        f"{'preset':<7}{'levels':>7}{'thr x proc':>11}{'programs':>10}{'prog/s':>10}"
        f"{'prog/s/core':>13}{'x paper':>9}{'restarts':>10}"
    )
    for preset in ("paper", "tiny"):
        configs = [(levels, 1, 1) for levels in LEVELS]
        if args.threads > 1:
            configs += [("1-5", args.threads, 1), ("1-5", 1, args.threads)]
        for levels, threads, processes in configs:
            row = measure(preset, levels, threads, args.seconds, processes)
            rows.append(row)
            print(
                f"{preset:<7}{levels:>7}{f'{threads} x {processes}':>11}{row['programs']:>10}"
                f"{row['programs_per_s']:>10.0f}{row['programs_per_s_per_core']:>13.0f}"
                f"{row['programs_per_s_per_core'] / PAPER_PER_CORE:>9.0f}"
                f"{row['restarts_per_program']:>10.2f}",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()

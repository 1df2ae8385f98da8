"""What column statistics cost a contraction's kernel (results/h100-2026-12-07, call 3).

    python benchmarks/results/h100-2026-12-07/stats_cost_probe.py 52 [PROBLEMS]   # H100 or H200

KernelBench level-2 problem ID's teacher candidate in training mode (its batch norm's
statistics from the convolution's tiles, fusion.h Group::column_stats), timed in bf16 against
the same text with the statistics' lines removed from the contraction's kernels (whose output
is then wrong: only the time means something), in one hold (measure.time_tasks).
"""

from __future__ import annotations

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

from drtriton.teach import emit  # noqa: E402
from drtriton.verify.measure import time_tasks  # noqa: E402
from memory_bound_speed import classify, load_problems  # noqa: E402
from variant_probe import as_task  # noqa: E402

STATS_LINES = ("cs_", "tl.store(t1_colstats", "tl.store(t3_colstats")


def main() -> None:
    problems = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else ".devdata/kb_c3/level2.jsonl")
    record = load_problems(problems, [int(sys.argv[1])], None)[0]
    program = classify(record["code"], training=True)["program"]
    candidate = emit(program)
    lines = candidate.split("\n")
    stripped = "\n".join(x for x in lines if not x.lstrip().startswith(STATS_LINES))
    assert stripped != candidate, "no column statistics in this candidate"
    tasks = [as_task(candidate, program), as_task(stripped, program)]
    times = time_tasks(tasks, "cuda", runs=10, precision="bf16")
    print(json.dumps({"with_stats_ms": times[0]["median"],
                      "stats_lines_removed_ms": times[1]["median"]}))  # fmt: skip


if __name__ == "__main__":
    main()

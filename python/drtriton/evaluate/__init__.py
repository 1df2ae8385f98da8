"""Evaluation: KernelBench problems and held-out synthetic programs, tabulated by level.

    metrics.py      fast_p, geometric means, LevelStats (one summarizer for every evaluation)
    summary.py      summary.md (by-level tables, per-problem rows); plot.py: speedup.png
    store.py        results.jsonl: atomic appends, resume by id
    kernelbench.py  `drtriton eval kernelbench`: one child process per problem (worker.py)
    synthetic.py    `drtriton eval synthetic`: policy → verify-batch → by level
    cli.py          the `drtriton eval` commands

Python API:

    from drtriton.evaluate import by_level, fast_p, geomean, write_summary
"""

from __future__ import annotations

from drtriton.evaluate.metrics import FAST_P, LevelStats, by_level, fast_p, geomean, level_stats
from drtriton.evaluate.summary import level_tables, render_summary, write_summary

__all__ = [
    "FAST_P",
    "LevelStats",
    "by_level",
    "fast_p",
    "geomean",
    "level_stats",
    "level_tables",
    "render_summary",
    "write_summary",
]

"""By-level metrics of an evaluation: correctness, fast_p and geometric-mean speedups.

One summarizer for every evaluation (KernelBench problems, held-out synthetic programs, the
teacher's acceptance benchmark), so that their tables mean the same thing. It reads result
records with at least `level` and `correct`, and where timed `speedup` (eager time / kernel
time), `speedup_vs_compile` (torch.compile time / kernel time) and `speedup_vs_tf32` (eager
with PyTorch's TF32 defaults / kernel time).

fast_p follows KernelBench: the fraction of problems that are correct AND faster than p times
the baseline, over all problems of the level that were run (an incorrect or failed problem
counts in the denominator; a problem never started, e.g. past a time budget, is reported as
"not run" and left out, never silently counted as a failure). A level with no timed result
(the CPU verifier judges correctness only) has no fast_p: None, printed "n/a".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

FAST_P = (0.0, 1.0, 1.5, 2.0)  # KernelBench's thresholds, plus 1.5 as the paper reports


def is_timed(record: dict[str, Any]) -> bool:
    return record.get("correct") is True and positive(record.get("speedup")) is not None


def fast_p(records: Sequence[dict[str, Any]], p: float, key: str = "speedup") -> float | None:
    """Share of `records` that are correct with `key` > p; None when none is timed."""
    if not records or not any(is_timed(r) for r in records):
        return None
    fast = sum(1 for r in records if r.get("correct") is True and _above(r.get(key), p))
    return fast / len(records)


def geomean(values: Iterable[float | None]) -> float | None:
    """Geometric mean of the positive finite values; None when there are none."""
    logs = [math.log(v) for v in values if positive(v) is not None]
    return math.exp(sum(logs) / len(logs)) if logs else None


def compile_failed(record: dict[str, Any]) -> bool:
    """torch.compile of the reference failed where the baselines were measured (eager timed)."""
    if record.get("compile_error"):
        return True
    return record.get("eager_ms") is not None and record.get("compile_ms") is None


@dataclass
class LevelStats:
    """One row of the by-level table."""

    level: str  # "1", "2", ... or "all"
    problems: int  # selected (run + not run)
    run: int
    correct: int
    timed: int  # correct and timed (GPU)
    fast_eager: dict[float, float | None] = field(default_factory=dict)
    fast_compile: dict[float, float | None] = field(default_factory=dict)
    # Against eager with PyTorch's defaults (TF32 convolutions; the baselines above are strict
    # float32 like the kernels: drtriton/verify/precision.py).
    fast_tf32: dict[float, float | None] = field(default_factory=dict)
    geomean_eager: float | None = None  # over correct, timed problems
    geomean_compile: float | None = None
    geomean_tf32: float | None = None
    compile_failed: int = 0

    @property
    def not_run(self) -> int:
        return self.problems - self.run

    @property
    def correct_rate(self) -> float | None:
        return self.correct / self.run if self.run else None


def level_stats(
    records: Sequence[dict[str, Any]], not_run: Sequence[dict[str, Any]] = (), label: str = ""
) -> LevelStats:
    """The statistics of one group of results (`not_run`: selected problems never started)."""
    ok = [r for r in records if r.get("correct") is True]
    return LevelStats(
        level=label,
        problems=len(records) + len(not_run),
        run=len(records),
        correct=len(ok),
        timed=sum(1 for r in records if is_timed(r)),
        fast_eager={p: fast_p(records, p, "speedup") for p in FAST_P},
        fast_compile={p: fast_p(records, p, "speedup_vs_compile") for p in FAST_P},
        fast_tf32={p: fast_p(records, p, "speedup_vs_tf32") for p in FAST_P},
        geomean_eager=geomean(r.get("speedup") for r in ok),
        geomean_compile=geomean(r.get("speedup_vs_compile") for r in ok),
        geomean_tf32=geomean(r.get("speedup_vs_tf32") for r in ok),
        compile_failed=sum(1 for r in records if compile_failed(r)),
    )


def by_level(
    records: Sequence[dict[str, Any]], not_run: Sequence[dict[str, Any]] = ()
) -> list[LevelStats]:
    """One LevelStats per level (ascending), then "all" when there is more than one level."""
    levels = sorted({_level(r) for r in [*records, *not_run]}, key=level_order)
    rows = [
        level_stats(
            [r for r in records if _level(r) == lv],
            [r for r in not_run if _level(r) == lv],
            lv,
        )
        for lv in levels
    ]
    if len(rows) > 1:
        rows.append(level_stats(records, not_run, "all"))
    return rows


def _level(record: dict[str, Any]) -> str:
    return str(record.get("level", "?"))


def level_order(level: str) -> tuple[int, float, str]:
    try:
        return (0, float(level), level)
    except ValueError:
        return (1, 0.0, level)


def positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


def speedup(baseline_ms: Any, kernel_ms: Any) -> float | None:
    """baseline / kernel, or None unless both are positive finite times."""
    base, kernel = positive(baseline_ms), positive(kernel_ms)
    return base / kernel if base is not None and kernel is not None else None


def _above(value: Any, p: float) -> bool:
    v = positive(value)
    return v is not None and v > p

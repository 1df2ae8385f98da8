"""Confidence intervals for held-out evaluations: pass@1 over programs, and the paired
difference of two policies judged on the same programs (issue 23's "measurement that can tell").

The unit is the program, not the sample: with K answers sampled per program, a program's
pass rate is the mean of its K verdicts, and pass@1 is the mean of those rates over programs.
The 95% interval is the normal one over programs (mean +- 1.96 standard errors, the standard
deviation taken with n - 1), clipped to the values a rate can take. Two policies on the same
programs are compared by the per-program differences of their rates (a paired interval),
which is far narrower than two separate intervals when the programs' difficulties dominate
the spread: "B beats A beyond the confidence interval" is then "the paired interval of
B - A lies above 0".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


def program_id(sample_id: Any) -> str:
    """The program a sample answers: recipe.answers names the k-th answer PROGRAM#k."""
    return str(sample_id).rsplit("#", 1)[0]


def program_means(rows: Iterable[dict[str, Any]], key: str = "correct") -> dict[str, float]:
    """Mean of `key` (a verdict's bool or number; None rows skipped) per program."""
    sums: dict[str, list[float]] = {}
    for row in rows:
        value = row.get(key)
        if value is None:
            continue
        sums.setdefault(program_id(row.get("id")), []).append(float(value))
    return {pid: sum(v) / len(v) for pid, v in sums.items()}


def mean_interval(values: Sequence[float], low: float = -math.inf,
                  high: float = math.inf) -> tuple[float, float, float]:  # fmt: skip
    """(mean, lower, upper) of the 95% normal interval, clipped to [low, high]; one value or
    none gives no interval (lower = upper = nan)."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = sum(values) / n
    if n == 1:
        return mean, math.nan, math.nan
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = Z95 * sd / math.sqrt(n)
    return mean, max(low, mean - half), min(high, mean + half)


def rate_interval(rates: dict[str, float]) -> tuple[float, float, float]:
    """pass@1 over programs with its 95% interval (within [0, 1])."""
    return mean_interval(list(rates.values()), 0.0, 1.0)


def paired_difference(after: dict[str, float],
                      before: dict[str, float]) -> tuple[float, float, float, int]:  # fmt: skip
    """(mean of after - before, lower, upper, programs) over the programs both judged."""
    common = sorted(set(after) & set(before))
    diffs = [after[p] - before[p] for p in common]
    mean, lo, hi = mean_interval(diffs, -1.0, 1.0)
    return mean, lo, hi, len(common)

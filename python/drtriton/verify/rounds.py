"""Interleaved timing rounds: one call of every series per round, in rotating order, until
every series' median is known well enough.

Why interleave: a GPU's clocks, its temperature and the host's load drift over seconds. Timed
one after the other (candidate, then eager), such a drift lands on one side of the ratio
alone; timed round by round, it lands on both. The order rotates (round r starts with series
r mod k), so no series always follows the flush of another's output or always runs first.

When to stop: after `min_rounds`, as soon as the 95% confidence interval of every series'
median is within `target` of it (relative half-width, from order statistics: no assumption on
the distribution, whose tail is long when the host stalls a launch), or when `max_rounds` or
`budget_s` is reached. A series' run may return None for a round it does not count (the
candidate's checked calls run under the torch watch, whose overhead is not the candidate's).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


@dataclass
class Series:
    """One timed callable: `run(round)` returns its milliseconds, or None when not counted."""

    name: str
    run: Callable[[int], float | None]
    times: list[float] = field(default_factory=list)


def median_ci(times: Sequence[float], z: float = 1.96) -> tuple[float, float]:
    """The distribution-free interval of the median: the order statistics of ranks
    floor(n/2 - z sqrt(n)/2) and ceil(1 + n/2 + z sqrt(n)/2) (1-based, clamped to 1..n)."""
    ordered = sorted(times)
    n = len(ordered)
    assert n, "no times"
    half = z * math.sqrt(n) / 2
    lo = min(n, max(1, math.floor(n / 2 - half)))
    hi = min(n, max(1, math.ceil(1 + n / 2 + half)))
    return ordered[lo - 1], ordered[hi - 1]


def relative_halfwidth(times: Sequence[float]) -> float:
    """Half the median's 95% interval over the median (inf for fewer than 8 times)."""
    if len(times) < 8:
        return math.inf
    lo, hi = median_ci(times)
    mid = sorted(times)[len(times) // 2]
    return (hi - lo) / 2 / mid if mid > 0 else math.inf


def interleave(series: Sequence[Series], *, min_rounds: int, max_rounds: int,
               target: float, budget_s: float,
               clock: Callable[[], float] = time.monotonic) -> int:  # fmt: skip
    """Runs rounds over `series` (their `times` fill up); returns the number of rounds run."""
    assert series, "nothing to time"
    start = clock()
    rounds = 0
    for r in range(max(min_rounds, max_rounds)):
        first = r % len(series)
        for s in [*series[first:], *series[:first]]:
            ms = s.run(r)
            if ms is not None:
                s.times.append(ms)
        rounds = r + 1
        if rounds < min_rounds:
            continue
        if all(relative_halfwidth(s.times) <= target for s in series):
            break
        if clock() - start >= budget_s:
            break
    return rounds

"""Interleaved timing rounds: one call of every series per round, in rotating order, until
every series' median is known well enough.

Why interleave: a GPU's clocks, its temperature and the host's load drift over seconds. Timed
one after the other (candidate, then eager), such a drift lands on one side of the ratio
alone; timed round by round, it lands on both. The order rotates (round r starts with series
r mod k), so no series always follows the flush of another's output or always runs first.

When to stop: after `min_rounds`, as soon as the 95% confidence interval of every series'
median is within `target` of it (relative half-width, from order statistics: no assumption on
the distribution, whose tail is long when the host stalls a launch), or when `max_rounds` or
`budget_s` is reached. With `decide` (a pair of series names), also as soon as those two
series' median intervals are disjoint: a caller that asks only which of the two is faster (the
search, ranking fragments against eager) has its answer then, and a fragment 3x slower than
eager settled that in the 10 minimum rounds yet held the GPU for the whole 2 s budget (the
H200 lock log of 2026-12-01: 50 exclusive holds averaging 2.15 s, a third of the wall time).
A series' run may return None for a round it does not count (the
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
    counted: list[int] = field(default_factory=list)  # the round of each time


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


def disjoint(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether the medians' 95% intervals of `a` and `b` do not overlap (False for fewer
    than 8 times in either: too few to say)."""
    if len(a) < 8 or len(b) < 8:
        return False
    (a_lo, a_hi), (b_lo, b_hi) = median_ci(a), median_ci(b)
    return a_hi < b_lo or b_hi < a_lo


def interleave(series: Sequence[Series], *, min_rounds: int, max_rounds: int,
               target: float, budget_s: float, decide: tuple[str, str] | None = None,
               clock: Callable[[], float] = time.monotonic) -> int:  # fmt: skip
    """Runs rounds over `series` (their `times` fill up); returns the number of rounds run."""
    assert series, "nothing to time"
    pair = [s for name in decide or () for s in series if s.name == name]
    start = clock()
    rounds = 0
    for r in range(max(min_rounds, max_rounds)):
        first = r % len(series)
        for s in [*series[first:], *series[:first]]:
            ms = s.run(r)
            if ms is not None:
                s.times.append(ms)
                s.counted.append(r)
        rounds = r + 1
        if rounds < min_rounds:
            continue
        if all(relative_halfwidth(s.times) <= target for s in series):
            break
        if len(pair) == 2 and disjoint(pair[0].times, pair[1].times):
            break
        if clock() - start >= budget_s:
            break
    return rounds

"""The candidate's side of the timing rounds, in its worker (measure.py drives the rounds).

One `CandidateTiming` per verification, built on the `time_begin` request; each `time_run`
times one call (timing.Bench.timed), each `graph_run` one replay of the captured call.

Which calls are watched. The torch watch (a Python dispatch mode) costs ~25 us per call plus
more per torch operator, which CUDA events would charge to the candidate alone (eager is timed
without it): tiny fragments measured 0.18 ms against 0.01 ms eager on the H200. So it watches
the warm-ups, the graph capture and the checked calls only; the harness takes the time from the
unchecked calls. Each timed call is checked with probability `check_p`, drawn here from
SystemRandom after the candidate's import, so a candidate cannot tell a checked call from an
unchecked one: one that computes in torch on a share f of its calls escapes with probability
(1 - f * check_p) ** rounds (0.07 for f = 1/2 over 30 rounds at check_p = 1/6), and cannot move
the median below f = 1/2. Every call must still launch a Triton kernel (`silent` counts those
that did not), and torch compute in a watched call is `not_genuine` at once.
"""

from __future__ import annotations

import random
from typing import Any

from drtriton.verify.timing import Bench


class CandidateTiming:
    def __init__(self, entry: Any, watch: Any, launches: Any, sets: list[list[Any]], flush: Any,
                 *, check_p: float, check_max: int) -> None:  # fmt: skip
        self.entry, self.watch, self.launches = entry, watch, launches
        self.check_p, self.check_max = check_p, max(1, check_max)
        self.rng = random.SystemRandom()  # the candidate cannot predict which calls are checked
        self.bench = Bench(self._call, sets, flush)
        self.calls = self.silent = 0
        self.kept: dict[int, Any] = {}  # checked run -> its output
        self.graph_kept: dict[int, Any] = {}
        self.graph_keep = -1  # the replay whose output is checked
        self._watching = False

    def _call(self, *args: Any) -> Any:
        before = self.launches.count
        if self._watching:
            with self.watch:
                out = self.entry(*args)
        else:
            out = self.entry(*args)
        self.calls += 1
        if self.launches.count == before:
            self.silent += 1
        return out

    def _watched(self, fn: Any, *args: Any) -> Any:
        self._watching = True
        try:
            return fn(*args)
        finally:
            self._watching = False

    def warm(self, count: int) -> None:
        self._watched(self.bench.warm, count)

    def run(self, index: int) -> tuple[float, bool]:
        """One timed call (milliseconds) and whether it was checked (watched, output kept)."""
        checked = len(self.kept) < self.check_max and self.rng.random() < self.check_p
        if checked:
            ms, out = self._watched(self.bench.timed, index, True)
            self.kept[index] = out
        else:
            ms, _ = self.bench.timed(index)
        return ms, checked

    def capture(self, rounds: int) -> str | None:
        """Captures the call into a CUDA graph (watched); picks the replay to check."""
        self.graph_keep = self.rng.randrange(max(1, rounds))
        return self._watched(self.bench.capture)

    def replay(self, index: int) -> float:
        keep = index == self.graph_keep
        ms, out = self.bench.replayed(index, keep)
        if keep:
            self.graph_kept[index] = out
        return ms

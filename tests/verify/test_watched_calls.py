"""worker_timing.CandidateTiming: which timed calls run under the torch watch, which are checked,
and which launched nothing (the timing itself needs a GPU; the choice of calls does not)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from drtriton.verify import worker_timing
from drtriton.verify.poison import TorchWatch


class Launches:
    count = 0


class CpuBench:
    """timing.Bench without CUDA events: each call is made, its time is 1 ms."""

    def __init__(self, call: Any, sets: Any, flush: Any) -> None:
        self.call, self.sets = call, sets

    def warm(self, count: int) -> None:
        for _ in range(count):
            self.call(*self.sets[0])

    def timed(self, index: int, keep: bool = False) -> tuple[float, Any]:
        out = self.call(*self.sets[index % len(self.sets)])
        return 1.0, (out.clone() if keep else None)

    def capture(self) -> str | None:
        self.call(*self.sets[0])
        return None

    def replayed(self, index: int, keep: bool = False) -> tuple[float, Any]:
        return 0.5, (torch.zeros(1) if keep else None)


@pytest.fixture
def timing(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(worker_timing, "Bench", CpuBench)

    def make(entry: Any, launches: Any, check_p: float, check_max: int = 5) -> Any:
        watch = TorchWatch(launches=launches)  # type: ignore[arg-type]
        watch.poison = False
        timed = worker_timing.CandidateTiming(entry, watch, launches, [[torch.ones(3)]], None,
                                              check_p=check_p, check_max=check_max)  # fmt: skip
        return timed, watch

    return make


def test_warmups_capture_and_checked_calls_are_watched_the_others_are_not(timing: Any) -> None:
    launches = Launches()
    seen: list[int] = []
    holder: dict[str, Any] = {}

    def entry(x: torch.Tensor) -> torch.Tensor:
        watch = holder["watch"]
        before = sum(watch.hits.values())
        out = torch.add(x, 1.0)  # torch compute: a hit whenever the watch is on
        seen.append(sum(watch.hits.values()) - before)
        launches.count += 1
        return out

    timed, holder["watch"] = timing(entry, launches, check_p=0.5)
    timed.warm(2)
    results = [timed.run(r) for r in range(40)]
    assert timed.capture(rounds=10) is None
    checked = [r for r, (_, c) in enumerate(results) if c]
    assert seen[:2] == [1, 1]  # warm-ups
    assert [seen[2 + r] for r in range(40)] == [int(r in checked) for r in range(40)]
    assert seen[-1] == 1  # the capture
    assert 1 <= len(checked) <= 5  # check_max caps the outputs kept on the GPU
    assert sorted(timed.kept) == checked
    assert timed.silent == 0 and timed.calls == 2 + 40 + 1


def test_checked_calls_are_drawn_at_random_per_verification(timing: Any) -> None:
    def entry(x: torch.Tensor) -> torch.Tensor:
        Launches.count += 1
        return x

    draws = set()
    for _ in range(5):
        timed, _ = timing(entry, Launches(), check_p=0.2, check_max=100)
        draws.add(tuple(r for r in range(60) if timed.run(r)[1]))
    assert len(draws) > 1  # not a fixed pattern a candidate could learn


def test_calls_without_a_launch_are_counted(timing: Any) -> None:
    launches = Launches()
    timed, _ = timing(lambda x: x, launches, check_p=0.0)
    timed.warm(1)
    timed.run(0)
    timed.run(1)
    assert timed.silent == 3 and timed.calls == 3


def test_one_graph_replay_is_kept_for_checking(timing: Any) -> None:
    def entry(x: torch.Tensor) -> torch.Tensor:
        Launches.count += 1
        return x

    timed, _ = timing(entry, Launches(), check_p=0.0)
    timed.capture(rounds=8)
    assert 0 <= timed.graph_keep < 8
    for r in range(8):
        assert timed.replay(r) == 0.5
    assert list(timed.graph_kept) == [timed.graph_keep]

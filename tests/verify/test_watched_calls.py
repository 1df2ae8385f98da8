"""worker.watched_calls: which timed calls run under the torch watch (the timing itself needs a
GPU; the choice of calls does not)."""

from __future__ import annotations

import torch

from drtriton.verify.poison import TorchWatch
from drtriton.verify.worker import watched_calls


class Launches:
    count = 0


def test_warmups_and_checked_runs_are_watched_the_others_are_not() -> None:
    launches = Launches()
    watch = TorchWatch(launches=launches)  # type: ignore[arg-type]
    watch.poison = False
    seen: list[int] = []

    def entry(x: torch.Tensor) -> torch.Tensor:
        before = sum(watch.hits.values())
        out = torch.add(x, 1.0)  # torch compute: a hit whenever the watch is on
        seen.append(sum(watch.hits.values()) - before)
        launches.count += 1
        return out

    silent: list[int] = []
    call = watched_calls(entry, watch, launches, warmup=2, check={1, 4}, silent=silent)
    for _ in range(2 + 6):
        call(torch.ones(3))
    assert seen == [1, 1, 0, 1, 0, 0, 1, 0]  # warm-ups, then runs 0..5 with 1 and 4 checked
    assert silent == []


def test_calls_without_a_launch_are_reported_by_run_index() -> None:
    launches = Launches()
    watch = TorchWatch(launches=launches)  # type: ignore[arg-type]
    silent: list[int] = []
    call = watched_calls(lambda x: x, watch, launches, warmup=1, check=set(), silent=silent)
    for _ in range(3):
        call(torch.ones(1))
    assert silent == [-1, 0, 1]

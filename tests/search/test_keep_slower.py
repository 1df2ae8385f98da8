"""SearchConfig.keep_slower: the least slow verified fragment when none beats PyTorch."""

from __future__ import annotations

import math

from drtriton import _core
from drtriton.search.search import FragmentResult, _least_loss_cover


def _verified(start: int, end: int, cost: float) -> FragmentResult:
    return FragmentResult(start, end, "# task", cost=cost, candidate="# kernel")


def test_the_fragment_that_loses_least_is_fused() -> None:
    op_costs = [3.0, 4.0, 1.0]
    results = [
        _verified(0, 1, 5.0),  # loses 2.0 against PyTorch's 3.0
        _verified(0, 2, 8.0),  # loses 1.0 against 3.0 + 4.0
        FragmentResult(1, 3, "# task"),  # never verified correct
    ]
    cover = _least_loss_cover(3, results, op_costs)
    assert cover is not None
    assert [(c["start"], c["end"], c["fused"]) for c in cover] == [(0, 2, True), (2, 3, False)]


def test_nothing_verified_keeps_pytorch() -> None:
    results = [FragmentResult(0, 1, "# task"), FragmentResult(0, 1, "# task", cost=math.inf)]
    assert _least_loss_cover(1, results, [1.0]) is None


def test_one_fragment_covers_beat_pytorch_cheapest_first_and_skip_the_failed_cover() -> None:
    from drtriton.search.search import _one_fragment_covers

    op_costs = [3.0, 4.0, 1.0, 2.0]
    results = [
        _verified(0, 2, 5.0),  # saves 2.0
        _verified(2, 4, 1.0),  # saves 2.0 as well, but the failed cover is this one alone
        _verified(1, 3, 4.5),  # saves 0.5
        _verified(0, 1, 3.5),  # loses 0.5: not a fallback (unless keep_slower)
        FragmentResult(3, 4, "# task"),  # never verified
    ]
    failed = list(_core.best_cover(4, {(2, 4): 0.0}, op_costs))
    covers = _one_fragment_covers(4, results, op_costs, failed, keep_slower=False)
    fused = [[(s["start"], s["end"]) for s in c if s["fused"]] for c, _ in covers]
    assert fused == [[(0, 2)], [(1, 3)]]
    assert [cost for _, cost in covers] == [8.0, 9.5]
    slower = _one_fragment_covers(4, results, op_costs, failed, keep_slower=True)
    assert [[(s["start"], s["end"]) for s in c if s["fused"]] for c, _ in slower][-1] == [(0, 1)]

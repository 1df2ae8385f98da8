"""SearchConfig.keep_slower: the least slow verified fragment when none beats PyTorch."""

from __future__ import annotations

import math

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

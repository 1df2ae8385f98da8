"""How one fragment's candidates are judged (search._try_candidates), with a fake judge."""

from __future__ import annotations

import math

import pytest
import torch

from drtriton.search.search import FragmentResult, SearchConfig, VerdictCache, _try_candidates

TASK = (
    "import torch\n\ndef fused_operator(x0):\n    t0 = torch.relu(x0)\n    return t0\n\n"
    "def get_inputs():\n    return [torch.randn(4, 8)]\n"
)


class TwoCandidates:
    def candidates(self, task_source: str, k: int) -> list[str]:
        return ["# first", "# second"]


def _judge_raising(first_error: Exception):
    def judge(task: str, candidate: str) -> dict:
        if candidate == "# first":
            raise first_error
        return {"correct": True, "status": "correct", "time_ms": 0.5, "eager_ms": 1.0}

    return judge


def test_out_of_memory_loses_the_candidate_not_the_search() -> None:
    result = FragmentResult(0, 1, TASK)
    error = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 6.00 GiB.")
    config = SearchConfig(device="cuda")
    cost = _try_candidates(result, TwoCandidates(), config, VerdictCache(), _judge_raising(error))
    assert cost == 0.5 and result.candidate == "# second" and result.tried == 2
    assert result.outcomes[0].startswith("out_of_memory: CUDA out of memory")
    assert result.outcomes[1].startswith("correct")


def test_other_errors_still_raise() -> None:
    result = FragmentResult(0, 1, TASK)
    with pytest.raises(RuntimeError, match="device-side assert"):
        _try_candidates(result, TwoCandidates(), SearchConfig(device="cuda"), VerdictCache(),
                        _judge_raising(RuntimeError("device-side assert triggered")))  # fmt: skip
    assert math.isinf(result.cost)

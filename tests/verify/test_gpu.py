"""The GPU path (run on the H200): timing, baselines, and every cheating candidate on CUDA.

Skipped without a CUDA device. `pytest tests/verify/test_gpu.py -v`.
"""

from __future__ import annotations

import pathlib

import pytest
import torch
from conftest import HERE, task_source
from test_adversarial import CASES, judge

from drtriton.verify import verify

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
HONEST = sorted(p.stem for p in (HERE / "honest").glob("*.py"))


@pytest.mark.parametrize("name", HONEST)
def test_honest_kernel_is_correct_and_timed(name: str) -> None:
    verdict = verify(task_source(name), (HERE / "honest" / f"{name}.py").read_text(), device="cuda")
    assert verdict.status == "correct", verdict.to_json()
    assert verdict.time_ms and verdict.time_ms > 0
    assert verdict.eager_ms and verdict.eager_ms > 0
    assert verdict.speedup and verdict.log_speedup is not None
    print(name, verdict.to_json())


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_adversarial_on_cuda(path: pathlib.Path) -> None:
    judge(path, device="cuda")


def test_harness_survives_a_poisoned_context() -> None:
    bad = (HERE / "adversarial" / "illegal_address.py").read_text()
    good = (HERE / "honest" / "add_relu.py").read_text()
    assert not verify(task_source("add_relu"), bad, device="cuda").correct
    assert verify(task_source("add_relu"), good, device="cuda").correct

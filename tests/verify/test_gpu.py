"""The GPU path (run on the H200): timing, baselines, and every cheating candidate on CUDA.

Skipped without a CUDA device. `pytest tests/verify/test_gpu.py -v`.
"""

from __future__ import annotations

import pathlib

import pytest
import torch
from conftest import HERE, task_source
from test_adversarial import CASES, judge

from drtriton.verify import Options, time_task, time_tasks, verify

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
HONEST = sorted(p.stem for p in (HERE / "honest").glob("*.py"))


@pytest.mark.parametrize("name", HONEST)
def test_honest_kernel_is_correct_and_timed(name: str) -> None:
    verdict = verify(task_source(name), (HERE / "honest" / f"{name}.py").read_text(), device="cuda")
    assert verdict.status == "correct", verdict.to_json()
    assert verdict.time_ms and verdict.time_ms > 0
    assert verdict.eager_ms and verdict.eager_ms > 0
    assert verdict.speedup and verdict.log_speedup is not None
    extra = verdict.extra
    assert extra["timing"]["rounds"] >= 30 and extra["time_runs"] >= 1
    assert extra["time_q1_ms"] <= verdict.time_ms <= extra["time_q3_ms"]
    assert extra["eager_q1_ms"] <= verdict.eager_ms <= extra["eager_q3_ms"]
    assert "compile_pass" not in extra, extra.get("compile_pass")  # it compiled, nothing ran
    assert extra.get("graph_ms") or extra.get("graph_error")
    print(name, verdict.to_json())


def test_eager_is_timed_again_for_every_candidate() -> None:
    task, honest = task_source("add_relu"), (HERE / "honest" / "add_relu.py").read_text()
    opts = Options(device="cuda", compile_baseline=False)
    first, second = verify(task, honest, opts), verify(task, honest, opts)
    assert first.correct and second.correct
    assert (
        first.eager_ms != second.eager_ms
        or first.extra["eager_mean_ms"] != second.extra["eager_mean_ms"]
    )  # two timing windows, not one cached figure


def test_time_task_times_a_trusted_task_alone() -> None:
    stats = time_task(task_source("add_relu"), "cuda")
    assert stats["n"] >= 10 and 0 < stats["q1"] <= stats["median"] <= stats["q3"]


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_adversarial_on_cuda(path: pathlib.Path, verifier) -> None:  # type: ignore[no-untyped-def]
    judge(path, device="cuda", verifier=verifier)


def test_harness_survives_a_poisoned_context() -> None:
    bad = (HERE / "adversarial" / "illegal_address.py").read_text()
    good = (HERE / "honest" / "add_relu.py").read_text()
    assert not verify(task_source("add_relu"), bad, device="cuda").correct
    assert verify(task_source("add_relu"), good, device="cuda").correct


def test_time_tasks_times_several_trusted_tasks_in_one_go() -> None:
    stats = time_tasks([task_source("add_relu"), task_source("add_relu")], "cuda")
    assert len(stats) == 2 and all(s["n"] >= 10 and s["median"] > 0 for s in stats)

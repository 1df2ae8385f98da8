"""A timeout's verdict names the worker's phase when the limit struck (a candidate that hangs in
its first call hangs in the compile pass, not in the start-up or the harness's references)."""

from __future__ import annotations

from conftest import HERE, task_source

from drtriton.verify import verify


def test_timeout_names_the_phase():
    verdict = verify(task_source("add_relu"), (HERE / "adversarial" / "hang.py").read_text(),
                     device="cpu", timeout=20)  # fmt: skip
    assert verdict.status == "timeout"
    assert "in the worker's compile pass" in verdict.reason
    assert verdict.reason.rstrip().endswith("s into it")


def test_harness_work_is_not_the_candidates_time():
    """A reference that takes 4 s per call (8 s per input set with its float64 evaluation) costs
    the harness 40 s over five sets; the candidate's 20 s limit is for its own work."""
    verdict = verify(task_source("slow_reference"), (HERE / "honest" / "add_relu.py").read_text(),
                     device="cpu", timeout=20)  # fmt: skip
    assert verdict.status == "correct", verdict.reason
    assert verdict.extra["wall_s"] > 20

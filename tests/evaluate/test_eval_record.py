"""What one problem's result record keeps of its final verification (evaluate/kernelbench.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drtriton.errors import UserError
from drtriton.evaluate.kernelbench import _same_precision, build_record
from drtriton.evaluate.summary import precision_line

PROBLEM = {"level": 2, "problem_id": 7, "name": "7_Conv2d_ReLU"}


def test_the_record_keeps_where_the_final_verifications_time_went() -> None:
    verdict = {"status": "correct", "correct": True, "time_ms": 1.0, "eager_ms": 2.0,
               "speedup": 2.0, "wall_s": 40.5, "lock_wait_s": 12.0, "exclusive_s": 3.1,
               "request_s": {"warm": 7.0, "run": 1.2}, "timing": {"rounds": 30},
               "timing_s": {"rounds": 2.0, "worker_end": 0.4},
               "time_series": {"us": [1000.0]}}  # fmt: skip
    search = {"verifications": 3, "wall_s": 60.0, "request_s": {"warm": 21.0}}
    record = build_record(PROBLEM, {"verdict": verdict, "search_costs": search}, "cuda", 55.0)
    assert record["search_verifications"] == search
    assert record["status"] == "correct" and record["speedup"] == 2.0
    assert record["verification"] == {
        "wall_s": 40.5, "lock_wait_s": 12.0, "exclusive_s": 3.1,
        "request_s": {"warm": 7.0, "run": 1.2}, "timing": {"rounds": 30},
        "timing_s": {"rounds": 2.0, "worker_end": 0.4},
    }  # fmt: skip
    assert "time_series" not in record  # the per-call series stays in the verdict


def test_a_problem_without_a_verification_has_none() -> None:
    record = build_record(PROBLEM, {"status": "timeout"}, "cuda", 300.0)
    assert record["status"] == "timeout" and record["verification"] is None
    assert record["search_verifications"] is None


def test_the_record_keeps_what_every_verified_fragment_got() -> None:
    """Fused runs too: a cover that left the convolution in PyTorch says what its fused
    fragment got, where `unfused` gives only the reason for the PyTorch segment."""
    segments = [
        {"run": 0, "ops": ["conv2d"], "fused": False, "why": "PyTorch is as cheap or cheaper here",
         "tried": ["conv2d+min: correct 2.1 ms (eager 1.9 ms)", "min: correct 0.2 ms"]},
        {"run": 0, "ops": ["min"], "fused": True},
        {"run": 1, "ops": ["relu"], "fused": True, "tried": ["relu: correct 0.1 ms"]},
    ]  # fmt: skip
    record = build_record(PROBLEM, {"status": "correct", "segments": segments}, "cuda", 1.0)
    assert record["tried"] == ["conv2d+min: correct 2.1 ms (eager 1.9 ms)",
                               "min: correct 0.2 ms", "relu: correct 0.1 ms"]  # fmt: skip
    assert record["unfused"][0] == "conv2d: PyTorch is as cheap or cheaper here"


def test_the_record_names_its_precision() -> None:
    verdict = {"status": "correct", "correct": True, "precision": "bf16"}
    assert build_record(PROBLEM, {"verdict": verdict}, "cuda", 1.0)["precision"] == "bf16"
    # No verdict (a timeout): the mode the problem was asked in.
    assert build_record(PROBLEM, {"status": "timeout"}, "cuda", 1.0, "fp16")["precision"] == "fp16"
    assert build_record(PROBLEM, {"status": "timeout"}, "cuda", 1.0)["precision"] == "fp32"


def test_a_resumed_run_keeps_one_precision(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    _same_precision(results, "bf16")  # nothing recorded yet
    results.write_text(json.dumps({"id": "L1_1", "level": 1}) + "\n")  # before modes: fp32
    _same_precision(results, "fp32")
    with pytest.raises(UserError, match="precision fp32, not bf16"):
        _same_precision(results, "bf16")


def test_the_summary_states_its_precision() -> None:
    line = precision_line([{"precision": "bf16"}], "fp32")
    assert "`bf16` (bfloat16 tensors, atol = rtol = 0.01" in line
    assert "`fp32`" in precision_line([], "fp32") and "same mode" in line
    assert "TF32 allowed" in precision_line([{"precision": "tf32"}], "tf32")

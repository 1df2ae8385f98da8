"""What one problem's result record keeps of its final verification (evaluate/kernelbench.py)."""

from __future__ import annotations

from drtriton.evaluate.kernelbench import build_record

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

"""How a problem's worker process ends becomes its record (kernelbench._outcome)."""

from __future__ import annotations

import json
import pathlib

from drtriton.evaluate.kernelbench import _outcome


def test_a_result_written_before_a_hung_exit_is_kept(tmp_path: pathlib.Path) -> None:
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"status": "correct", "correct": True}))
    record = _outcome(None, True, result, tmp_path / "log", 240.0)
    assert record["status"] == "correct"


def test_no_result_within_the_timeout_is_a_timeout(tmp_path: pathlib.Path) -> None:
    (tmp_path / "log").write_text("[ 200.0 s] search 1/1: conv2d\n")
    record = _outcome(None, True, tmp_path / "result.json", tmp_path / "log", 240.0)
    assert record["status"] == "timeout"
    assert "240 s" in record["error"] and "search 1/1" in record["error"]


def test_a_failed_exit_without_result_is_a_crash(tmp_path: pathlib.Path) -> None:
    record = _outcome(1, False, tmp_path / "result.json", tmp_path / "log", 240.0)
    assert record["status"] == "crashed" and "code 1" in record["error"]

"""benchmarks/teacher_acceptance.py resumes from --out: the last verdict of a program counts,
and --redo names statuses whose programs are judged again."""

from __future__ import annotations

import importlib.util
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _benchmark():
    spec = importlib.util.spec_from_file_location(
        "teacher_acceptance", ROOT / "benchmarks" / "teacher_acceptance.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_resume_keeps_last_verdict_and_redoes_named_statuses(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "pairs.jsonl"
    rows = [
        {"id": "a", "status": "timeout"},
        {"id": "a", "status": "correct"},  # a later verdict of the same program counts
        {"id": "b", "status": "timeout"},
        {"id": "c", "status": "wrong_answer"},
        {"id": "d", "error": "out of GPU memory", "retry": True},
    ]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"id": "e", "sta')  # torn
    bench = _benchmark()
    assert {k: r["status"] for k, r in bench.load_done(str(out)).items()} == {
        "a": "correct", "b": "timeout", "c": "wrong_answer"}  # fmt: skip
    assert set(bench.load_done(str(out), frozenset({"timeout"}))) == {"a", "c"}
    assert bench.parse_args(["--redo", "timeout,wrong_answer"]).redo == "timeout,wrong_answer"

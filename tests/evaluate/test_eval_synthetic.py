"""`drtriton eval synthetic`: best-of-K per program, and one run with the teacher on the CPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from drtriton.cli import main
from drtriton.evaluate.store import read_results
from drtriton.evaluate.synthetic import _pairs, program_results

PROGRAMS = [{"id": "p1", "level": 1, "source": "..."}, {"id": "p2", "level": 2, "source": "..."},
            {"id": "p3", "level": 2, "source": "..."}, {"id": "p4", "level": 3, "source": "..."}]  # fmt: skip
CANDIDATES = [
    {"id": "p1#v0", "program_id": "p1"}, {"id": "p1#v1", "program_id": "p1"},
    {"id": "p1#v2", "program_id": "p1"},
    {"id": "p2#v0", "program_id": "p2"}, {"id": "p2#v1", "program_id": "p2"},
    {"id": "p3#v0", "program_id": "p3"},
    {"id": "p4#v0", "program_id": "p4"},
]  # fmt: skip
VERDICTS = [
    {"id": "p1#v0", "status": "correct", "correct": True, "speedup": 1.5, "speedup_vs_compile": 0.9},
    {"id": "p1#v1", "status": "wrong_answer", "correct": False, "reason": "values differ"},
    {"id": "p1#v2", "status": "correct", "correct": True, "speedup": 2.5, "speedup_vs_compile": 1.1},
    {"id": "p2#v0", "status": "compile_error", "correct": False, "reason": "syntax"},
    {"id": "p2#v1", "status": "timeout", "correct": False, "reason": "slow"},
    {"id": "p3#v0", "error": "the pair has no candidate (`completion` or `candidate`)"},
]  # p4 has no verdict yet (interrupted): not a result  # fmt: skip


def test_best_of_k_per_program() -> None:
    results = {r["id"]: r for r in program_results(PROGRAMS, CANDIDATES, VERDICTS)}
    assert set(results) == {"p1", "p2", "p3"}
    p1 = results["p1"]  # the fastest correct variant, not the first
    assert (p1["correct"], p1["best_variant"], p1["speedup"]) == (True, "p1#v2", 2.5)
    assert (p1["variants"], p1["variants_correct"], p1["speedup_vs_compile"]) == (3, 2, 1.1)
    p2 = results["p2"]  # all wrong: the first variant's outcome is reported
    assert (p2["correct"], p2["status"], p2["reason"]) == (False, "compile_error", "syntax")
    assert results["p3"]["status"] == "no_candidate" and not results["p3"]["correct"]


def drtriton(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "drtriton", *args], capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip


RELU_TANH = """import torch

def fused_operator(x0):
    t0 = torch.relu(x0)
    t1 = torch.tanh(t0)
    return t1

def get_inputs():
    return [torch.randn(4, 32)]
"""


def test_teacher_on_one_program_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("drtriton._core")
    programs = tmp_path / "programs.jsonl"
    record = {"id": "relu-tanh", "level": 2, "ops": ["relu", "tanh"], "source": RELU_TANH}
    programs.write_text(json.dumps(record) + "\n")
    out = tmp_path / "eval"
    result = drtriton("eval", "synthetic", str(programs), "--out", str(out), "--workers", "1",
                      "--no-progress", timeout=600)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    [row] = read_results(out / "results.jsonl")
    assert (row["id"], row["status"], row["correct"]) == ("relu-tanh", "correct", True)
    assert "| 2 | 1 | 1 | 0 | 1 | 100.0% | 0 | 0 |" in (out / "summary.md").read_text()
    # A rerun asks the policy and the verifier nothing new and keeps the result.
    before = (out / "verdicts.jsonl").read_text()
    again = drtriton("eval", "synthetic", str(programs), "--out", str(out), "--no-progress")
    assert again.returncode == 0, again.stderr[-3000:]
    assert (out / "verdicts.jsonl").read_text() == before
    assert len(read_results(out / "candidates.jsonl")) == 1


def test_synthetic_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In process (drtriton.cli.main): the exit code and the message, no traceback."""

    def drtriton(*args: str) -> subprocess.CompletedProcess:
        code = main(list(args))
        return subprocess.CompletedProcess(args, code, "", capsys.readouterr().err)

    programs = tmp_path / "programs.jsonl"
    programs.write_text(json.dumps({"id": "a", "level": 1, "source": RELU_TANH}) + "\n")
    bad = drtriton("eval", "synthetic", str(programs), "--out", str(tmp_path / "o"),
                   "--policy", "gpt")  # fmt: skip
    assert bad.returncode == 2 and "argument --policy: must be template or hf:PATH" in bad.stderr
    variants = drtriton("eval", "synthetic", str(programs), "--out", str(tmp_path / "o"),
                        "--variants", "0")  # fmt: skip
    assert variants.returncode == 2 and "--variants: must be an integer >= 1" in variants.stderr
    no_id = tmp_path / "no_id.jsonl"
    no_id.write_text(json.dumps({"level": 1, "source": RELU_TANH}) + "\n")
    missing = drtriton("eval", "synthetic", str(no_id), "--out", str(tmp_path / "o"))
    assert missing.returncode == 2 and "no_id.jsonl:1" in missing.stderr


def test_candidates_name_the_programs_precision() -> None:
    program = {"id": "p", "level": 1, "source": "...", "precision": "bf16"}
    assert [c["precision"] for c in _pairs(program, ["a", "b"])] == ["bf16", "bf16"]
    assert _pairs({**program, "precision": None}, [])[0]["precision"] == "fp32"


def test_a_resumed_evaluation_keeps_one_precision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Verdicts of another mode would enter the tables unnoticed (verify-batch skips what it
    judged): refused before the policy runs. `error` records name no mode and pass."""
    programs, out = tmp_path / "programs.jsonl", tmp_path / "eval"
    programs.write_text(json.dumps({"id": "a", "level": 1, "source": RELU_TANH,
                                    "precision": "fp16"}) + "\n")  # fmt: skip
    out.mkdir()
    (out / "verdicts.jsonl").write_text('{"id": "x", "error": "no candidate"}\n'
                                        '{"id": "a#v0", "status": "correct", "precision": "fp32"}\n')  # fmt: skip
    assert main(["eval", "synthetic", str(programs), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "verdicts in precision fp32, not fp16" in err[0], err
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(
        programs.read_text() + json.dumps({"id": "b", "level": 1, "source": RELU_TANH}) + "\n"
    )
    assert main(["eval", "synthetic", str(mixed), "--out", str(out), "--no-progress"]) == 2
    assert "several precisions (fp16, fp32;" in capsys.readouterr().err

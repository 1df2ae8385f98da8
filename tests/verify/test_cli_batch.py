"""The `verify` and `verify-batch` commands: JSON verdict, exit codes, resumable batches."""

from __future__ import annotations

import argparse
import json
import pathlib

import pytest
from conftest import HERE, task_source

from drtriton.errors import UserError
from drtriton.verify import STATUSES
from drtriton.verify.cli import register

TASK = HERE / "tasks" / "add_relu.py"
GOOD = HERE / "honest" / "add_relu.py"
BAD = HERE / "adversarial" / "torch_fallback.py"
KEYS = {"status", "correct", "reason", "trials", "time_ms", "eager_ms", "compile_ms", "speedup"}


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="drtriton")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


def test_verify_json_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["verify", str(TASK), str(GOOD), "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert KEYS <= verdict.keys() and verdict["status"] == "correct" and verdict["correct"]
    assert run(["verify", str(TASK), str(BAD), "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["status"] == "not_genuine" and verdict["status"] in STATUSES


def test_verify_pins_the_input_seed(capsys: pytest.CaptureFixture[str]) -> None:
    cheat = HERE / "adversarial" / "precomputed_at_import.py"  # right only for seed 0's sets
    assert run(["verify", str(TASK), str(cheat), "--input-seed", "0"]) == 0
    capsys.readouterr()
    assert run(["verify", str(TASK), str(cheat), "--input-seed", "9"]) == 1
    assert "wrong_answer" in (out := capsys.readouterr().out) and "--input-seed 9 " in out
    with pytest.raises(SystemExit):
        run(["verify", str(TASK), str(GOOD), "--input-seed", "-1"])


def test_usage_errors_raise_user_error(tmp_path: pathlib.Path) -> None:
    with pytest.raises(UserError):
        run(["verify", str(TASK), str(tmp_path / "missing.py")])
    not_a_task = tmp_path / "task.py"
    not_a_task.write_text("x = 1\n")
    with pytest.raises(UserError):
        run(["verify", str(not_a_task), str(GOOD)])
    with pytest.raises(SystemExit):  # a range error is argparse's, caught while parsing
        run(["verify", str(TASK), str(GOOD), "--trials", "0"])


def test_batch_is_resumable(tmp_path: pathlib.Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    out = tmp_path / "results.jsonl"
    records = [
        {"id": "good", "source": task_source("add_relu"), "completion": GOOD.read_text()},
        {"id": "bad", "task": str(TASK), "candidate": BAD.read_text()},
        {"id": "static", "source": task_source("add_relu"), "completion": "import os\n"},
        {"id": "broken-task", "source": "x = 1\n", "completion": GOOD.read_text()},
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in records[:2]))
    assert run(["verify-batch", str(pairs), "--out", str(out), "--workers", "2", "--quiet"]) == 0
    first = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in first) == ["bad", "good"]
    # Resume with two more pairs (and a torn line at the end, as a killed run could leave).
    with out.open("a") as f:
        f.write('{"id": "tor')
    pairs.write_text("".join(json.dumps(r) + "\n" for r in records))
    # Exit 2: "broken-task" gets an `error`, not a verdict (the first run's pairs all had one).
    assert run(["verify-batch", str(pairs), "--out", str(out), "--workers", "1", "--quiet"]) == 2
    results = {}
    for line in out.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        results[record["id"]] = record
    assert results["good"]["status"] == "correct"
    assert results["bad"]["status"] == "not_genuine"
    assert results["static"]["status"] == "forbidden"
    assert "error" in results["broken-task"]
    assert len(out.read_text().splitlines()) == 5  # two from the first run, a torn line, two new


def _pairs(path: pathlib.Path, *precisions: str | None) -> None:
    records = []
    for i, precision in enumerate(precisions):
        record = {"id": f"p{i}", "source": task_source("add_relu"), "completion": GOOD.read_text()}
        if precision is not None:
            record["precision"] = precision
        records.append(record)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_batch_verifies_pairs_in_their_own_precision(tmp_path: pathlib.Path) -> None:
    pairs, out = tmp_path / "pairs.jsonl", tmp_path / "results.jsonl"
    _pairs(pairs, "fp16")
    assert run(["verify-batch", str(pairs), "--out", str(out), "--quiet"]) == 0
    (result,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert result["status"] == "correct" and result["precision"] == "fp16"
    # (fp16: the interpreter's bf16 arithmetic gives NaNs in this plain kernel.) Pairs without
    # the field take --precision (default fp32); an output of fp16 verdicts then
    # refuses fp32 ones, before anything runs.
    more = tmp_path / "more.jsonl"
    _pairs(more, None)
    with pytest.raises(UserError, match="holds verdicts in precision fp16"):
        run(["verify-batch", str(more), "--out", str(out), "--quiet"])
    assert len(out.read_text().splitlines()) == 1


@pytest.mark.parametrize(
    ("precisions", "flag", "message"),
    [
        (("fp16", None), [], "several precisions"),
        (("fp16",), ["--precision", "fp32"], "not fp32"),
    ],
)
def test_batch_refuses_pairs_of_two_modes(
    tmp_path: pathlib.Path, precisions: tuple[str | None, ...], flag: list[str], message: str
) -> None:
    pairs, out = tmp_path / "pairs.jsonl", tmp_path / "sub" / "results.jsonl"
    _pairs(pairs, *precisions)
    with pytest.raises(UserError, match=message):
        run(["verify-batch", str(pairs), "--out", str(out), "--quiet", *flag])
    assert not out.parent.exists()  # nothing left behind

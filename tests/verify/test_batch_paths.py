"""verify-batch: task paths are read from the pairs file's folder, a missing one is a user error,
and the closing line and exit code say what the results file holds."""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest
from conftest import HERE

from drtriton.cli import main
from drtriton.errors import UserError
from drtriton.verify.batch import TASK_FILE_KEY, resolve_task, tally

EXAMPLES = HERE.parents[1] / "examples" / "verify"
GOOD = (HERE / "honest" / "add_relu.py").read_text()


def write_jsonl(path: pathlib.Path, records: list[dict]) -> pathlib.Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_relative_task_path_is_read_from_the_pairs_folder(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tasks").mkdir()
    shutil.copy(HERE / "tasks" / "add_relu.py", tmp_path / "tasks" / "t.py")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # not where the path is relative to
    record = resolve_task({"id": "a", "task": "tasks/t.py"}, str(tmp_path))
    assert record[TASK_FILE_KEY] == str(tmp_path / "tasks" / "t.py")


def test_a_missing_task_path_is_a_user_error_naming_the_pair(tmp_path: pathlib.Path) -> None:
    with pytest.raises(UserError) as caught:
        resolve_task({"id": "pair-7", "task": "tasks/missing.py"}, str(tmp_path))
    assert "pair-7" in str(caught.value) and "tasks/missing.py" in str(caught.value)


def test_task_text_is_not_taken_for_a_path(tmp_path: pathlib.Path) -> None:
    source = (HERE / "tasks" / "add_relu.py").read_text()
    assert TASK_FILE_KEY not in resolve_task({"id": "a", "source": source}, str(tmp_path))
    one_line = {"id": "b", "task": "x = 1"}  # not a .py name: judged (and refused) as text
    assert resolve_task(one_line, str(tmp_path)) == one_line


def test_a_missing_task_path_stops_the_batch_with_exit_2(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [
        {"id": "ok", "task": str(HERE / "tasks" / "add_relu.py"), "completion": GOOD},
        {"id": "typo", "task": "add_relu_tsak.py", "completion": GOOD},
    ])  # fmt: skip
    out = tmp_path / "results.jsonl"
    assert main(["verify-batch", str(pairs), "--out", str(out), "--quiet"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("drtriton verify-batch: error: ")
    assert "'typo'" in lines[0] and "add_relu_tsak.py" in lines[0]
    assert not out.exists() or out.read_text() == ""  # nothing was judged


def test_the_shipped_pairs_work_from_another_directory(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "results.jsonl"
    pairs = str(EXAMPLES / "pairs.jsonl")
    assert main(["verify-batch", pairs, "--out", str(out), "--workers", "1", "--quiet"]) == 0
    results = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert results["gelu_module-honest"]["status"] == "correct"
    assert all("error" not in r for r in results.values())
    assert "3 of 3 pairs have a verdict" in capsys.readouterr().err


def test_tally_counts_what_the_results_hold(tmp_path: pathlib.Path) -> None:
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [{"id": i} for i in "abcde"])
    out = write_jsonl(tmp_path / "results.jsonl", [
        {"id": "a", "status": "correct"},
        {"id": "b", "status": "wrong_answer"},  # a rejection is an answer
        {"id": "c", "error": "the task does not define fused_operator"},
        {"id": "d", "error": "out of GPU memory", "retry": True},
        {"id": "zz", "status": "correct"},  # not one of these pairs
    ])  # fmt: skip
    counts = tally(str(pairs), str(out))
    assert (counts.pairs, counts.verdicts, counts.errors, counts.retries) == (5, 2, 1, 1)
    assert counts.exit_code == 2
    line = counts.summary(0, str(out))
    assert "2 of 5 pairs have a verdict" in line and "1 an error" in line
    assert "1 were not judged" in line and "1 no result" in line
    done = write_jsonl(tmp_path / "done.jsonl", [{"id": i, "status": "correct"} for i in "abcde"])
    assert tally(str(pairs), str(done)).exit_code == 0

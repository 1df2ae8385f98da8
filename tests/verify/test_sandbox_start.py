"""The sandbox reaches the interpreter wherever it lives (a venv under /tmp, which both
sandboxes hide), and a sandbox that cannot start it is the harness's error, never a verdict."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
from conftest import HERE, task_source

from drtriton.cli import main
from drtriton.errors import SandboxError
from drtriton.verify import sandbox, verify

TASK = HERE / "tasks" / "add_relu.py"
GOOD = HERE / "honest" / "add_relu.py"
ISOLATING = [level for level in ("bwrap", "unshare") if sandbox.works(level)]
needs_a_sandbox = pytest.mark.skipif(not ISOLATING, reason="neither bwrap nor unshare works here")


@pytest.fixture
def python_in_tmp(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """sys.executable moved under /tmp (pytest's tmp_path), which the sandboxes mask."""
    assert str(tmp_path).startswith("/tmp/")
    (tmp_path / "bin").mkdir()
    link = tmp_path / "bin" / "python3"
    link.symlink_to(os.path.realpath(sys.executable))
    monkeypatch.setattr(sys, "executable", str(link))
    return str(link)


def test_the_interpreter_directory_under_tmp_is_kept(python_in_tmp: str) -> None:
    kept = sandbox.kept_paths()
    assert os.path.dirname(python_in_tmp) in kept
    assert "/tmp" not in kept and "/dev/shm" not in kept  # other workers' directories stay hidden


def test_the_working_directory_is_not_kept(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path[1:], str(tmp_path)])
    assert str(tmp_path) not in sandbox.kept_paths()


@needs_a_sandbox
@pytest.mark.parametrize("level", ISOLATING)
def test_the_interpreter_starts_inside_the_sandbox(
    level: str, python_in_tmp: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The session's own /tmp entries on sys.path (a clean-clone CI under /tmp, test folders
    # other tests of the same xdist worker put there) are not the interpreter's: with 10 of
    # them the unshare sandbox refused to start, once in three CI runs.
    under_tmp = ("/tmp/", "/dev/shm/")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if not p.startswith(under_tmp)])
    assert sandbox._start_failure(level, python_in_tmp) is None


@needs_a_sandbox
def test_without_the_binding_the_sandbox_cannot_start_it(
    python_in_tmp: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The state before the fix: nothing bound back, so the masked /tmp hides the interpreter.
    monkeypatch.setattr(sandbox, "kept_paths", list)
    sandbox._start_failure.cache_clear()
    try:
        failure = sandbox._start_failure(ISOLATING[0], python_in_tmp)
        with pytest.raises(SandboxError, match="cannot start the worker's Python"):
            sandbox.ensure_starts(ISOLATING[0])
    finally:
        sandbox._start_failure.cache_clear()  # the real bindings' answers for later tests
    assert failure is not None


@needs_a_sandbox
def test_an_honest_candidate_from_a_tmp_interpreter_is_correct(python_in_tmp: str) -> None:
    verdict = verify(task_source("add_relu"), GOOD.read_text(), sandbox=ISOLATING[0])
    assert verdict.status == "correct", verdict.reason


@needs_a_sandbox
def test_a_venv_under_tmp_verifies(tmp_path: pathlib.Path) -> None:
    """The user's case end to end: the harness itself runs from a venv in /tmp."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(venv)], check=True, timeout=120)  # fmt: skip
    script = (
        "import sys; from drtriton.verify import verify; "
        f"v = verify(open({str(TASK)!r}).read(), open({str(GOOD)!r}).read()); "
        "print(v.status, v.sandbox, sys.prefix)"
    )
    python_path = str(pathlib.Path(sandbox.PACKAGE_ROOT))
    done = subprocess.run([str(venv / "bin" / "python3"), "-c", script], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": python_path})  # fmt: skip
    status, level, prefix = done.stdout.split()[-3:]
    assert (status, prefix) == ("correct", str(venv)), done.stdout + done.stderr[-2000:]
    assert level in ISOLATING


def test_a_sandbox_that_cannot_start_raises_instead_of_a_verdict(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    with pytest.raises(SandboxError, match="no-such-python"):
        verify(task_source("add_relu"), GOOD.read_text())


def test_the_cli_turns_it_into_exit_2_with_the_reason(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    assert main(["verify", str(TASK), str(GOOD)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("drtriton verify: error: ")
    assert "cannot start the worker's Python" in lines[0] and "crashed" not in captured.out
    # verify-batch: stopped before any pair, so no pair is recorded as the candidate's failure
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(f'{{"id": "a", "task": "{TASK}", "completion": "x = 1\\n"}}\n')
    out = tmp_path / "results.jsonl"
    assert main(["verify-batch", str(pairs), "--out", str(out), "--quiet"]) == 2
    assert "cannot start the worker's Python" in capsys.readouterr().err
    assert not out.exists() or out.read_text() == ""

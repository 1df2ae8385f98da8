"""The directories the sandboxes bind for the worker's interpreter are the worker's own search
path, not whatever this process put on sys.path (verify/sandbox.py kept_paths)."""

from __future__ import annotations

import pathlib
import sys

import pytest

from drtriton.verify import sandbox


def test_a_directory_this_process_added_to_sys_path_is_not_bound(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not sandbox._under(str(tmp_path), sandbox.MASKED):
        pytest.skip(f"{tmp_path} is not under {sandbox.MASKED}")
    added = tmp_path / "tests_of_some_checkout"
    added.mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(added)])
    assert str(added) not in sandbox.kept_paths()
    # What the worker's interpreter does read, its PYTHONPATH, is bound.
    monkeypatch.setenv("PYTHONPATH", str(added))
    assert str(added) in sandbox.kept_paths()
    assert str(added) in sandbox.worker_search_path(sys.executable, sandbox.worker_pythonpath())


def test_the_worker_search_path_finds_drtriton() -> None:
    path = sandbox.worker_search_path(sys.executable, sandbox.worker_pythonpath())
    assert sandbox.PACKAGE_ROOT in path

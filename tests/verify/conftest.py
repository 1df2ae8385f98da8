"""Shared helpers for the verifier's tests: tasks, honest and adversarial candidates on disk."""

from __future__ import annotations

import os
import pathlib
from collections.abc import Iterator

import pytest

from drtriton.verify import Verifier

HERE = pathlib.Path(__file__).resolve().parent
os.environ.pop("TRITON_INTERPRET", None)  # the worker sets it; the harness does not need it


def task_source(name: str) -> str:
    return (HERE / "tasks" / f"{name}.py").read_text()


def headers(path: pathlib.Path) -> dict[str, str]:
    """`# key: value` lines at the top of an adversarial candidate."""
    out = {}
    for line in path.read_text().splitlines():
        if not line.startswith("# ") or ":" not in line:
            break
        key, _, value = line[2:].partition(":")
        out[key.strip()] = value.strip()
    return out


@pytest.fixture(scope="module")
def verifier() -> Iterator[Verifier]:
    """One Verifier per test module: the next test's worker starts while this one runs."""
    with Verifier() as v:
        yield v

"""Honest kernels are accepted: elementwise, reduction, matmul, softmax, strided, copy, module."""

from __future__ import annotations

import pytest
from conftest import HERE, task_source

from drtriton.verify import verify

NAMES = sorted(p.stem for p in (HERE / "honest").glob("*.py"))


@pytest.mark.parametrize("name", NAMES)
def test_honest_kernel_is_correct(name: str) -> None:
    verdict = verify(
        task_source(name), (HERE / "honest" / f"{name}.py").read_text(), timeout=120, prewarm=True
    )
    assert verdict.status == "correct", verdict.to_json()
    assert verdict.trials == 5
    assert verdict.time_ms is None and verdict.speedup is None  # CPU: correctness only
    assert verdict.sandbox in ("bwrap", "unshare", "none")


def test_honest_kernel_without_sandbox() -> None:
    verdict = verify(task_source("add_relu"), (HERE / "honest" / "add_relu.py").read_text(),
                     sandbox="none")  # fmt: skip
    assert verdict.status == "correct" and verdict.sandbox == "none"


def test_unshare_sandbox_when_available() -> None:
    from drtriton.verify import sandbox

    if not sandbox.works("unshare"):
        pytest.skip("unshare cannot create namespaces here")
    verdict = verify(task_source("add_relu"), (HERE / "honest" / "add_relu.py").read_text(),
                     sandbox="unshare")  # fmt: skip
    assert verdict.status == "correct" and verdict.sandbox == "unshare", verdict.to_json()


def test_unshare_without_pid_namespace() -> None:
    """The fallback for containers where a user namespace cannot mount a fresh /proc."""
    from drtriton.verify import sandbox

    if not sandbox.works("unshare"):
        pytest.skip("unshare cannot create namespaces here")
    saved = sandbox._unshare_pid[0]
    sandbox._unshare_pid[0] = False
    try:
        assert sandbox._probe("unshare")
        verdict = verify(task_source("add_relu"), (HERE / "adversarial" / "write_outside.py").read_text(),
                         sandbox="unshare", static_checks=False)  # fmt: skip
        assert verdict.status == "runtime_error" and "Read-only" in verdict.reason, (
            verdict.to_json()
        )
    finally:
        sandbox._unshare_pid[0] = saved

"""Honest kernels are accepted: elementwise, reduction, matmul, softmax, strided, copy, module."""

from __future__ import annotations

import pytest
from conftest import HERE, task_source

from drtriton.verify import Verifier, verify

NAMES = sorted(p.stem for p in (HERE / "honest").glob("*.py"))


@pytest.mark.parametrize("name", NAMES)
def test_honest_kernel_is_correct(name: str, verifier: Verifier) -> None:
    verdict = verifier.verify(
        task_source(name), (HERE / "honest" / f"{name}.py").read_text(), timeout=120, prewarm=True
    )
    assert verdict.status == "correct", verdict.to_json()
    assert verdict.trials == 5
    assert verdict.time_ms is None and verdict.speedup is None  # CPU: correctness only
    assert verdict.extra["compile_pass_s"] is not None  # the kernels' compile pass ran
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


@pytest.mark.parametrize(
    ("user_ns", "pid_ns"), [(False, True), (False, False), (True, True), (True, False)]
)
def test_unshare_variants_isolate(user_ns: bool, pid_ns: bool) -> None:
    """Every unshare variant the probe may pick (containers: no CAP_SYS_ADMIN, masked /proc)."""
    import os

    from drtriton.verify import sandbox

    if not user_ns and os.geteuid() != 0:
        pytest.skip("needs root")
    if not sandbox.works("unshare"):
        pytest.skip("unshare cannot create namespaces here")
    saved = sandbox._unshare_user[0], sandbox._unshare_pid[0]
    sandbox._unshare_user[0], sandbox._unshare_pid[0] = user_ns, pid_ns
    try:
        if not sandbox._probe("unshare"):
            pytest.skip("this variant does not work here")
        escape = (HERE / "adversarial" / "write_outside.py").read_text()
        verdict = verify(task_source("add_relu"), escape, sandbox="unshare", static_checks=False)
        assert verdict.status == "runtime_error" and "Read-only" in verdict.reason, (
            verdict.to_json()
        )
    finally:
        sandbox._unshare_user[0], sandbox._unshare_pid[0] = saved

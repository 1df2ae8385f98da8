"""One deliberately cheating candidate per trick; each must get its expected verdict.

Each file in adversarial/ starts with `# trick:`, `# task:`, `# expect:` and, for the tests of the
dynamic defences behind the static rules, `# static: off`.
"""

from __future__ import annotations

import pathlib

import pytest
from conftest import HERE, headers, task_source

from drtriton.verify import Verifier, verify

# Cheating candidates that must not even parse are stored as .txt (so linters leave them alone).
CASES = sorted([*(HERE / "adversarial").glob("*.py"), *(HERE / "adversarial").glob("*.txt")])


CPU_CASES = [p for p in CASES if headers(p).get("device") != "cuda"]


def judge(path: pathlib.Path, device: str = "cpu", verifier: Verifier | None = None) -> None:
    meta = headers(path)
    timeout = 20 if meta["expect"] == "timeout" else 120
    verdict = verify(
        task_source(meta["task"]),
        path.read_text(),
        device=device,
        static_checks=meta.get("static") != "off",
        timeout=timeout if device == "cpu" else 4 * timeout,
        prewarm=True,  # the next test's worker starts while this one runs
        verifier=verifier,
    )
    expected = meta["expect"].split()  # some tricks have two acceptable verdicts
    assert verdict.status in expected, f"{meta['trick']}: {verdict.to_json()}"
    assert not verdict.correct


@pytest.mark.parametrize("path", CPU_CASES, ids=[p.stem for p in CPU_CASES])
def test_adversarial_candidate_gets_its_verdict(path: pathlib.Path, verifier: Verifier) -> None:
    judge(path, verifier=verifier)


def test_every_case_is_documented() -> None:
    assert len(CASES) >= 30
    for path in CASES:
        meta = headers(path)
        assert {"trick", "task", "expect"} <= meta.keys(), path.name

"""One deliberately cheating candidate per trick; each must get its expected verdict.

Each file in adversarial/ starts with `# trick:`, `# task:`, `# expect:` and, for the tests of the
dynamic defences behind the static rules, `# static: off`.
"""

from __future__ import annotations

import pathlib

import pytest
from conftest import HERE, headers, task_source

from drtriton.verify import verify

CASES = sorted((HERE / "adversarial").glob("*.py"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_adversarial_candidate_gets_its_verdict(path: pathlib.Path) -> None:
    meta = headers(path)
    timeout = 20 if meta["expect"] == "timeout" else 120
    verdict = verify(
        task_source(meta["task"]),
        path.read_text(),
        static_checks=meta.get("static") != "off",
        timeout=timeout,
    )
    assert verdict.status == meta["expect"], f"{meta['trick']}: {verdict.to_json()}"
    assert not verdict.correct


def test_every_case_is_documented() -> None:
    assert len(CASES) >= 30
    for path in CASES:
        meta = headers(path)
        assert {"trick", "task", "expect"} <= meta.keys(), path.name

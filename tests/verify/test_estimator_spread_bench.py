"""benchmarks/estimator_spread.py: resampled spread of each statistic; bad input exits 2."""

from __future__ import annotations

import json
import pathlib
import random
from collections.abc import Callable
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def tool(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("estimator_spread.py")


def test_a_bimodal_kernel_spreads_by_its_median_not_by_its_trimmed_mean(tool) -> None:
    rng = random.Random(1)
    pool = [rng.choice((77.0, 84.0)) + rng.uniform(-0.3, 0.3) for _ in range(400)]
    out = tool.spread(pool, 90, 5, 200, random.Random(0))
    assert out["median"][2] > 0.3  # over 1.05 in a large share of draws
    assert out["trimmed 10%"][2] == 0.0 and out["trimmed 10%"][1] < 1.03


def test_the_table_and_bad_input(tool, tmp_path: pathlib.Path, capsys) -> None:
    path = tmp_path / "v.jsonl"
    rows = [{"id": f"k#{i}", "time_series": {"us": [10.0, 10.5, 11.0] * 10}} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert tool.main([str(path), "--draws", "20"]) == 0
    assert "| k | 90 | median |" in capsys.readouterr().out
    assert tool.main([str(tmp_path / "missing.jsonl")]) == 2
    (tmp_path / "empty.jsonl").write_text('{"id": "k#0"}\n')
    assert tool.main([str(tmp_path / "empty.jsonl")]) == 2

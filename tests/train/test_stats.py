"""Intervals of held-out evaluations (train/stats.py), the evaluation's use of them, and
benchmarks/rl_compare.py's table."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from drtriton.train.evaluate import summarize
from drtriton.train.rewards import Reward
from drtriton.train.stats import (
    Z95,
    mean_interval,
    paired_difference,
    program_id,
    program_means,
    rate_interval,
)


def test_samples_are_grouped_by_program() -> None:
    assert program_id("l1-3#2") == "l1-3" and program_id("l1-3") == "l1-3"
    rows = [{"id": "a#0", "correct": True}, {"id": "a#1", "correct": False},
            {"id": "b#0", "correct": True}, {"id": "b#1", "correct": True},
            {"id": "c", "correct": False, "log_speedup": None}]  # fmt: skip
    assert program_means(rows) == {"a": 0.5, "b": 1.0, "c": 0.0}
    assert program_means(rows, "log_speedup") == {}  # None values are skipped


def test_the_interval_is_the_normal_one_over_programs_by_hand() -> None:
    mean, lo, hi = mean_interval([0.0, 1.0, 1.0, 0.0, 0.5])
    sd = math.sqrt((0.25 + 0.25 + 0.25 + 0.25 + 0.0) / 4)
    assert mean == 0.5
    assert (lo, hi) == pytest.approx((0.5 - Z95 * sd / math.sqrt(5), 0.5 + Z95 * sd / math.sqrt(5)))
    # A rate's interval stays within [0, 1]; one program gives none.
    assert rate_interval({"a": 1.0, "b": 0.0}) == (0.5, 0.0, 1.0)  # 0.5 +- 0.98, clipped
    assert math.isnan(mean_interval([0.7])[1]) and math.isnan(mean_interval([])[0])


def test_the_paired_difference_is_taken_over_common_programs() -> None:
    after = {"p1": 1.0, "p2": 1.0, "p3": 0.5}
    before = {"p1": 0.5, "p2": 0.5, "p3": 0.0, "p4": 1.0}
    assert paired_difference(after, before) == (0.5, 0.5, 0.5, 3)
    # Unpaired, those rates' intervals would overlap; paired, the gain is certain.
    assert rate_interval(after)[1] < rate_interval(before)[2]


def test_the_evaluation_reports_pass_at_1_with_its_interval_over_programs() -> None:
    records = [{"id": f"p{i}#{k}", "level": 1} for i in range(4) for k in range(2)]
    rewards = [Reward(correct, None, "ok") for correct in
               (True, True, True, False, False, False, True, True)]  # fmt: skip
    out = summarize(rewards, records)
    assert out["programs"] == 4 and out["pass@1"] == pytest.approx(5 / 8)
    _, lo, hi = mean_interval([1.0, 0.5, 0.0, 1.0], 0.0, 1.0)
    assert out["pass@1_ci"] == pytest.approx([lo, hi])
    assert "pass@1_ci" not in summarize(rewards)  # without the records: no programs to pair


@pytest.fixture(scope="module")
def tool(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("rl_compare.py")


def _samples(path: Path, rates: list[float], k: int = 4) -> Path:
    """Program i answered k times, the first round(rates[i] * k) correct (2x faster)."""
    lines = []
    for i, rate in enumerate(rates):
        for j in range(k):
            ok = j < round(rate * k)
            lines.append({"id": f"p{i}#{j}", "level": 1 + i % 2, "correct": ok,
                          "log_speedup": math.log(2.0) if ok else None})  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_compare_tells_a_gain_beyond_the_interval_from_none(tool, tmp_path: Path) -> None:
    base = [0.25, 0.5, 0.75, 0.0, 0.5, 0.25, 1.0, 0.5] * 3
    better = [min(1.0, r + 0.25) for r in base]
    sft = _samples(tmp_path / "sft.jsonl", base)
    rl = _samples(tmp_path / "rl.jsonl", better)
    same = _samples(tmp_path / "same.jsonl", base)
    out = tmp_path / "table.json"
    assert tool.main([f"SFT={sft}", f"DRPO={rl}", f"SAME={same}", "--out", str(out)]) == 0
    table = json.loads(out.read_text())
    assert set(table) == {"1", "2", "all"}
    drpo, copy = table["all"]["DRPO"], table["all"]["SAME"]
    assert drpo["paired_programs"] == 24 and drpo["beyond_ci"] is True
    assert drpo["diff"] == pytest.approx(sum(b - a for a, b in zip(base, better, strict=True)) / 24)
    assert copy["diff"] == 0.0 and copy["beyond_ci"] is False
    assert table["all"]["SFT"]["mean_log_speedup"] == pytest.approx(math.log(2.0))
    assert "diff" not in table["all"]["SFT"]


def test_bad_arguments_exit_2(tool, tmp_path: Path) -> None:
    assert tool.main(["SFT"]) == 2
    assert tool.main([f"SFT={tmp_path / 'missing.jsonl'}"]) == 2
    (tmp_path / "bad.jsonl").write_text('{"level": 1}\n')
    assert tool.main([f"SFT={tmp_path / 'bad.jsonl'}"]) == 2
    (tmp_path / "empty.jsonl").write_text("")
    assert tool.main([f"SFT={tmp_path / 'empty.jsonl'}"]) == 2

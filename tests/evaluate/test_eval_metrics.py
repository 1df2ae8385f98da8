"""fast_p, geometric means and the by-level statistics on hand-made result records."""

from __future__ import annotations

import math

import pytest

from drtriton.evaluate.metrics import by_level, compile_failed, fast_p, geomean, level_stats


def rec(level: int, correct: bool, speedup: float | None = None,
        vs_compile: float | None = None, **extra: object) -> dict:  # fmt: skip
    return {"level": level, "correct": correct, "speedup": speedup,
            "speedup_vs_compile": vs_compile, **extra}  # fmt: skip


# Level 1: four problems run. Speedups vs eager 0.5 (correct), 1.2 (correct), 3.0 (correct),
# 5.0 (wrong: does not count). vs compile: 0.25, 0.9, 2.0, (none).
LEVEL1 = [
    rec(1, True, 0.5, 0.25),
    rec(1, True, 1.2, 0.9),
    rec(1, True, 3.0, 2.0),
    rec(1, False, 5.0, 4.0, status="wrong_answer"),
]


def test_fast_p_counts_correct_and_faster_over_all_problems_run() -> None:
    assert fast_p(LEVEL1, 0.0) == pytest.approx(3 / 4)
    assert fast_p(LEVEL1, 1.0) == pytest.approx(2 / 4)
    assert fast_p(LEVEL1, 1.5) == pytest.approx(1 / 4)
    assert fast_p(LEVEL1, 2.0) == pytest.approx(1 / 4)
    assert fast_p(LEVEL1, 3.0) == 0.0  # strictly faster than p
    assert fast_p(LEVEL1, 1.0, "speedup_vs_compile") == pytest.approx(1 / 4)
    assert fast_p(LEVEL1, 0.5, "speedup_vs_compile") == pytest.approx(2 / 4)


def test_fast_p_is_none_without_timings() -> None:
    untimed = [rec(1, True), rec(1, False)]
    assert fast_p(untimed, 0.0) is None
    assert fast_p([], 1.0) is None


def test_geomean_by_hand() -> None:
    assert geomean([0.5, 1.2, 3.0]) == pytest.approx((0.5 * 1.2 * 3.0) ** (1 / 3))
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    # None, zero, negative and non-finite values are not speedups
    assert geomean([None, 0.0, -1.0, math.inf, 4.0]) == pytest.approx(4.0)
    assert geomean([]) is None


def test_level_stats_geomeans_only_over_correct() -> None:
    s = level_stats(LEVEL1, label="1")
    assert (s.problems, s.run, s.correct, s.timed, s.not_run) == (4, 4, 3, 3, 0)
    assert s.geomean_eager == pytest.approx((0.5 * 1.2 * 3.0) ** (1 / 3))
    assert s.geomean_compile == pytest.approx((0.25 * 0.9 * 2.0) ** (1 / 3))
    assert s.fast_eager[1.0] == pytest.approx(0.5)
    assert s.correct_rate == pytest.approx(0.75)


def test_by_level_with_not_run_and_all_row() -> None:
    level2 = [rec(2, True, 2.5, 1.5), rec(2, False, status="timeout")]
    not_run = [{"level": 2, "id": "L2_9"}, {"level": 2, "id": "L2_10"}]
    rows = by_level(LEVEL1 + level2, not_run)
    assert [r.level for r in rows] == ["1", "2", "all"]
    two = rows[1]
    assert (two.problems, two.run, two.not_run, two.correct) == (4, 2, 2, 1)
    # not-run problems are not in the denominator: 1 fast of 2 run
    assert two.fast_eager[2.0] == pytest.approx(0.5)
    assert two.fast_compile[1.5] == 0.0  # 1.5 is not > 1.5
    total = rows[2]
    assert (total.problems, total.run, total.correct) == (8, 6, 4)
    assert total.fast_eager[1.0] == pytest.approx(3 / 6)


def test_compile_failures_are_counted_where_baselines_ran() -> None:
    assert compile_failed({"eager_ms": 1.0, "compile_ms": None})
    assert compile_failed({"compile_error": "boom"})
    assert not compile_failed({"eager_ms": 1.0, "compile_ms": 2.0})
    assert not compile_failed({"eager_ms": None, "compile_ms": None})  # never timed (CPU)
    stats = level_stats([rec(1, True, 2.0, None, eager_ms=1.0, compile_ms=None),
                         rec(1, True, 2.0, 1.0, eager_ms=1.0, compile_ms=0.5)])  # fmt: skip
    assert stats.compile_failed == 1

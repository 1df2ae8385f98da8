"""The Python API: determinism, resuming, levels, bounds and their errors."""

from __future__ import annotations

import pytest

from drtriton.errors import UserError
from drtriton.synth import Synthesizer, bounds, parse_levels, regenerate, synthesize

FIELDS = {"id", "level", "ops", "source", "flops", "bytes", "seed", "index", "preset"}


def test_records_have_the_design_fields():
    records = synthesize(20, levels="1-3", preset="tiny", seed=3)
    assert len(records) == 20
    for r in records:
        assert FIELDS <= set(r)
        assert r["level"] == len(r["ops"])
        assert 1 <= r["level"] <= 3
        assert "def fused_operator(" in r["source"]
    assert len({r["id"] for r in records}) == 20
    assert len({r["source"] for r in records}) == 20


def test_same_output_whatever_the_thread_count():
    one = synthesize(150, levels="1-5", preset="paper", seed=11, threads=1)
    two = synthesize(150, levels="1-5", preset="paper", seed=11, threads=2)
    assert [r["source"] for r in one] == [r["source"] for r in two]
    other = synthesize(150, levels="1-5", preset="paper", seed=12, threads=2)
    assert [r["source"] for r in one] != [r["source"] for r in other]


def test_resume_continues_the_same_sequence():
    whole = synthesize(60, levels="1-4", preset="tiny", seed=5)
    first = Synthesizer("1-4", "tiny", seed=5)
    head = first.next(25)
    rest = Synthesizer("1-4", "tiny", seed=5, threads=2)
    rest.resume(head)
    assert [r["source"] for r in head + rest.next(35)] == [r["source"] for r in whole]


def test_levels_are_balanced_and_respected():
    records = synthesize(100, levels=[2, 7], preset="paper", seed=1)
    levels = [r["level"] for r in records]
    assert set(levels) == {2, 7}
    assert abs(levels.count(2) - levels.count(7)) <= 10


def test_paper_bounds_hold():
    b = bounds("paper")
    for r in synthesize(200, levels="1-5", preset="paper", seed=2, threads=2):
        assert b["flops_min"] <= r["flops"] <= b["flops_max"]


def test_parse_levels():
    assert parse_levels("1-5") == [1, 2, 3, 4, 5]
    assert parse_levels("1,3,10") == [1, 3, 10]
    assert parse_levels(7) == [7]
    for bad in ("0", "x", "3-", "65"):
        with pytest.raises(UserError):
            parse_levels(bad)


def test_overrides_apply_and_bad_ones_are_user_errors():
    assert bounds("paper", dim_max=64)["dim_max"] == 64
    for r in synthesize(30, levels="1-3", preset="tiny", seed=4, dim_max=4, elem_max=64):
        assert "torch.randn(" in r["source"] or "torch.rand(" in r["source"]
    with pytest.raises(UserError, match="unknown bound"):
        bounds("paper", dims_max=3)
    with pytest.raises(UserError, match="dim_max < dim_min"):
        synthesize(1, preset="paper", dim_min=8, dim_max=4)
    with pytest.raises(UserError, match="unknown preset"):
        synthesize(1, preset="huge")


def test_impossible_bounds_error_quickly():
    with pytest.raises(UserError, match="too tight"):
        synthesize(1, levels=2, preset="paper", flops_min=1e30, flops_max=2e30, max_attempts=10)


def test_a_record_regenerates_from_its_seed():
    for r in synthesize(10, levels="1-5", preset="paper", seed=8, threads=2):
        assert regenerate(r) == r["source"]


def test_processes_give_the_same_records_and_resume():
    one = synthesize(300, levels="1-5", preset="paper", seed=21, threads=1)
    many = synthesize(300, levels="1-5", preset="paper", seed=21, processes=2)
    assert [r["source"] for r in many] == [r["source"] for r in one]
    with Synthesizer("1-5", "paper", seed=21, processes=2) as synth:
        head = synth.next(100)
        stats = synth.stats()
    assert stats["kept"] == 100 and sum(o["emitted"] for o in stats["ops"].values()) > 100
    with Synthesizer("1-5", "paper", seed=21, processes=2) as rest:
        rest.resume(head)
        tail = rest.next(200)
    assert [r["source"] for r in head + tail] == [r["source"] for r in one]

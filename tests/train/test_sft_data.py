"""`drtriton sft-data`: level-1 programs per operator, teacher answers, verifier filtering."""

import json
import re

import pytest

from drtriton.errors import UserError
from drtriton.train.rewards import BatchVerifier, Reward
from drtriton.train.sft_data import SFTDataConfig, build, level1_programs, weak_ops


class HalfVerifier:
    def judge(self, tasks, codes):
        return [Reward(i % 2 == 0 and bool(c.strip()), None, "fake") for i, c in enumerate(codes)]


def test_level1_programs_bucket_by_operator():
    try:
        programs = level1_programs(3, {"relu", "softmax"}, "tiny", seed=0)
    except Exception as exc:  # an extension built without the synthesizer
        pytest.skip(str(exc))
    ops = [p["ops"][0] for p in programs]
    assert sorted(ops) == ["relu"] * 3 + ["softmax"] * 3
    assert all(p["level"] == 1 for p in programs)


def test_level1_programs_respect_dim_min():
    try:
        programs = level1_programs(4, {"relu", "add"}, "tiny", seed=0, dim_min=2)
    except Exception as exc:  # an extension built without the synthesizer
        pytest.skip(str(exc))
    # The first input's dims (a 1 elsewhere is a broadcast operand, which the bound allows).
    firsts = [re.search(r"torch\.randn\(([\d, ]+)\)", p["source"]).group(1) for p in programs]
    dims = [int(d) for shape in firsts for d in shape.split(",")]
    assert len(firsts) == 8 and min(dims) >= 2
    unbounded = level1_programs(4, {"relu", "add"}, "tiny", seed=0)
    assert any(re.search(r"torch\.randn\((1,|[\d, ]+, 1[,)])", p["source"]) for p in unbounded)


def test_build_keeps_verified_pairs(tmp_path):
    out = tmp_path / "pairs.jsonl"
    try:
        summary = build(
            SFTDataConfig(out=str(out), per_op=2, ops="relu,sigmoid", preset="tiny"), HalfVerifier()
        )
    except Exception as exc:
        pytest.skip(str(exc))
    assert summary == {
        op: {"programs": 2, "answers": 2, "verified": 1} for op in ("relu", "sigmoid")
    }
    pairs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(pairs) == 2 and all("def triton_fused_operator" in p["completion"] for p in pairs)
    assert all(p["teacher"] == "teacher" and p["correct"] for p in pairs)


def test_pairs_name_their_precision_and_a_file_keeps_one(tmp_path):
    """Issue 21 item 4: the programs are drawn in --precision, the verifier judges in it, and
    an output of another mode is refused before anything is drawn."""
    out = tmp_path / "pairs.jsonl"
    cfg = SFTDataConfig(out=str(out), per_op=1, ops="relu", preset="tiny", precision="fp16")
    try:
        build(cfg, HalfVerifier())
    except Exception as exc:  # an extension built without the synthesizer
        pytest.skip(str(exc))
    assert [json.loads(x)["precision"] for x in out.read_text().splitlines()] == ["fp16"]
    with pytest.raises(UserError, match="holds pairs in precision fp16, not fp32"):
        build(SFTDataConfig(out=str(out), per_op=1, ops="relu", preset="tiny"), HalfVerifier())
    assert BatchVerifier(precision="fp16").opts.precision == "fp16"


def test_weak_ops():
    pairs = [{"ops": ["relu"], "correct": True}, {"ops": ["conv2d"], "correct": False},
             {"ops": ["conv2d"], "correct": True}, {"ops": ["softmax"], "correct": False}]  # fmt: skip
    assert weak_ops(pairs, threshold=0.6) == ["conv2d", "softmax"]

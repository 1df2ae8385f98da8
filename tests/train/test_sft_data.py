"""`drtriton sft-data`: level-1 programs per operator and chains per level (issue 23 item 1),
teacher answers, verifier filtering, operator coverage, a tokenizer trained on the pairs."""

import json
import re

import pytest

from drtriton.cli import main
from drtriton.errors import UserError
from drtriton.train.pair_coverage import catalog_operators, coverage_path
from drtriton.train.rewards import BatchVerifier, Reward
from drtriton.train.sft_data import (
    SFTDataConfig,
    build,
    chain_programs,
    level1_programs,
    weak_ops,
)


class HalfVerifier:
    def judge(self, tasks, codes):
        return [Reward(i % 2 == 0 and bool(c.strip()), None, "fake") for i, c in enumerate(codes)]


class AcceptAll:
    def judge(self, tasks, codes):
        return [Reward(bool(c.strip()), None, "fake") for c in codes]


class RejectAll:
    def judge(self, tasks, codes):
        return [Reward(False, None, "fake") for _ in codes]


def built(cfg: SFTDataConfig, verifier) -> dict:
    try:
        return build(cfg, verifier)
    except Exception as exc:  # an extension built without the synthesizer or the teacher
        pytest.skip(str(exc))


def read_pairs(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


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


def test_chain_programs_per_level():
    try:
        programs = chain_programs(3, [2, 3], None, "tiny", seed=0, dim_min=2, precision="fp16")
    except Exception as exc:  # an extension built without the synthesizer
        pytest.skip(str(exc))
    assert [p["level"] for p in programs] == [2, 2, 2, 3, 3, 3]
    assert all(len(p["ops"]) == p["level"] and p["precision"] == "fp16" for p in programs)
    # Ids name the level: level 1 of the same seed has the synthesizer's synth-tiny-0-INDEX.
    assert [p["id"] for p in programs] == [
        f"synth-tiny-0-l{p['level']}-{p['index']}" for p in programs
    ]
    assert len({p["source"] for p in programs}) == 6
    named = chain_programs(2, [2, 3], {"relu"}, "tiny", seed=0)
    assert [p["level"] for p in named] == [2, 2, 3, 3]
    assert all("relu" in p["ops"] for p in named)


def test_chains_are_answered_by_the_teacher_and_verified(tmp_path):
    """Levels 2-3 through the real verifier (CPU interpreter, one worker: ~10 s, mostly its
    start); seed 3's chains hold a repeated operator (tanh, cumsum, cumsum), counted once."""
    out = tmp_path / "pairs.jsonl"
    cfg = SFTDataConfig(out=str(out), levels="2-3", per_level=1, ops="relu,sigmoid,tanh",
                        preset="tiny", seed=3, dim_min=2, generic_shapes=True)  # fmt: skip
    summary = built(cfg, BatchVerifier("cpu", workers=1, compile_baseline=False))
    one = {"programs": 1, "answers": 1, "verified": 1}
    assert summary == {"level 2": one, "level 3": one}
    pairs = read_pairs(out)
    assert [p["level"] for p in pairs] == [2, 3]
    assert all(p["status"] == "correct" and p["id"].endswith("#teacher0") for p in pairs)
    levels = json.loads(coverage_path(out).read_text())["levels"]
    for p in pairs:
        counts = levels[str(p["level"])]["operators"]
        assert {op for op, n in counts.items() if n} == set(p["ops"])
        assert sum(counts.values()) == len(set(p["ops"]))


def test_coverage_lists_every_operator_and_counts_the_whole_file(tmp_path):
    out = tmp_path / "pairs.jsonl"
    cfg = SFTDataConfig(out=str(out), per_op=2, ops="relu,sigmoid", levels="1-2", per_level=2,
                        preset="tiny")  # fmt: skip
    summary = built(cfg, HalfVerifier())  # one judge call: relu, relu, sigmoid, sigmoid, L2, L2
    half = {"programs": 2, "answers": 2, "verified": 1}
    assert summary == {"level 2": half, "relu": half, "sigmoid": half}
    chain = next(p for p in read_pairs(out) if p["level"] == 2)
    report = json.loads(coverage_path(out).read_text())
    assert report["pairs_file"] == "pairs.jsonl" and set(report["levels"]) == {"1", "2"}
    level1, level2 = report["levels"]["1"], report["levels"]["2"]
    assert set(level1["operators"]) == set(catalog_operators())  # "where" too: never drawn
    assert level1["operators"]["where"] == 0 and level1["operators"]["conv2d"] == 0
    assert {op for op, n in level1["operators"].items() if n} == {"relu", "sigmoid"}
    assert (level1["pairs"], level1["covered"], level2["pairs"]) == (2, 2, 1)
    assert {op for op, n in level2["operators"].items() if n} == set(chain["ops"])
    # A second run appends (another seed, other programs): the coverage is of the whole file.
    built(SFTDataConfig(out=str(out), per_op=1, ops="relu", preset="tiny", seed=1), AcceptAll())
    level1 = json.loads(coverage_path(out).read_text())["levels"]["1"]
    assert (level1["pairs"], level1["operators"]["relu"]) == (3, 2)


def test_a_level_without_kept_pairs_is_listed_with_zeros(tmp_path):
    out = tmp_path / "pairs.jsonl"
    cfg = SFTDataConfig(out=str(out), per_op=1, ops="relu", levels="1,3", per_level=1,
                        preset="tiny")  # fmt: skip
    built(cfg, RejectAll())
    assert out.read_text() == ""
    levels = json.loads(coverage_path(out).read_text())["levels"]
    assert set(levels) == {"1", "3"}
    assert all(v["pairs"] == v["covered"] == sum(v["operators"].values()) == 0
               for v in levels.values())  # fmt: skip


@pytest.fixture
def accept_all(monkeypatch):
    monkeypatch.setattr("drtriton.train.rewards.BatchVerifier", lambda *a, **k: AcceptAll())


def test_the_command_prints_the_summary_and_the_coverage_table(tmp_path, capsys, accept_all):
    out = tmp_path / "pairs.jsonl"
    argv = ["sft-data", "--out", str(out), "--levels", "1-2", "--per-op", "1", "--per-level",
            "1", "--ops", "relu", "--preset", "tiny"]  # fmt: skip
    try:
        code = main(argv)
    except Exception as exc:  # an extension built without the synthesizer or the teacher
        pytest.skip(str(exc))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    one = {"programs": 1, "answers": 1, "verified": 1}
    assert json.loads(captured.out) == {"level 2": one, "relu": one}
    assert re.search(r"^relu +1 +1$", captured.err, re.M), captured.err
    assert re.search(r"^no pair holds \(\d+\): .*\bwhere\b", captured.err, re.M), captured.err
    assert coverage_path(out).is_file()


@pytest.mark.parametrize(
    "flags",
    [["--levels", "0"], ["--levels", "x"], ["--levels", "3-1"], ["--levels", ""],
     ["--levels", "1-99"], ["--levels", "1,"], ["--per-level", "0"], ["--per-level", "-2"]],
)  # fmt: skip
def test_bad_levels_are_one_line_usage_errors_leaving_nothing(tmp_path, capsys, flags):
    out = tmp_path / "pairs.jsonl"
    code = main(["sft-data", "--out", str(out), "--per-op", "1", "--preset", "tiny", *flags])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert len(err.splitlines()) == 1 and f"argument {flags[0]}" in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_tokenizer_trains_from_multi_level_pairs(tmp_path, capsys):
    """`drtriton tiny-model` on a pairs file of levels 1-3: every prompt and completion
    round-trips, and the merges learnt from the chains shorten their kernels."""
    pytest.importorskip("tokenizers")
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    pairs = tmp_path / "pairs.jsonl"
    cfg = SFTDataConfig(out=str(pairs), per_op=1, ops="relu,softmax", levels="1-3",
                        per_level=2, preset="tiny", dim_min=2, generic_shapes=True)  # fmt: skip
    built(cfg, AcceptAll())
    records = read_pairs(pairs)
    assert sorted({r["level"] for r in records}) == [1, 2, 3]
    model = tmp_path / "model"
    code = main(["tiny-model", str(pairs), "--out", str(model), "--vocab-size", "512",
                 "--hidden-size", "16", "--layers", "1"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    tok = AutoTokenizer.from_pretrained(model)
    assert len(tok) > 258  # more than the 256 bytes and 2 specials: merges were learnt
    from drtriton.policy import prompt_for

    for r in records:
        for text in (prompt_for(r), r["completion"]):
            assert tok.decode(tok.encode(text, add_special_tokens=False)) == text
    # Byte-level: one token per byte without merges; with 512 entries, about 0.5 per byte.
    chains = [r["completion"] for r in records if r["level"] == 3]
    assert all(len(tok.encode(c)) < 0.7 * len(c.encode()) for c in chains)


class FailingAfter:
    """Accepts every answer of its first `calls` judge calls, then raises (an interruption)."""

    def __init__(self, calls: int) -> None:
        self.calls = calls

    def judge(self, tasks, codes):
        if self.calls == 0:
            raise KeyboardInterrupt
        self.calls -= 1
        return [Reward(bool(c.strip()), None, "fake") for c in codes]


def test_an_interrupted_run_resumes_without_duplicates(tmp_path, monkeypatch, capsys):
    import drtriton.train.sft_data as sft_data

    monkeypatch.setattr(sft_data, "JUDGE_BATCH", 2)
    out = tmp_path / "pairs.jsonl"
    cfg = SFTDataConfig(out=str(out), per_op=3, ops="relu,sigmoid", preset="tiny")
    try:
        with pytest.raises(KeyboardInterrupt):
            build(cfg, FailingAfter(calls=1))
    except Exception as exc:  # an extension built without the synthesizer or the teacher
        pytest.skip(str(exc))
    first = read_pairs(out)
    judged = (tmp_path / "pairs.jsonl.judged").read_text().split()
    assert len(first) == 2 and judged == [p["id"] for p in first]
    assert "sft-data: 2/6 answers judged (2 verified this run)" in capsys.readouterr().err
    # Resumed: the other four are judged, the first two are not judged again.
    summary = build(cfg, FailingAfter(calls=2))
    pairs = read_pairs(out)
    assert len(pairs) == 6 and len({p["id"] for p in pairs}) == 6
    assert sum(c["answers"] for c in summary.values()) == 4
    assert "6/6 answers judged (4 verified this run, 2 judged before)" in capsys.readouterr().err
    # Finished: a rerun judges nothing (a verifier call would raise) and appends nothing.
    build(cfg, FailingAfter(calls=0))
    assert len(read_pairs(out)) == 6


def test_pairs_written_but_not_yet_marked_are_not_judged_again(tmp_path):
    out = tmp_path / "pairs.jsonl"
    cfg = SFTDataConfig(out=str(out), per_op=2, ops="relu", preset="tiny")
    try:
        build(cfg, AcceptAll())
    except Exception as exc:  # an extension built without the synthesizer or the teacher
        pytest.skip(str(exc))
    (tmp_path / "pairs.jsonl.judged").unlink()  # interrupted between the pairs and the mark
    build(cfg, FailingAfter(calls=0))
    assert len(read_pairs(out)) == 2

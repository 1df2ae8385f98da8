"""`drtriton synth`: output file, atomic write, resume after an interruption, errors."""

from __future__ import annotations

import json
from pathlib import Path

from drtriton.cli import main

ARGS = ["synth", "--n", "40", "--levels", "1-3", "--preset", "tiny", "--seed", "9", "--no-progress"]


def test_writes_jsonl_and_refuses_to_overwrite(tmp_path, capsys):
    out = tmp_path / "progs.jsonl"
    assert main([*ARGS, "--threads", "2", "--out", str(out), "--stats"]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 40
    record = json.loads(lines[0])
    assert {"id", "level", "ops", "source", "flops", "bytes", "seed"} <= set(record)
    assert not (tmp_path / "progs.jsonl.partial").exists()
    err = capsys.readouterr().err
    assert "operators emitted" in err and "reject" in err
    assert main([*ARGS, "--out", str(out)]) == 2
    assert "exists" in capsys.readouterr().err
    assert main([*ARGS, "--out", str(out), "--force"]) == 0


def test_resume_after_interruption_gives_the_same_file(tmp_path):
    whole = tmp_path / "whole.jsonl"
    assert main([*ARGS, "--threads", "1", "--out", str(whole)]) == 0
    expected = whole.read_bytes()

    # An interrupted run: the partial file holds 13 full records and a torn one.
    out = tmp_path / "resumed.jsonl"
    assert main([*ARGS, "--threads", "2", "--out", str(out)]) == 0
    lines = out.read_bytes().splitlines(keepends=True)
    out.rename(tmp_path / "resumed.jsonl.partial")
    (tmp_path / "resumed.jsonl.partial").write_bytes(b"".join(lines[:13]) + lines[13][:25])
    meta = {"levels": "1-3", "preset": "tiny", "seed": 9, "overrides": {}}
    (tmp_path / "resumed.jsonl.partial.json").write_text(json.dumps(meta))
    assert main([*ARGS, "--processes", "2", "--out", str(out)]) == 0
    assert out.read_bytes() == expected


def test_partial_from_other_arguments_is_refused(tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    (tmp_path / "p.jsonl.partial").write_text("")
    (tmp_path / "p.jsonl.partial.json").write_text(json.dumps({"seed": 1}))
    assert main([*ARGS, "--out", str(out)]) == 2
    assert "--restart" in capsys.readouterr().err
    assert main([*ARGS, "--out", str(out), "--restart"]) == 0


def test_impossible_bounds_are_a_clean_error(tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    code = main(
        [
            "synth",
            "--n",
            "3",
            "--levels",
            "2",
            "--preset",
            "paper",
            "--out",
            str(out),
            "--no-progress",
            "--flops-min",
            "1e30",
            "--flops-max",
            "2e30",
            "--max-attempts",
            "5",
        ]
    )
    assert code == 2
    assert "too tight" in capsys.readouterr().err
    code = main(["synth", "--n", "3", "--out", str(out), "--dim-min", "9", "--dim-max", "3"])
    assert code == 2
    assert "impossible bounds" in capsys.readouterr().err


def _interrupted(tmp_path, name: str, records: int) -> Path:
    """An interrupted run's files: FILE.partial with `records` whole records, and its meta."""
    out = tmp_path / name
    assert main([*ARGS, "--out", str(out)]) == 0
    lines = out.read_bytes().splitlines(keepends=True)
    out.unlink()
    (tmp_path / f"{name}.partial").write_bytes(b"".join(lines[:records]))
    meta = {"levels": "1-3", "preset": "tiny", "seed": 9, "overrides": {}}
    (tmp_path / f"{name}.partial.json").write_text(json.dumps(meta))
    return out


def test_resume_says_what_the_file_holds(tmp_path, capsys):
    """Issue 22 item 7: a resumed run with a smaller --n keeps the finished programs and says
    so, instead of claiming to have written --n programs."""
    out = _interrupted(tmp_path, "big.jsonl", 30)
    capsys.readouterr()
    assert main([*ARGS[:2], "10", *ARGS[3:], "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "already holds 30 programs (>= --n 10): nothing to do" in err
    assert "wrote 10" not in err
    assert len(out.read_text().splitlines()) == 30

    out = _interrupted(tmp_path, "small.jsonl", 13)
    capsys.readouterr()
    assert main([*ARGS, "--out", str(out)]) == 0
    assert "wrote 40 programs" in (err := capsys.readouterr().err) and "(13 resumed, 27 new)" in err
    assert len(out.read_text().splitlines()) == 40


def test_records_name_their_precision(tmp_path, capsys):
    """Issue 21 item 4: --precision is a field of every record (fp32 by default); the programs'
    text is the same in every mode."""
    fp32, bf16 = tmp_path / "fp32.jsonl", tmp_path / "bf16.jsonl"
    assert main([*ARGS, "--out", str(fp32)]) == 0
    assert main([*ARGS, "--out", str(bf16), "--precision", "bf16"]) == 0
    plain = [json.loads(x) for x in fp32.read_text().splitlines()]
    half = [json.loads(x) for x in bf16.read_text().splitlines()]
    assert {r["precision"] for r in plain} == {"fp32"} and {r["precision"] for r in half} == {
        "bf16"
    }
    assert [r["source"] for r in plain] == [r["source"] for r in half]
    assert main([*ARGS, "--out", str(tmp_path / "x.jsonl"), "--precision", "fp8"]) == 2
    assert "--precision: must be one of fp32, tf32, bf16, fp16" in capsys.readouterr().err


def test_a_partial_run_of_another_precision_is_refused(tmp_path, capsys):
    """A partial file from before --precision (its meta has no precision) is an fp32 run: it
    resumes as one and refuses to go on in another mode."""
    out = _interrupted(tmp_path, "old.jsonl", 5)
    capsys.readouterr()
    assert main([*ARGS, "--out", str(out), "--precision", "fp16"]) == 2
    assert "--restart" in capsys.readouterr().err
    assert main([*ARGS, "--out", str(out)]) == 0

"""`drtriton teach`: pair records, --variants, --verify, unsupported listing, resuming, the
programs' precision mode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from drtriton.cli import main

HEADER = "import torch\nimport torch.nn.functional as F\n\n"


def program(pid: str, body: str, inputs: str) -> dict:
    source = f"{HEADER}{body}\ndef get_inputs():\n    return [{inputs}]\n"
    return {"id": pid, "level": body.count(" = "), "ops": [], "source": source}


PROGRAMS = [
    program(
        "relu",
        "def fused_operator(x0):\n    t0 = torch.relu(x0)\n    return t0\n",
        "torch.randn(64, 64)",
    ),
    program(
        "mean_exp",
        "def fused_operator(x0):\n    t0 = torch.mean(x0, 1)\n    t1 = torch.exp(t0)\n"
        "    return t1\n",
        "torch.randn(3, 6)",
    ),
    program(
        "instance_norm_running",
        "def fused_operator(x0, x1, x2):\n"
        "    t0 = F.instance_norm(x0, x1, x2, None, None, False)\n    return t0\n",
        "torch.randn(2, 3, 4), torch.randn(3), torch.rand(3)",
    ),
]


def teach(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "drtriton", "teach", *args, "--no-progress"],
        capture_output=True,
        text=True,
        timeout=600,
    )


def write_programs(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_pairs_with_verdicts_and_unsupported_listed(tmp_path: Path) -> None:
    programs, pairs = tmp_path / "programs.jsonl", tmp_path / "pairs.jsonl"
    write_programs(programs, PROGRAMS)
    result = teach(str(programs), "--out", str(pairs), "--verify", "--workers", "1")
    assert result.returncode == 0, result.stderr
    by_id = {r["id"]: r for r in read(pairs)}
    assert set(by_id) == {"relu", "mean_exp", "instance_norm_running"}
    for pid in ("relu", "mean_exp"):
        assert by_id[pid]["status"] == "correct", by_id[pid]
        assert "def triton_fused_operator(x0):" in by_id[pid]["completion"]
        assert by_id[pid]["source"] == next(p["source"] for p in PROGRAMS if p["id"] == pid)
    skipped = by_id["instance_norm_running"]
    assert skipped["completion"] is None
    assert skipped["unsupported"] == ["instance_norm(use_input_stats=False)"]
    assert "instance_norm(use_input_stats=False) x1" in result.stderr


def test_variants_and_resume(tmp_path: Path) -> None:
    programs, pairs = tmp_path / "programs.jsonl", tmp_path / "pairs.jsonl"
    write_programs(programs, PROGRAMS[:1])
    assert teach(str(programs), "--out", str(pairs), "--variants", "3").returncode == 0
    first = read(pairs)
    assert [r["id"] for r in first] == ["relu#v0", "relu#v1", "relu#v2"]
    assert len({r["completion"] for r in first}) == 3
    # A second run with one more program only adds that program.
    write_programs(programs, PROGRAMS[:2])
    assert teach(str(programs), "--out", str(pairs), "--variants", "3").returncode == 0
    ids = [r["id"] for r in read(pairs)]
    assert ids[:3] == ["relu#v0", "relu#v1", "relu#v2"]
    assert ids[3:] and all(i.startswith("mean_exp#v") for i in ids[3:])


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = teach(str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o.jsonl"))
    assert result.returncode == 2
    assert "no such file" in result.stderr


def test_fp16_programs_make_fp16_pairs(tmp_path: Path) -> None:
    """Issue 21 item 4: a program record's precision is the mode its pairs are judged in."""
    programs, pairs = tmp_path / "programs.jsonl", tmp_path / "pairs.jsonl"
    write_programs(programs, [{**p, "precision": "fp16"} for p in PROGRAMS[:2]])
    result = teach(str(programs), "--out", str(pairs), "--verify", "--workers", "1")
    assert result.returncode == 0, result.stderr
    for pair in read(pairs):
        assert (pair["status"], pair["precision"]) == ("correct", "fp16"), pair


def test_old_records_are_fp32_and_one_file_holds_one_precision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records without the field (files from before it) are fp32; --precision names them, but
    never relabels a record that states its mode, and an output keeps one mode."""
    old, half = tmp_path / "old.jsonl", tmp_path / "half.jsonl"
    write_programs(old, PROGRAMS[:1])
    write_programs(half, [{**PROGRAMS[1], "precision": "bf16"}])
    pairs = tmp_path / "pairs.jsonl"
    assert main(["teach", str(old), "--out", str(pairs), "--no-progress"]) == 0
    assert [p["precision"] for p in read(pairs)] == ["fp32"]
    capsys.readouterr()
    assert main(["teach", str(half), "--out", str(pairs), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"drtriton teach: error: {pairs} holds pairs in precision fp32, not bf16: "
                   "one file holds one precision, use another --out"]  # fmt: skip
    assert main(["teach", str(half), "--out", str(pairs), "--precision", "fp16"]) == 2
    assert "holds programs in precision bf16, not fp16" in capsys.readouterr().err
    renamed = tmp_path / "renamed.jsonl"
    assert main(["teach", str(old), "--out", str(renamed), "--precision", "bf16"]) == 0
    assert [p["precision"] for p in read(renamed)] == ["bf16"]

"""benchmarks/heldout_speed_noise.py: the spread of repeated timings by hand, and a CPU run
that judges an evaluation's correct answers again (the interpreter cannot time them)."""

import json

import pytest

from .conftest import task


def test_spread_by_hand(benchmark_script):
    tool = benchmark_script("heldout_speed_noise.py")
    # Two kernels over three repeats; the second kernel was untimed once.
    runs = [[0.1, -0.2], [0.4, None], [0.2, 0.3]]
    assert tool.spread(runs) == pytest.approx(((0.4 - 0.1) + (0.3 - -0.2)) / 2)
    assert tool.spread([[0.1, None]]) is None  # one repeat: no spread


def test_cpu_run_judges_the_correct_answers_again(tmp_path, capsys, benchmark_script):
    heldout = tmp_path / "heldout.jsonl"
    samples = tmp_path / "samples.jsonl"
    from drtriton.teach import emit

    source = task("relu")
    heldout.write_text(json.dumps({"id": "h0", "level": 1, "source": source}) + "\n")
    samples.write_text(json.dumps({"id": "h0", "correct": True, "code": emit(source)}) + "\n"
                       + json.dumps({"id": "h1", "correct": False, "code": "x"}) + "\n")  # fmt: skip
    out = tmp_path / "noise.json"
    tool = benchmark_script("heldout_speed_noise.py")
    argv = ["--samples", str(samples), "--heldout", str(heldout), "--workers", "1",
            "--repeats", "2", "--out", str(out)]  # fmt: skip
    assert tool.main(argv) == 0
    data = json.loads(out.read_text())
    assert data["ids"] == ["h0"] and data["rows"][0]["correct"] == [1, 1]
    assert data["rows"][0]["log_speedups"] == [[None], [None]]  # the CPU cannot time
    assert data["rows"][0]["geomean_speedup"] == [None, None]
    assert "correct [1, 1] of 1" in capsys.readouterr().out
    assert tool.main(["--samples", str(tmp_path / "none.jsonl")]) == 2

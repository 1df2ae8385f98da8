"""summary.md and speedup.png: the by-level tables, the per-problem rows, the not-run list."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from drtriton.evaluate.kernelbench import COLUMNS
from drtriton.evaluate.summary import render_summary, write_summary

RECORDS = [
    {"id": "L1_1", "level": 1, "problem_id": 1, "name": "1_Matmul", "status": "correct",
     "correct": True, "time_ms": 1.0, "eager_ms": 2.0, "compile_ms": 1.5, "speedup": 2.0,
     "speedup_vs_compile": 1.5, "n_ops": 1, "fused_segments": 1, "opaque_ops": 0, "seconds": 12.0},
    {"id": "L1_2", "level": 1, "problem_id": 2, "name": "2_Relu|Pipe", "status": "timeout",
     "correct": False, "error": "no result within the problem timeout of 5 s", "seconds": 5.0},
    {"id": "L2_7", "level": 2, "problem_id": 7, "name": "7_Conv_Add", "status": "correct",
     "correct": True, "time_ms": 4.0, "eager_ms": 2.0, "compile_ms": None, "speedup": 0.5,
     "speedup_vs_compile": None, "seconds": 30.0},
]  # fmt: skip
NOT_RUN = [{"id": "L2_8", "level": 2, "problem_id": 8, "name": "8_Gemm_Max"}]


def test_summary_has_level_rows_problem_rows_and_not_run() -> None:
    text = render_summary(RECORDS, NOT_RUN, title="KB", columns=COLUMNS)
    lines = text.splitlines()
    # correctness table: level 1 ran 2 of 2, 1 correct; level 2 ran 1 of 2, 1 correct
    assert "| 1 | 2 | 2 | 0 | 1 | 50.0% | 1 | 0 |" in lines
    assert "| 2 | 2 | 1 | 1 | 1 | 100.0% | 1 | 1 |" in lines  # torch.compile failed once
    assert "| all | 4 | 3 | 1 | 2 | 66.7% | 2 | 1 |" in lines
    # vs eager: level 1 fast_0 = fast_1 = fast_1.5 = 50%, fast_2 = 0 (2.0 is not > 2)
    assert "| 1 | 50.0% | 50.0% | 50.0% | 0.0% | 2.000x |" in lines
    assert "| 2 | 100.0% | 0.0% | 0.0% | 0.0% | 0.500x |" in lines
    # vs compile: level 2 had no compile time, so no geomean
    assert "| 2 | 0.0% | 0.0% | 0.0% | 0.0% | n/a |" in lines
    # per-problem rows, in level/problem order, with a | in a name escaped
    rows = [ln for ln in lines if ln.startswith("| 1 | ") or ln.startswith("| 2 | ")]
    names = [r for r in rows if "_Matmul" in r or "Relu" in r or "Conv_Add" in r]
    assert [("Matmul" in r, "Relu" in r, "Conv" in r) for r in names] == [
        (True, False, False), (False, True, False), (False, False, True)]  # fmt: skip
    assert "2_Relu\\|Pipe" in text and "timeout" in names[1]
    assert "Not run (1)" in text and "L2 8_Gemm_Max" in text


def test_cpu_results_have_no_fast_p_and_no_plot(tmp_path: Path) -> None:
    untimed = [{"id": "a", "level": 1, "correct": True, "status": "correct"},
               {"id": "b", "level": 1, "correct": False, "status": "wrong_answer"}]  # fmt: skip
    (tmp_path / "speedup.png").write_bytes(b"stale")
    path = write_summary(tmp_path, untimed, title="CPU")
    text = path.read_text()
    assert "| 1 | n/a | n/a | n/a | n/a | n/a |" in text
    assert "no correct, timed result" in text
    assert not (tmp_path / "speedup.png").exists()  # a stale plot is removed


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib")
def test_speedup_png_is_drawn(tmp_path: Path) -> None:
    write_summary(tmp_path, RECORDS, NOT_RUN, title="KB", columns=COLUMNS)
    png = (tmp_path / "speedup.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 1000
    assert "![speedups](speedup.png)" in (tmp_path / "summary.md").read_text()


def test_tf32_table_appears_only_with_tf32_baselines() -> None:
    assert "TF32 defaults" not in render_summary(RECORDS, NOT_RUN, title="KB", columns=COLUMNS)
    with_tf32 = [dict(r) for r in RECORDS]
    with_tf32[0]["speedup_vs_tf32"] = 0.8  # strict fp32 eager 2 ms, TF32 eager 0.8 ms
    lines = render_summary(with_tf32, NOT_RUN, title="KB", columns=COLUMNS).splitlines()
    start = lines.index("### Against eager with PyTorch's TF32 defaults")
    assert "| 1 | 50.0% | 0.0% | 0.0% | 0.0% | 0.800x |" in lines[start:]


def test_problems_correct_only_relative_to_eagers_error_are_named() -> None:
    assert "no less exact than eager" not in render_summary(RECORDS, NOT_RUN, title="KB")
    relative = [{**RECORDS[2], "baseline_error_sets": 5}, *RECORDS[:2]]
    text = render_summary(relative, NOT_RUN, title="KB")
    line = next(ln for ln in text.splitlines() if "no less exact than eager" in ln)
    assert line.endswith(": L2 7")

"""benchmarks/contraction_speed.py on the CPU: the dry run verifies one level-1 GEMM and one
level-2 convolution of the KernelBench dev split (shrunk) in the interpreter, with their float64
errors and the precision the wrapper chose; the pieces the GPU run relies on, by hand."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from collections.abc import Callable
from types import ModuleType

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNELBENCH = ROOT.parent / "shared" / "kernelbench"


@pytest.fixture(scope="module")
def tool(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("contraction_speed.py")


@pytest.mark.skipif(not (KERNELBENCH / "level1.jsonl").is_file(), reason="no KernelBench data")
def test_dry_run_verifies_a_gemm_and_a_conv(tmp_path: pathlib.Path, child_python_path: str) -> None:
    out = tmp_path / "speed.json"
    # A child process: the teacher's kernels run in this script's own process too, in Triton's
    # interpreter, which must be chosen before Triton's first import.
    env = {**os.environ, "PYTHONPATH": child_python_path}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "contraction_speed.py"), "--dry-run",
         "--limit", "1", "--problems", str(KERNELBENCH), "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["ceiling_tflops"] == 51.0
    rows = data["rows"]
    assert data["unexported"] == [], data["unexported"]
    # Chosen by operator: the first level-1 problem with a GEMM, the first level-2 one with a
    # GEMM or convolution.
    assert [(r["level"], r["class"]) for r in rows] == [(1, "contraction"), (2, "conv")], rows
    for r in rows:
        assert r["status"] == "correct", r
        assert r["precision"] == "ieee"  # the interpreter's exact path
        assert r["schedule"] == "tile", r  # 8 x 8 x 8 and 288 x 8 x 72: one kernel of tl.dot
        assert r["time_ms"] is None and r["tflops"] is None  # no timing on the CPU
        assert 0 < r["err64"] < 1e-6 and 0 < r["eager_err64"] < 1e-6, r
        assert "x" in r["shape"] and r["flops"] > 0
    assert "| L | problem | op |" in done.stdout and "| correct |" in done.stdout


def test_shape_precision_and_rates(tool: ModuleType) -> None:
    candidate = (
        "    # conv2d: M=128 N=4 K=27 batch=2\n"
        'dot_precision = "fp16x3" if torch.get_float32_matmul_precision() == "highest" else "tf32"\n'
    )
    assert tool.kernel_shape(candidate) == "128x4x27 b2"
    phased = (
        "    # conv_transpose3d: M=96 N=8 K=64 batch=1, launched per stride phase (PHASE of 8)\n"
    )
    assert tool.kernel_shape(phased) == "96x8x64"
    assert tool.operand_layout("k0_x0_cl_kernel[(2, 1)](") == "channels-last"
    assert tool.operand_layout(candidate) == "as given"
    assert tool.dot_precision(candidate, "cuda:0") == "fp16x3"
    assert tool.dot_precision(candidate, "cpu") == "ieee"
    assert tool.dot_precision("no dot here", "cuda") is None
    assert tool.schedule("part += tl.dot(a, b)") == "tile"
    assert tool.schedule("# matmul: M=8 N=1 K=70000 batch=1 split_k=4\nacc += tl.sum(") == (
        "narrow + split-K 4"
    )
    assert tool.tflops(2 * 4096**3, 2.10) == pytest.approx(65.4, rel=1e-3)
    assert tool.tflops(1e9, None) is None


def test_dry_run_shrinks_kernelbench_sizes_written_as_arithmetic(
    benchmark_script: Callable[[str], ModuleType],
) -> None:
    shrink = benchmark_script("shrink_kernelbench.py").shrink
    assert shrink("N = 2048 * 2\nS = (4096, 2 ** 10)\nk = 3\ng = in_channels\n", 8) == (
        "N = 8\nS = (8, 8)\nk = 3\ng = in_channels\n"
    )


def test_usage_error_exits_2(tool: ModuleType) -> None:
    assert tool.main(["--dry-run", "--limit", "0"]) == 2
    assert tool.main(["--device", "cpu", "--problems", "/nonexistent"]) == 2


DYING_MEASURE = """
import os


def measure(record, cls, source, args, folder, index):
    if record["problem_id"] == 2:
        os._exit(9)  # killed, as the host's out-of-memory killer would
    return {"level": 1, "problem_id": record["problem_id"], "name": record["name"],
            "class": cls, "op": "matmul", "flops": 1.0, "status": "correct"}
"""

MATMUL_TASK = """import torch

def fused_operator(x0, x1):
    t0 = torch.matmul(x0, x1)
    return t0

def get_inputs():
    return [torch.randn(4, 6), torch.randn(6, 5)]
"""


def test_a_killed_process_costs_only_the_task_it_died_on(
    tool: ModuleType, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    # A module the spawned processes can import by name (they get this process's sys.path).
    (tmp_path / "dying_measure.py").write_text(DYING_MEASURE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import dying_measure

    monkeypatch.setattr(tool, "measure", dying_measure.measure)
    tasks = [({"level": 1, "problem_id": i, "name": f"p{i}"}, "contraction", MATMUL_TASK)
             for i in (1, 2, 3, 4)]  # fmt: skip
    out = tmp_path / "rows.json"
    args = argparse.Namespace(jobs=2, out=str(out))
    rows = tool.measure_all(tasks, args, str(tmp_path), [])
    assert [r["status"] for r in rows] == ["correct", "crashed", "correct", "correct"]
    assert rows[1]["op"] == "matmul" and rows[1]["flops"] == 2 * 4 * 6 * 5
    assert "killed" in rows[1]["reason"]
    assert len(json.loads(out.read_text())["rows"]) >= 3  # written as they came

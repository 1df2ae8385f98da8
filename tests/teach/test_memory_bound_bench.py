"""benchmarks/memory_bound_speed.py on the CPU: problems are kept or left out by operator, the
teacher's candidates of the kept ones are accepted by the verifier, and the table and JSON
come out; bad input exits 2.  Small KernelBench-format problems written here (about 15 s)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest


def module(forward: str, inputs: str, init: str = "        pass") -> str:
    """A KernelBench problem: Model() applies `forward` to the inputs; `init` builds its layers."""
    return (
        "import torch\nimport torch.nn as nn\n\n"
        "class Model(nn.Module):\n"
        f"    def __init__(self):\n        super().__init__()\n{init}\n"
        f"    def forward(self, x):\n        return {forward}\n\n"
        f"def get_inputs():\n    return [{inputs}]\n\n"
        "def get_init_inputs():\n    return []\n"
    )


PROBLEMS = [
    (19, "19_ReLU", module("torch.relu(x)", "torch.randn(4, 300)")),
    (23, "23_Softmax", module("torch.softmax(x, dim=1)", "torch.randn(4, 9000)")),
    (
        40,
        "40_LayerNorm",
        module("self.ln(x)", "torch.randn(3, 8, 50)", "        self.ln = nn.LayerNorm((8, 50))"),
    ),
    (
        1,
        "1_Square_matrix_multiplication_",
        module(
            "torch.matmul(x, self.w)",
            "torch.randn(8, 8)",
            "        self.w = nn.Parameter(torch.randn(8, 8))",
        ),
    ),
    (
        95,
        "95_Sort",
        module("torch.sort(x, dim=1)[0]", "torch.randn(4, 8)"),
    ),
]


@pytest.fixture(scope="module")
def tool(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("memory_bound_speed.py")


@pytest.fixture
def problems(tmp_path: Path) -> Path:
    path = tmp_path / "level1.jsonl"
    records = [{"level": 1, "problem_id": i, "name": n, "code": c} for i, n, c in PROBLEMS]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_problems_are_chosen_by_operator(tool) -> None:
    code = {name: code for _, name, code in PROBLEMS}
    assert tool.classify(code["19_ReLU"])["kind"] == "memory"
    assert tool.classify(code["1_Square_matrix_multiplication_"])["kind"] == "product"
    sort = tool.classify(code["95_Sort"])
    assert sort["kind"] == "opaque" and "sort" in sort["opaque"]
    assert tool.aten_name("torch.ops.aten.mm.default(x0, x1)") == "mm"


def test_goal_is_compile_speed_or_ninety_percent_of_copy(tool) -> None:
    assert tool.goal_met({"kernel_ms": 1.0, "compile_ms": 1.2, "kernel_gbs": 10.0}, 4300.0)
    assert tool.goal_met({"kernel_ms": 1.0, "compile_ms": 0.5, "kernel_gbs": 3900.0}, 4300.0)
    assert not tool.goal_met({"kernel_ms": 1.0, "compile_ms": 0.5, "kernel_gbs": 3800.0}, 4300.0)
    assert tool.goal_met({"kernel_ms": None}, 4300.0) is None


def test_smoke_run_writes_the_table_and_json(tool, problems: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "memory_bound.json"
    assert tool.main(["--device", "cpu", "--problems", str(problems), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "copy bandwidth not measured" in text and "left out (a matrix product" in text
    payload = json.loads(out.read_text())
    rows = {r["name"]: r for r in payload["rows"]}
    assert payload["left_out"] == ["1_Square_matrix_multiplication_"]
    for name in ("19_ReLU", "23_Softmax", "40_LayerNorm"):
        assert rows[name]["status"] == "correct", rows[name]
        assert rows[name]["bytes"] > 0 and rows[name]["kernel_ms"] is None  # CPU: untimed
    assert rows["23_Softmax"]["ops"] == ["softmax"]
    assert rows["95_Sort"]["status"] == "not_mapped"


def test_bad_input_exits_2(tool, tmp_path: Path) -> None:
    assert tool.main(["--problems", str(tmp_path / "missing.jsonl")]) == 2


def test_jobs_verify_problems_in_their_own_processes(
    problems: Path, tmp_path: Path, child_python_path: str
) -> None:
    # The script as a GPU session runs it (a process pool needs an importable __main__), with
    # fewer trials and no graphs; the JSON says so and the rows keep the file's order.
    import os
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "memory_bound_speed.py"
    out = tmp_path / "jobs.json"
    # One verified problem and one the frontend cannot map: both go through the pool (CI time).
    args = ["--device", "cpu", "--problems", str(problems), "--ids", "19", "95",
            "--jobs", "2", "--trials", "1", "--no-graph", "--out", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": child_python_path}
    done = subprocess.run([sys.executable, str(script), *args], env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    payload = json.loads(out.read_text())
    assert (payload["trials"], payload["graph"]) == (1, False)
    assert [(r["name"], r["status"]) for r in payload["rows"]] == [
        ("19_ReLU", "correct"), ("95_Sort", "not_mapped")
    ]  # fmt: skip
    assert "1 input sets match" in payload["rows"][0]["reason"]


def test_counts_below_one_exit_2(tool, problems: Path) -> None:
    for flag in ("--jobs", "--trials"):
        assert tool.main(["--problems", str(problems), flag, "0"]) == 2

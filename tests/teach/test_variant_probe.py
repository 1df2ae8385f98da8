"""benchmarks/variant_probe.py on the CPU (Triton's interpreter, in a child process): every
distinct schedule variant of the teacher's kernel for a problem is run and compared with eager;
bad input exits 2 with one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import drtriton

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = (
    "import torch\nimport torch.nn as nn\n\n"
    "class Model(nn.Module):\n"
    "    def forward(self, x):\n        return torch.softmax(x, dim=1)\n\n"
    # Rows of 9000 are longer than the one-pass limit (8192): the variants differ in block
    "def get_inputs():\n    return [torch.randn(3, 9000)]\n\n"
    "def get_init_inputs():\n    return []\n"
)


def probe(*args: str) -> subprocess.CompletedProcess[str]:
    # The child imports the package this test imported (an installed one has its _core; the
    # source tree's python/ may have none).
    package_root = str(Path(drtriton.__file__).resolve().parents[1])
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": package_root}
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "variant_probe.py"), *args],
                          capture_output=True, text=True, env=env, timeout=600)  # fmt: skip


def test_every_distinct_variant_runs_and_matches_eager(tmp_path: Path) -> None:
    problems = tmp_path / "level1.jsonl"
    record = {"level": 1, "problem_id": 23, "name": "23_Softmax", "code": SOFTMAX}
    problems.write_text(json.dumps(record) + "\n")
    out = tmp_path / "variants.json"
    done = probe("--problems", str(problems), "--ids", "23", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(out.read_text())
    variants = [r["variant"] for r in rows]
    assert variants[0] == 0 and len(set(variants)) == len(variants) >= 2
    for row in rows:
        assert row["status"] == "run" and row["ms"] is None  # no timing without a GPU
        assert row["error"] < 1e-5, row
    assert "23_Softmax" in done.stdout


def test_a_missing_problems_file_exits_2(tmp_path: Path) -> None:
    done = probe("--problems", str(tmp_path / "none.jsonl"), "--ids", "1")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "no KernelBench problems" in done.stderr


CONV = (
    "import torch\nimport torch.nn as nn\n\n"
    "class Model(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n"
    "        self.conv = nn.Conv2d(16, 16, 3)\n\n"
    "    def forward(self, x):\n        return torch.relu(self.conv(x))\n\n"
    "def get_inputs():\n    return [torch.rand(2, 16, 66, 66)]\n\n"
    "def get_init_inputs():\n    return []\n"
)


def test_pointer_twins_of_a_tma_convolution_run_in_half_precision(tmp_path: Path) -> None:
    # fp16: the shifted-rows TMA kernel runs in the interpreter; its twin, guard forced off,
    # runs the pointer kernel. Without --products a convolution is left out.
    problems = tmp_path / "level2.jsonl"
    record = {"level": 2, "problem_id": 1, "name": "1_Conv2d_ReLU", "code": CONV}
    problems.write_text(json.dumps(record) + "\n")
    out = tmp_path / "variants.json"
    common = ("--problems", str(problems), "--ids", "1", "--out", str(out))
    done = probe(*common, "--variants", "0")
    assert done.returncode == 0, done.stderr[-2000:]
    assert [r["status"] for r in json.loads(out.read_text())] == ["product"]
    done = probe(*common, "--variants", "0", "--products", "--pointer", "--precision", "fp16")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(out.read_text())
    assert [r["variant"] for r in rows] == [0, "0p"]
    for row in rows:
        assert row["precision"] == "fp16" and row["error"] < 1e-2, row

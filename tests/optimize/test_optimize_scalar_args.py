"""drtriton optimize on models whose forward takes Python numbers (KernelBench level 1, problem
5: `forward(self, A, s)`, s = 3.14): verified end to end, and the eval worker calls them
supported."""

from __future__ import annotations

import pathlib
import types

import pytest
import torch

from drtriton import _core
from drtriton.evaluate.worker import run_job
from drtriton.optimize import OptimizeConfig, optimize_source
from drtriton.verify.task import import_file

pytestmark = pytest.mark.skipif(not hasattr(_core, "codegen_variants"), reason="no teacher binding")
CONFIG = OptimizeConfig(max_ops=3, k=1)


def scalar_task(expr: str, value: str) -> str:
    return (
        "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
        f"    def forward(self, A, s):\n        return {expr}\n\n"
        f"def get_inputs():\n    return [torch.randn(4, 8), {value}]\n\n"
        "def get_init_inputs():\n    return []\n"
    )


def load(model_new: str, folder: pathlib.Path) -> types.ModuleType:
    """The ModelNew file as a module (from a real file: triton.jit reads its kernels' source)."""
    path = folder / "model_new_scalar.py"
    path.write_text(model_new)
    return import_file(str(path), "drtriton_test_model_new")


def test_float_argument_is_verified_and_read_at_run_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    result = optimize_source(scalar_task("torch.relu(A * s)", "3.14"), CONFIG)
    assert result.error is None, result.error
    assert result.verdict["status"] == "correct", result.verdict
    assert "def forward(self, x0, x1):" in result.model_new
    assert result.frontend["runtime_scalars"] == ["x1"] and not result.frontend["specialized"]
    assert "is read at run time" in result.report_markdown()
    # Another value of s gives Model's answer for that value: nothing was baked in.
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    module = load(result.model_new, tmp_path)
    a = torch.randn(4, 8)
    got = module.ModelNew()(a, -2.5)
    torch.testing.assert_close(got, module.Model()(a, -2.5))


def test_int_dim_argument_is_specialized_and_guarded(tmp_path: pathlib.Path) -> None:
    code = scalar_task("torch.relu(torch.sum(A, dim=s))", "1")
    outcome = run_job({"problem": {"code": code}, "config": vars(CONFIG)})
    assert outcome.get("status") != "unsupported", outcome
    assert outcome["verdict"]["status"] == "correct", outcome
    assert outcome["frontend"]["specialized"] == {"x1": "1"}
    result = optimize_source(code, CONFIG)
    assert "`x1` = 1 was specialized by torch.export" in result.report_markdown()
    # Another value runs Model's own forward, said once (optimize/serving.py).
    module = load(result.model_new, tmp_path)
    a = torch.randn(4, 8)
    with pytest.warns(RuntimeWarning, match="argument 1 is 0; torch.export baked in 1"):
        got = module.ModelNew()(a, 0)
    torch.testing.assert_close(got, module.Model()(a, 0))

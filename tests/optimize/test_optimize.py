"""drtriton optimize end to end on the CPU (Triton's interpreter): small models, k=1, short
fragments, so that each run needs only a handful of verifications (a few seconds each)."""

from __future__ import annotations

import os
import pathlib

import pytest

from drtriton import _core
from drtriton.cli import main
from drtriton.optimize import OptimizeConfig, optimize_source

pytestmark = pytest.mark.skipif(not hasattr(_core, "codegen_variants"), reason="no teacher binding")
os.environ.pop("TRITON_INTERPRET", None)

HEAD = "import torch\nimport torch.nn as nn\n\n"
TAIL = "\ndef get_inputs():\n    return [torch.randn(4, 16)]\n\ndef get_init_inputs():\n    return [16, 8]\n"


def model(init: str, forward: str) -> str:
    return (
        HEAD + "class Model(nn.Module):\n    def __init__(self, d_in, d_out):\n"
        "        super().__init__()\n" + "".join(f"        {x}\n" for x in init.splitlines())
        + "\n    def forward(self, x):\n" + "".join(f"        {x}\n" for x in forward.splitlines())
        + TAIL
    )  # fmt: skip


# Two parameters owned by the model itself before the layer's: ModelNew must keep that order.
LINEAR = model(
    "self.shift = nn.Parameter(torch.randn(d_out))\nself.fc = nn.Linear(d_in, d_out)",
    "return torch.relu(self.fc(x)) + self.shift",
)
OPAQUE = model("self.fc = nn.Linear(d_in, d_out)", "return torch.atan(torch.relu(self.fc(x)))")
CONFIG = OptimizeConfig(max_ops=3, k=1)


def test_model_with_parameters_is_fused_and_verified(tmp_path: pathlib.Path) -> None:
    result = optimize_source(LINEAR, CONFIG)
    assert result.error is None, result.error
    assert result.verdict["status"] == "correct", result.verdict
    assert [s["ops"] for s in result.segments if s["fused"]] == [["linear", "relu", "add"]]
    assert "class ModelNew(Model)" in result.model_new
    # What each verified fragment got, kept for the fused cover too.
    assert result.segments[0]["tried"][0].startswith("linear+relu+add: correct")
    assert result.frontend["fully_mapped"] and result.frontend["n_ops"] == 3
    # What the search's own verifications cost, summed (the evaluation records it).
    costs = result.search_costs
    assert costs["verifications"] >= 1 and costs["wall_s"] > 0 and costs["request_s"]["run"] > 0
    report = result.report_markdown()
    assert "`linear` → `relu` → `add`" in report and "r0_f0_triton_fused_operator" in report
    # The plain verifier (training mode, no allowances) accepts the file too.
    (tmp_path / "model.py").write_text(LINEAR)
    (tmp_path / "new.py").write_text(result.model_new)
    assert (
        main(["verify", str(tmp_path / "model.py"), str(tmp_path / "new.py"), "--trials", "2"]) == 0
    )


def test_opaque_op_stays_in_pytorch() -> None:
    result = optimize_source(OPAQUE, CONFIG)
    assert result.verdict is not None and result.verdict["status"] == "correct", result
    assert "atan" in result.verdict["allowed_torch"]
    assert "torch.atan(" in result.model_new and "torch.ops" not in result.model_new
    kept = [s for s in result.segments if not s["fused"]]
    assert [s["ops"] for s in kept] == [["torch.ops.aten.atan.default"]]
    assert "not in the operator catalog" in kept[0]["why"]
    assert "`torch.ops.aten.atan.default`" in result.report_markdown()


BATCH_NORM = model(
    "self.fc = nn.Linear(d_in, d_out)\nself.bn = nn.BatchNorm1d(d_out)",
    "return torch.relu(self.bn(self.fc(x)))",
)


@pytest.mark.parametrize("kernels", [False, True])
def test_batch_statistics_are_a_kernel_only_when_asked(kernels: bool) -> None:
    # Training mode (KernelBench's): batch norm normalizes with the batch's statistics.  By
    # default (batch_norm_kernels) the catalog's batch_norm_train is searched like any
    # operator, and the fragment verified against torch in train mode; without, it stays a
    # PyTorch call.
    config = OptimizeConfig(max_ops=3, k=1, mode="train", batch_norm_kernels=kernels)
    result = optimize_source(BATCH_NORM, config)
    kept = [op for s in result.segments if not s["fused"] for op in s["ops"]]
    fused = [op for s in result.segments if s["fused"] for op in s["ops"]]
    if kernels:
        assert result.verdict is not None and result.verdict["status"] == "correct", result
        assert "batch_norm_train" in fused and result.frontend["fully_mapped"]
    else:  # linear and relu apart save no traffic: no kernel at all
        assert "torch.ops.aten._native_batch_norm_legit_functional.default" in kept
        assert not fused and not result.frontend["fully_mapped"]
        why = [s["why"] for s in result.segments if "batch_norm" in s["ops"][0]]
        assert why == ["batch statistics stay a PyTorch call (--no-batch-norm-kernels)"]
    assert OptimizeConfig().batch_norm_kernels


def test_cli_user_errors(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimize", str(tmp_path / "missing.py")]) == 2
    assert "cannot read model" in capsys.readouterr().err
    (tmp_path / "plain.py").write_text("import torch\n\ndef f(x):\n    return x\n")
    assert main(["optimize", str(tmp_path / "plain.py")]) == 2
    assert "Model" in capsys.readouterr().err
    branchy = LINEAR.replace(
        "return torch.relu", "if x.sum() > 0:\n            x = -x\n        return torch.relu"
    )
    (tmp_path / "branchy.py").write_text(branchy)
    assert main(["optimize", str(tmp_path / "branchy.py")]) == 2
    assert "torch.export could not trace Model" in capsys.readouterr().err


def test_cli_writes_model_and_report(tmp_path: pathlib.Path) -> None:
    """No kernel is worth it for a lone relu under the traffic model: exit 1, no file, a report
    that says why."""
    lone = model("self.fc = nn.Linear(d_in, d_out)", "return self.fc(x)")
    (tmp_path / "lone.py").write_text(lone)
    out, report = tmp_path / "new.py", tmp_path / "report.md"
    code = main(["optimize", str(tmp_path / "lone.py"), "--out", str(out), "--report", str(report)])
    assert code == 1 and not out.exists()
    assert "no Triton kernel" in report.read_text()


# A Python number in a line kept in PyTorch after the kernels (atan is not in the catalog).
SCALED_OPAQUE = model(
    "self.shift = nn.Parameter(torch.randn(d_out))\nself.fc = nn.Linear(d_in, d_out)",
    "return torch.atan(torch.relu(self.fc(x)) + self.shift) * 0.5",
)


def test_half_precision_model_new_keeps_the_inputs_dtype() -> None:
    """In fp16 the graph's numbers are one-element tensors in the inputs' dtype: a float32 one
    would promote the PyTorch line's product to float32 (the task returns float16), and the
    drop-in wrapper serves the inputs the kernels were verified on (float16), not the trace's."""
    import dataclasses

    result = optimize_source(SCALED_OPAQUE, dataclasses.replace(CONFIG, precision="fp16"))
    assert result.error is None, result.error
    assert result.verdict["status"] == "correct", result.verdict
    assert result.verdict["precision"] == "fp16"
    assert "dtype=torch.float32, device=x0.device)" not in result.model_new
    assert "torch.full((1,), 0.5, dtype=x0.dtype, device=x0.device)" in result.model_new
    assert "_DRTRITON_TENSORS = {0: ((None, 16), 'float16')}" in result.model_new


# 1024 x 1152 outputs: 72 tiles of 128 x 128, enough for the teacher's TMA contraction
# (heuristics.h kTmaMinPrograms), whose candidate imports TensorDescriptor.
WIDE_LINEAR = (
    model("self.fc = nn.Linear(d_in, d_out)", "return torch.relu(self.fc(x))")
    .replace("torch.randn(4, 16)", "torch.randn(1024, 16)")
    .replace("[16, 8]", "[16, 1152]")
)


def test_model_new_keeps_the_imports_its_kernels_add() -> None:
    """A hybrid's own imports (the TMA contraction's TensorDescriptor) reach ModelNew; without
    them its wrapper raised NameError on every GPU linear in bf16."""
    import dataclasses

    config = dataclasses.replace(CONFIG, precision="fp16", any_batch=False)
    result = optimize_source(WIDE_LINEAR, config)
    assert result.error is None, result.error
    assert result.verdict["status"] == "correct", result.verdict
    assert "\nfrom triton.tools.tensor_descriptor import TensorDescriptor\n" in result.model_new


class _NoPad:
    """The teacher, except for fragments with a pad: a concatenation stays in PyTorch."""

    def candidates(self, task: str, k: int, amplified: object = ()) -> list[str]:
        from drtriton.search import TemplatePolicy

        return [] if "F.pad" in task else TemplatePolicy().candidates(task, k)


CONCATENATED = model(
    "self.fc = nn.Linear(d_in, d_out)",
    "h = torch.relu(self.fc(x))\nreturn torch.cat([h, x, h], 1)",
)


def test_a_kept_concatenation_runs_as_one_cat_the_final_check_allows() -> None:
    """The hybrid's kept padded parts are one torch.cat (core/search/padded_sums.h), an
    operator no line of the program dispatches: the final verification allows it too."""
    config = OptimizeConfig(max_ops=2, k=1, policy=_NoPad(), any_batch=False)
    result = optimize_source(CONCATENATED, config)
    assert result.error is None, result.error
    assert result.verdict["status"] == "correct", result.verdict
    generated = result.model_new.split("generated by drtriton optimize")[1]
    assert "torch.cat([" in generated and "F.pad(" not in generated
    assert "cat" in result.verdict["allowed_torch"]

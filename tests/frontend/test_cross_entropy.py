"""Class losses with int64 targets (KernelBench L1 95): cross_entropy exports to _log_softmax
and nll_loss_forward, which map to the catalog's log_softmax and nll_loss; the targets become
torch.randint(0, C) inputs of the program; the teacher's kernels for it pass the verifier in
the interpreter; and an integer tensor anywhere the catalog does not take one stays a PyTorch
call (the program still reproduces the module), never an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drtriton import parse
from drtriton.frontend import check_equivalence, from_functional_source, from_module_source
from drtriton.optimize import OptimizeConfig, optimize_source
from drtriton.teach import emit, unsupported_ops
from shared_verifier import verify

KERNELBENCH = Path("/work/shared/kernelbench/level1.jsonl")


def loss_task(forward: str, inputs: str, init: str = "") -> str:
    """A KernelBench task whose forward takes scores `x` and targets `t`."""
    return (
        "import torch\nimport torch.nn as nn\n\n"
        "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"        {init or 'pass'}\n\n"
        f"    def forward(self, x, t):\n        {forward}\n\n"
        f"def get_inputs():\n    return [{inputs}]\n\n"
        "def get_init_inputs():\n    return []\n"
    )


SCORES_AND_TARGETS = "torch.randn(64, 100), torch.randint(0, 100, (64,))"
MAPPED = {
    # name: (forward, expected catalog operators)
    "cross_entropy": (
        "return torch.nn.functional.cross_entropy(x, t)",
        ["log_softmax", "nll_loss"],
    ),
    "sum_ignoring_a_class": (
        "return torch.nn.functional.cross_entropy(x, t, reduction='sum', ignore_index=3)",
        ["log_softmax", "nll_loss"],
    ),
    "per_sample": (
        "return torch.nn.functional.cross_entropy(x * 2.0, t, reduction='none')",
        ["mul", "log_softmax", "nll_loss"],
    ),
    "nll_of_log_probabilities": (
        "return torch.nn.functional.nll_loss(torch.log_softmax(x, dim=1), t)",
        ["log_softmax", "nll_loss"],
    ),
}


@pytest.mark.parametrize("name", sorted(MAPPED))
def test_class_loss_maps_and_reproduces_the_module(name):
    forward, ops = MAPPED[name]
    code = loss_task(forward, SCORES_AND_TARGETS)
    result = from_module_source(code)
    assert result.fully_mapped, result.source
    program = parse(result.program_text)
    assert program.ops == ops
    assert [i.dtype for i in result.inputs[:2]] == ["float32", "int64"]  # then constants
    assert "torch.randint(0, 100, (64,))" in result.program_text
    assert program.dtypes["x1"] == "int64"
    assert check_equivalence(code, result).ok


def test_training_mode_maps_the_same():
    code = loss_task(MAPPED["cross_entropy"][0], SCORES_AND_TARGETS)
    assert parse(from_module_source(code, training=True).program_text).ops == [
        "log_softmax",
        "nll_loss",
    ]


@pytest.mark.parametrize("name", sorted(MAPPED))
def test_the_teachers_class_loss_kernels_verify_in_the_interpreter(name):
    text = from_module_source(loss_task(MAPPED[name][0], SCORES_AND_TARGETS)).program_text
    assert unsupported_ops(text) == []
    candidate = emit(text)
    # cross_entropy is one rows kernel (and, reduced, the total of its partial sums): the
    # log-probabilities are never stored.
    assert "def k0_log_softmax_kernel" not in candidate
    verdict = verify(text, candidate, device="cpu", input_seed=0)
    assert verdict.correct, verdict.reason


def test_ignored_targets_do_not_count_towards_the_mean():
    """Targets drawn from [0, 4) with ignore_index=0: about a quarter of the rows are ignored
    in every input set, so a kernel that averaged over every row would be rejected."""
    text = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "def fused_operator(x0, x1):\n"
        "    t0 = torch.log_softmax(x0, 1)\n"
        "    t1 = F.nll_loss(t0, x1, ignore_index=0)\n"
        "    return t1\n\n"
        "def get_inputs():\n    return [torch.randn(40, 6), torch.randint(0, 4, (40,))]\n"
    )
    verdict = verify(text, emit(text), device="cpu", input_seed=0)
    assert verdict.correct, verdict.reason


# Integer tensors where the catalog takes none: the operator stays PyTorch, the rest maps.
OPAQUE = {
    "class_weights": (
        "return torch.nn.functional.cross_entropy(x, t, weight=self.w)",
        "self.register_buffer('w', torch.linspace(0.5, 2.0, 100))",
        "nll_loss_forward",
    ),
    "label_smoothing": (
        "return torch.nn.functional.cross_entropy(x, t, label_smoothing=0.1)",
        "",
        "eq.Scalar",
    ),
    "integer_arithmetic": ("return x * (t + 1).float().unsqueeze(1)", "", "add.Tensor"),
    "gather": ("return torch.gather(x, 1, t.unsqueeze(1)).mean()", "", "gather"),
    # Integer arithmetic on the indices stays PyTorch; the rows they pick map (embedding).
    "indexing_rows": ("return x[t % 64]", "", "remainder"),
}


@pytest.mark.parametrize("name", sorted(OPAQUE))
def test_integers_the_catalog_does_not_take_stay_pytorch_calls(name):
    forward, init, opaque = OPAQUE[name]
    code = loss_task(forward, SCORES_AND_TARGETS, init)
    result = from_module_source(code)
    assert not result.fully_mapped
    assert any(opaque in call for call in result.opaque_calls), result.opaque_calls
    assert all(line.public is not None for line in result.lines if line.opaque), result.source
    assert check_equivalence(code, result).ok


def test_a_run_reading_targets_is_a_task_with_randint_inputs():
    """atan has no catalog entry: the run after it (log_softmax, nll_loss) is a task of its own
    whose targets are drawn as class indices of the scores' dim."""
    result = from_module_source(
        loss_task("return torch.nn.functional.cross_entropy(torch.atan(x), t)", SCORES_AND_TARGETS)
    )
    runs = [run for run in result.runs() if run.task is not None]
    assert len(runs) == 1
    assert parse(runs[0].task).ops == ["log_softmax", "nll_loss"]
    assert "torch.randint(0, 100, (64,))" in runs[0].task


def test_a_functional_task_with_targets_keeps_their_bound():
    text = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "def fused_operator(x0, x1):\n    t0 = F.nll_loss(x0, x1)\n    return t0\n\n"
        "def get_inputs():\n    return [torch.randn(8, 5), torch.randint(0, 5, (8,))]\n"
    )
    assert from_functional_source(text).index_bounds == {"x1": 5}


@pytest.mark.skipif(not KERNELBENCH.exists(), reason="no KernelBench level-1 file here")
def test_kernelbench_cross_entropy_optimizes_to_a_fully_mapped_verified_model():
    """L1 95 at 64 x 100 (the file's batch_size and num_classes shrunk): every operator in one
    Triton fragment, ModelNew verified on the CPU."""
    records = [json.loads(line) for line in KERNELBENCH.read_text().splitlines()]
    code = next(r["code"] for r in records if r["problem_id"] == 95)
    code = code.replace("batch_size = 32768", "batch_size = 64")
    code = code.replace("num_classes = 4096", "num_classes = 100")
    result = optimize_source(code, OptimizeConfig(max_ops=3, k=1))
    assert result.correct, result.verdict
    assert result.frontend["fully_mapped"], result.frontend
    assert "k0_nll_loss_rows_kernel" in result.model_new
    assert "log_softmax_kernel" not in result.model_new
    assert "Nothing: every operator runs in a Triton kernel." in result.report_markdown()

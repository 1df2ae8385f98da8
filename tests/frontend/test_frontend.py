"""The torch.export frontend on small module tasks with parameters (KernelBench format)."""

from __future__ import annotations

from typing import Any

import pytest

from drtriton import parse
from drtriton.errors import UserError
from drtriton.frontend import check_equivalence, from_functional_source, from_module_source


def module_task(
    init: str, forward: str, inputs: str, init_inputs: str = "", args: str = "x"
) -> str:
    """A KernelBench task; `init` and `forward` are bodies, one statement per line, and
    `args` forward's arguments."""

    def body(text: str) -> str:
        return "".join(f"        {line}\n" for line in text.strip().splitlines())

    return (
        "import torch\nimport torch.nn as nn\n\n"
        "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"{body(init)}\n    def forward(self, {args}):\n{body(forward)}\n"
        f"def get_inputs():\n    return [{inputs}]\n\n"
        f"def get_init_inputs():\n    return [{init_inputs}]\n"
    )


def assert_maps_and_reproduces(code: str, ops: list[str] | None = None) -> None:
    """`code` maps fully onto the catalog (onto `ops`, in order, when given) and the mapped
    program reproduces the module's outputs."""
    result = from_module_source(code)
    assert result.fully_mapped, result.source
    if ops is not None:
        assert parse(result.program_text).ops == ops, result.program_text
    equivalence = check_equivalence(code, result)
    assert equivalence.ok, equivalence.reason


def assert_stays_partly_pytorch(code: str) -> Any:
    """`code` keeps some PyTorch call (no catalog spelling) and still reproduces the module;
    returns the export result."""
    result = from_module_source(code)
    assert not result.fully_mapped
    assert check_equivalence(code, result).ok
    return result


LINEAR_RELU = module_task(
    "self.fc = nn.Linear(16, 8)\n", "return torch.relu(self.fc(x))\n", "torch.randn(4, 16)"
)
CONV_BN_RELU = module_task(
    "self.conv = nn.Conv2d(3, 8, 3, padding=1)\nself.bn = nn.BatchNorm2d(8)\n",
    "return torch.relu(self.bn(self.conv(x)))\n",
    "torch.randn(2, 3, 8, 8)",
)
LAYER_NORM = module_task(
    "self.ln = nn.LayerNorm(32)\n", "return self.ln(x)\n", "torch.randn(4, 6, 32)"
)
SCALED = module_task(
    "self.fc = nn.Linear(16, 8)\n",
    "y = self.fc(x) * 2.0\nreturn torch.softmax(y.mean(dim=[0], keepdim=True) + y, dim=1)\n",
    "torch.randn(4, 16)",
)


def test_linear_relu_maps_fully_with_parameters_as_inputs():
    result = from_module_source(LINEAR_RELU)
    assert result.fully_mapped
    program = parse(result.program_text)
    assert program.ops == ["linear", "relu"]
    assert program.inputs == ["x0", "p_fc_weight", "p_fc_bias"]
    assert program.shapes["p_fc_weight"] == [8, 16]
    assert [i.kind for i in result.inputs] == ["user", "parameter", "parameter"]
    assert check_equivalence(LINEAR_RELU, result).ok


def test_conv_batchnorm_eval_relu():
    result = from_module_source(CONV_BN_RELU)
    assert result.fully_mapped, result.source
    program = parse(result.program_text)
    assert program.ops == ["conv2d", "batch_norm", "relu"]
    # Parameters in module order, then buffers; num_batches_tracked is unused and dropped.
    assert [i.kind for i in result.inputs] == ["user"] + ["parameter"] * 4 + ["buffer"] * 2
    running_var = next(i for i in result.inputs if i.target == "bn.running_var")
    assert running_var.positive  # the task creates it with torch.rand
    assert check_equivalence(CONV_BN_RELU, result).ok


def test_conv_batchnorm_in_training_mode_uses_batch_statistics():
    # KernelBench evaluates modules in training mode: batch norm normalizes with the batch's
    # own statistics (batch_norm_train); the running-statistics updates are state, not results.
    import torch

    from drtriton.frontend.equivalence import _argument, run_functional
    from drtriton.frontend.export import load_module_task

    result = from_module_source(CONV_BN_RELU, training=True)
    assert result.fully_mapped, result.source
    assert parse(result.program_text).ops == ["conv2d", "batch_norm_train", "relu"]
    task = load_module_task(CONV_BN_RELU, 0, training=True)
    assert task.model.training
    args = [_argument(task.model, task.inputs, result, inp) for inp in result.inputs]
    with torch.no_grad():
        expected = task.model(*task.inputs)
        got = run_functional(result.source, args)
    assert torch.allclose(got, expected, atol=1e-5, rtol=1e-5)


def test_batch_statistics_left_opaque_record_why_on_their_line():
    # With batch_statistics off, batch norm in training mode stays a PyTorch call: the frontend
    # says so on that line (optimize's report reads it), and on no other.
    from drtriton.frontend.lower import BATCH_STATISTICS

    result = from_module_source(CONV_BN_RELU, training=True, batch_statistics=False)
    assert not result.fully_mapped
    reasons = {line.call.split("(")[0]: line.reason for line in result.lines if line.opaque}
    assert reasons["torch.ops.aten._native_batch_norm_legit_functional.default"] == (
        BATCH_STATISTICS
    )
    assert [line.reason for line in result.lines].count(BATCH_STATISTICS) == 1
    assert all(line.reason is None for line in from_module_source(CONV_BN_RELU).lines)


def test_layer_norm():
    result = from_module_source(LAYER_NORM)
    assert parse(result.program_text).ops == ["layer_norm"]
    assert check_equivalence(LAYER_NORM, result).ok


def test_scalar_operands_become_one_element_constant_inputs():
    result = from_module_source(SCALED)
    assert result.fully_mapped
    assert parse(result.program_text).ops == ["linear", "mul", "mean", "add", "softmax"]
    constants = [i for i in result.inputs if i.kind == "constant"]
    assert [(i.shape, result.constants[i.target].tolist()) for i in constants] == [([1], [2.0])]
    assert check_equivalence(SCALED, result).ok


WITH_ERF = module_task(
    "self.fc = nn.Linear(16, 8)\n",
    "y = torch.atan(self.fc(x))\nreturn torch.softmax(y.mean(dim=[0], keepdim=True) + y, dim=1)\n",
    "torch.randn(4, 16)",
)


def test_an_opaque_operator_stays_in_pytorch_and_runs_split_around_it():
    result = from_module_source(WITH_ERF)
    assert not result.fully_mapped
    assert result.opaque_calls == ["torch.ops.aten.atan.default"]
    runs = result.runs()
    assert [r.lines[0].opaque for r in runs] == [False, True, False]
    assert parse(runs[0].task).ops == ["linear"]
    assert parse(runs[2].task).ops == ["mean", "add", "softmax"]
    assert runs[2].inputs == [runs[1].outputs[0]]
    assert check_equivalence(WITH_ERF, result).ok


def test_factory_calls_follow_the_inputs_device():
    # where with a number decomposes into scalar_tensor with the trace's device='cpu' baked in
    # (as triu did before it was kept whole); on a GPU those CPU tensors met the CUDA input
    # (KernelBench L1 14).  The meta device stands in for "not the CPU" here: every opaque
    # line must evaluate there.
    from drtriton.optimize.allowed import allowed_ops

    task = module_task("", "y = x @ x\nreturn torch.where(y > 0, y, 0.5)\n", "torch.randn(8, 8)")
    result = from_module_source(task)
    assert not any("torch.device('cpu')" in (line.public or line.call) for line in result.lines)
    kept = {line.result for line in result.lines}
    assert "where" in allowed_ops(result, kept, "meta")
    assert check_equivalence(task, result).ok


def test_the_model_alone_is_built_without_drawing_inputs():
    from drtriton.frontend.export import load_module_task

    task = module_task("self.fc = nn.Linear(16, 8)\n", "return self.fc(x)\n", "1 / 0")
    loaded = load_module_task(task, inputs=False)  # get_inputs() would raise
    assert loaded.inputs == [] and loaded.model.fc.out_features == 8


def test_reduction_over_two_dims_becomes_two_reductions():
    code = module_task("pass\n", "return x.mean(dim=[2, 3])\n", "torch.randn(2, 3, 4, 5)")
    result = from_module_source(code)
    assert parse(result.program_text).ops == ["mean", "mean"]
    assert check_equivalence(code, result).ok


def test_equivalence_catches_a_wrong_program():
    result = from_module_source(LINEAR_RELU)
    result.source = result.source.replace("torch.relu", "torch.sigmoid")
    assert not check_equivalence(LINEAR_RELU, result).ok


def test_functional_task_is_accepted_directly():
    text = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "def fused_operator(x0, x1):\n    t0 = torch.add(x0, x1)\n    t1 = torch.relu(t0)\n"
        "    return t1\n\ndef get_inputs():\n    return [torch.randn(4, 4), torch.randn(4)]\n"
    )
    result = from_functional_source(text)
    assert result.fully_mapped and [line.op for line in result.lines] == ["add", "relu"]
    assert [r.task is not None for r in result.runs()] == [True]
    with pytest.raises(UserError):
        from_functional_source("def fused_operator(x0):\n    return x0\n")


def test_missing_definitions_are_a_user_error():
    with pytest.raises(UserError):
        from_module_source("import torch\n")


def test_same_padding_becomes_ints_where_symmetric():
    code = module_task(
        "self.conv = nn.Conv2d(3, 4, 3, padding='same', dilation=2)\n",
        "return self.conv(x)\n",
        "torch.randn(2, 3, 9, 9)",
    )
    result = from_module_source(code)
    assert "F.conv2d(x0, p_conv_weight, p_conv_bias, [1, 1], [2, 2], [2, 2])" in result.program_text
    assert check_equivalence(code, result).ok


def test_tensor_made_in_forward_is_a_constant_input():
    code = module_task(
        "pass\n", "return torch.relu(x) + torch.tensor([0.5, 1.5])\n", "torch.randn(3, 2)"
    )
    result = from_module_source(code)
    assert [i.kind for i in result.inputs] == ["user", "constant"]
    assert check_equivalence(code, result).ok


def test_zero_dim_tensor_made_in_forward_is_taken_as_a_number():
    code = module_task(
        "self.fc = nn.Linear(8, 8)\n",
        "return torch.min(self.fc(x), torch.tensor(0.25)) - 0.5\n",
        "torch.randn(4, 8)",
    )
    result = from_module_source(code)
    assert result.fully_mapped
    assert parse(result.program_text).ops == ["linear", "minimum", "sub"]
    assert check_equivalence(code, result).ok


def test_zero_dim_parameter_used_elementwise_is_a_one_element_input():
    code = module_task(
        "self.fc = nn.Linear(8, 8)\nself.c = nn.Parameter(torch.tensor(0.3))\n",
        "return torch.min(self.fc(x), self.c) - self.c\n",
        "torch.randn(4, 8)",
    )
    result = from_module_source(code)
    assert result.fully_mapped
    assert parse(result.program_text).ops == ["linear", "minimum", "sub"]
    widened = [i for i in result.inputs if i.as_one_element]
    assert [(i.target, i.shape) for i in widened] == [("c", [1])]
    assert check_equivalence(code, result).ok


def test_zero_dim_parameter_through_unary_operators_is_a_one_element_input():
    """CLIP's logit scale: x * logit_scale.exp(); the exp of one element broadcasts alike."""
    code = module_task(
        "self.c = nn.Parameter(torch.tensor(0.3))\n",
        "return torch.relu(x) * torch.exp(self.c) + x * torch.sigmoid(-self.c)\n",
        "torch.randn(4, 8)",
    )
    result = from_module_source(code)
    assert result.fully_mapped
    assert [i.target for i in result.inputs if i.as_one_element] == ["c"]
    assert check_equivalence(code, result).ok


def test_zero_dim_parameter_used_otherwise_stays_zero_dim():
    # Its exp is returned: a 0-d output, which one element would not be.
    code = module_task(
        "self.c = nn.Parameter(torch.tensor(0.3))\n",
        "return torch.relu(x) * torch.exp(self.c), torch.exp(self.c)\n",
        "torch.randn(4, 8)",
    )
    result = from_module_source(code)
    assert not any(i.as_one_element for i in result.inputs)
    assert check_equivalence(code, result).ok


def test_an_export_shows_no_torch_leafspec_future_warning():
    """Issue 22 item 10: every optimize run printed torch's own `isinstance(treespec,
    LeafSpec)` FutureWarning; the frontend silences exactly that one around torch.export."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from_module_source(LINEAR_RELU)
    leafspec = [w for w in caught if "LeafSpec" in str(w.message)]
    assert leafspec == []


def test_identical_catalog_lines_are_computed_once():
    """var_mean's var and mean both take the mean, and the module takes it a third time: one
    line computes it (frontend/lower.py _merge_duplicates), read by the others' readers."""
    code = module_task(
        "",
        "v, m = torch.var_mean(x, dim=1, keepdim=True)\n"
        "return (x - x.mean(1, keepdim=True)) / torch.sqrt(v + 1e-5), m\n",
        "torch.randn(4, 8)",
    )
    assert_maps_and_reproduces(code)
    ops = parse(from_module_source(code).program_text).ops
    assert ops.count("mean") == 1 and ops.count("sub") == 1, ops


def test_random_pytorch_calls_are_not_merged():
    """Two dropouts in training mode draw two masks: both lines stay."""
    code = module_task("", "return F.dropout(x, 0.5, True) + F.dropout(x, 0.5, True)\n",
                       "torch.randn(4, 8)")  # fmt: skip
    code = code.replace(
        "import torch.nn as nn\n", "import torch.nn as nn\nimport torch.nn.functional as F\n"
    )
    result = from_module_source(code)
    assert sum("dropout" in line.call for line in result.lines if line.opaque) == 2

"""forward's Python-number arguments (KernelBench 5_Matrix_scalar_multiplication): read at run
time where the graph uses a float as an operand, specialized (and named so) everywhere else."""

from __future__ import annotations

import pytest

from drtriton.errors import UserError
from drtriton.frontend import check_equivalence, from_module_source


def scalar_task(expr: str, inputs: str) -> str:
    return (
        "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
        f"    def forward(self, A, s):\n        return {expr}\n\n"
        f"def get_inputs():\n    return [{inputs}]\n\ndef get_init_inputs():\n    return []\n"
    )


def test_float_operand_is_a_runtime_input_and_a_literal_stays_a_constant():
    # s and the literal 3.14 are equal: only the second export tells them apart.
    code = scalar_task("torch.relu(A * s + 3.14)", "torch.randn(4, 8), 3.14")
    result = from_module_source(code)
    assert result.fully_mapped and result.signature == ["x0", "x1"] and not result.specialized
    kinds = {i.name: (i.kind, i.target) for i in result.inputs}
    assert kinds["x1_t"] == ("scalar", "x1")
    assert [k for k, _ in kinds.values()].count("constant") == 1
    mul = next(line for line in result.lines if line.op == "mul")
    assert "x1_t" in mul.operands
    assert check_equivalence(code, result).ok


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("torch.sum(A, dim=s)", "1"),  # an int used as a dim
        ("A.reshape(s, -1)", "2"),  # an int used as a size (an opaque line)
        ("A * (2 * s)", "0.5"),  # a float the graph only holds derived
        ("torch.nn.functional.leaky_relu(A, s)", "0.1"),  # a float the catalog takes as attribute
    ],
)
def test_other_number_arguments_are_specialized(expr: str, value: str):
    code = scalar_task(expr, f"torch.randn(4, 8), {value}")
    result = from_module_source(code)
    assert result.signature == ["x0", "x1"]
    assert result.specialized == {"x1": eval(value)}
    assert all(i.kind != "scalar" for i in result.inputs)
    assert check_equivalence(code, result).ok


def test_none_argument_keeps_its_position():
    code = scalar_task("A * A", "torch.randn(4, 8), None").replace(
        "forward(self, A, s)", "forward(self, A, s, B=None)"
    )
    code = code.replace("torch.randn(4, 8), None", "torch.randn(4, 8), None, torch.randn(4, 8)")
    code = code.replace("return A * A", "return A * B")
    result = from_module_source(code)
    assert result.signature == ["x0", "x1", "x2"] and result.specialized == {"x1": None}
    assert [i.name for i in result.inputs if i.kind == "user"] == ["x0", "x2"]
    assert check_equivalence(code, result).ok


def test_container_argument_is_a_user_error():
    with pytest.raises(UserError, match="input 1 is a list"):
        from_module_source(scalar_task("A * s[0]", "torch.randn(4, 8), [2.0, 3.0]"))

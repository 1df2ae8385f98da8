"""The Python face of the program IR: parse, shapes, FLOPs, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import drtriton

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "programs" / "conv_relu_add.py"


def test_parse_example_infers_shapes_and_costs() -> None:
    program = drtriton.parse(EXAMPLE.read_text())
    assert program.ops == ["conv2d", "relu", "add"]
    assert program.level == 3
    assert program.inputs == ["x0", "x1", "x2"]
    assert program.outputs == ["t2"]
    assert program.shapes["t0"] == [16, 8, 32, 32]
    assert program.shapes["t2"] == [16, 8, 32, 32]
    # conv: 2 * output elements * (C_in * kh * kw) = 2 * 131072 * 27, plus one per element
    # for relu and add.
    assert program.flops == 2 * 16 * 8 * 32 * 32 * 27 + 2 * 16 * 8 * 32 * 32
    elements_in = 16 * 3 * 32 * 32 + 8 * 3 * 3 * 3 + 8
    assert program.bytes == 4 * (elements_in + 16 * 8 * 32 * 32)


def test_canonical_text_round_trips() -> None:
    text = EXAMPLE.read_text()
    program = drtriton.parse(text)
    assert program.source == text
    assert drtriton.parse(program.source).source == program.source


def test_program_runs_under_torch_with_inferred_shapes() -> None:
    import torch

    program = drtriton.parse(EXAMPLE.read_text())
    namespace: dict = {}
    exec(compile(program.source, "<program>", "exec"), namespace)
    out = namespace["fused_operator"](*namespace["get_inputs"]())
    assert list(out.shape) == program.shapes["t2"]
    assert out.dtype == torch.float32


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        (
            "def fused_operator(x0):\n    t0 = torch.frobnicate(x0)\n    return t0\n"
            "def get_inputs():\n    return [torch.randn(2, 3)]\n",
            2,
            "frobnicate",
        ),
        (
            "def fused_operator(x0, x1):\n    t0 = torch.add(x0, x1)\n    return t0\n"
            "def get_inputs():\n    return [torch.randn(2, 3), torch.randn(4, 3)]\n",
            2,
            "broadcast",
        ),
        (
            "def fused_operator(x0):\n    t0 = torch.relu(x9)\n    return t0\n"
            "def get_inputs():\n    return [torch.randn(2, 3)]\n",
            2,
            "x9",
        ),
    ],
)
def test_bad_programs_name_the_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(drtriton.ProgramError) as info:
        drtriton.parse(text)
    assert info.value.line == line
    assert fragment in str(info.value)


def test_program_error_is_a_user_error() -> None:
    with pytest.raises(drtriton.UserError):
        drtriton.parse("this is not a program")

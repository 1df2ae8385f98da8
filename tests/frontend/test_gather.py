"""Rows picked by int64 indices: nn.Embedding, x[idx] and index_select (along any dim) map to
the catalog's embedding (F.embedding) with reshapes and permutes of the float tensors around
it; the mapped program reproduces the module and its kernels verify in the interpreter. The
kernel loads each index, then its row (codegen/expr.cc EmitEmbedding), inline in whatever
kernel reads the rows: a pointwise one, a layer norm's rows, a contraction's operand."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

import pytest
from test_frontend import assert_maps_and_reproduces, module_task

from drtriton import parse
from drtriton.frontend import from_module_source
from drtriton.frontend.equivalence import check_equivalence
from drtriton.teach import emit
from shared_verifier import verify


def indexed_task(init: str, forward: str, inputs: str) -> str:
    """A module of a float input x and an int64 input i."""
    return module_task(init, forward, inputs, args="x, i")


CASES = {
    # name: (init, forward, inputs, expected catalog operators)
    "embedding_scaled": (
        "self.e = nn.Embedding(12, 8)",
        "return self.e(i) * x[:, :, None]",
        "torch.randn(3, 5), torch.randint(0, 12, (3, 5))",
        ["embedding", "reshape", "mul"],
    ),
    "index_select_rows": (
        "",
        "return torch.index_select(x, 0, i)",
        "torch.randn(6, 5), torch.randint(0, 6, (4,))",
        ["embedding"],
    ),
    # Along dim 1 of a 3-d tensor: the dim moved first, the rest flattened, then back.
    "index_select_middle_dim": (
        "",
        "return torch.index_select(torch.sigmoid(x).reshape(2, 3, 5), 1, i)",
        "torch.randn(6, 5), torch.randint(0, 3, (4,))",
        ["sigmoid", "reshape", "permute", "reshape", "embedding", "reshape", "permute"],
    ),
    # A constant index buffer (relative-position tables) and an index input, one program.
    "buffer_and_input_indices": (
        "self.register_buffer('idx', torch.tensor([3, 1, 2, 0, 5]))",
        "return x[self.idx] + x[i]",
        "torch.randn(6, 5), torch.randint(0, 6, (5,))",
        ["embedding", "embedding", "add"],
    ),
    # Indices reshaped before the gather (a relative-position table read through
    # index.view(-1); embedding(tokens.flatten())): gathered as they are, the rows reshaped
    # after (frontend/rewrite.py gathers_through_index_views).
    "relative_position_bias": (
        "self.table = nn.Parameter(torch.randn(9, 2))\n"
        "self.register_buffer('index', torch.randint(0, 9, (4, 4)))",
        "bias = self.table[self.index.view(-1)].view(4, 4, 2).permute(2, 0, 1)\n"
        "return torch.softmax(x.reshape(2, 4, 4) + 16 * torch.sigmoid(bias), -1) + self.table[i].sum(-1)",
        "torch.randn(2, 16), torch.randint(0, 9, (2, 4, 4))",
        None,
    ),
    "embedding_of_flattened_tokens": (
        "self.e = nn.Embedding(10, 6)",
        "return self.e(i.flatten()).reshape(2, 3, 6) * x[:, :, None]",
        "torch.randn(2, 3), torch.randint(0, 10, (2, 3))",
        ["embedding", "reshape", "reshape", "reshape", "mul"],
    ),
    "embedding_layer_norm": (
        "self.e = nn.Embedding(50, 64)\nself.ln = nn.LayerNorm(64)",
        "return self.ln(self.e(i)) + x[:, :, None]",
        "torch.randn(4, 9), torch.randint(0, 50, (4, 9))",
        ["embedding", "layer_norm", "reshape", "add"],
    ),
    "embedding_linear": (
        "self.e = nn.Embedding(50, 64)\nself.fc = nn.Linear(64, 32)",
        "return torch.relu(self.fc(self.e(i))) * x[:, :, None]",
        "torch.randn(4, 9), torch.randint(0, 50, (4, 9))",
        ["embedding", "linear", "relu", "reshape", "mul"],
    ),
    # One index on a later dim keeps its place: x[:, i] is (rows, *i.shape).
    "columns_picked": (
        "",
        "return torch.tanh(x)[:, i] * 2",
        "torch.randn(6, 5), torch.randint(0, 5, (2, 3))",
        ["tanh", "permute", "embedding", "permute", "mul"],
    ),
    "gathered_matmul_operand": (
        "self.w = nn.Parameter(torch.randn(20, 16))",
        "return x @ self.w[i]",
        "torch.randn(4, 12), torch.randint(0, 20, (12,))",
        ["embedding", "matmul"],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gathers_map_reproduce_and_verify(name: str) -> None:
    init, forward, inputs, ops = CASES[name]
    code = indexed_task(init, forward, inputs)
    assert_maps_and_reproduces(code, ops)
    text = from_module_source(code).program_text
    verdict = verify(text, emit(text), device="cpu", input_seed=0)
    assert verdict.correct, verdict.reason


def test_indices_are_drawn_within_the_rows_they_index() -> None:
    init, forward, inputs, _ = CASES["index_select_middle_dim"]
    program = parse(from_module_source(indexed_task(init, forward, inputs)).program_text)
    assert "torch.randint(0, 3, (4,))" in program.source


def test_a_bool_mask_index_stays_a_pytorch_call() -> None:
    """x[mask] has as many rows as the mask holds: no shape the program could state."""
    code = indexed_task(
        "", "return x[x > 0] + i.sum()", "torch.randn(6, 5), torch.randint(0, 6, (3,))"
    )
    result = from_module_source(code)
    assert not result.fully_mapped
    assert any("index.Tensor" in line.call for line in result.lines if line.opaque)
    assert check_equivalence(code, result).ok


PROBE = r"""
import json, pathlib, sys
import torch
from drtriton.verify.task import import_file

folder = pathlib.Path(sys.argv[1])
weight = torch.arange(12.0).reshape(4, 3)
index = torch.tensor([2, -1, -4, 4, -5, 0])
out = import_file(str(folder / "cand.py"), "cand").triton_fused_operator(index, weight)
print(json.dumps(out.tolist()))
"""


def test_negative_indices_count_from_the_end_and_outside_ones_read_zeros(
    tmp_path: pathlib.Path, interpreted_probe: Callable[[str, pathlib.Path], Any]
) -> None:
    text = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "def fused_operator(x0, x1):\n    t0 = F.embedding(x0, x1)\n    return t0\n\n"
        "def get_inputs():\n    return [torch.randint(0, 4, (6,)), torch.randn(4, 3)]\n"
    )
    (tmp_path / "cand.py").write_text(emit(text))
    rows = interpreted_probe(PROBE, tmp_path)
    # x[idx]'s wrap for -1 and -4; 4 and -5 lie outside 4 rows (PyTorch raises there).
    assert rows == [[6, 7, 8], [9, 10, 11], [0, 1, 2], [0, 0, 0], [0, 0, 0], [0, 1, 2]]

"""Products with a diagonal matrix made from a vector become broadcast multiplies before
decomposition (frontend/rewrite.py): the mapped program has no matrix product, reproduces the
module, and its kernels verify in the interpreter."""

from __future__ import annotations

import pytest
import torch
from test_frontend import assert_maps_and_reproduces

from drtriton.frontend import from_module_source
from drtriton.frontend.rewrite import diagonal_products
from drtriton.teach import emit
from shared_verifier import verify


def two_input_task(body: str, a: str = "torch.randn(24)", b: str = "torch.randn(24, 20)") -> str:
    return (
        "import torch\nimport torch.nn as nn\n\n"
        "class Model(nn.Module):\n    def forward(self, a, b):\n"
        f"        return {body}\n\n"
        f"def get_inputs():\n    return [{a}, {b}]\n\n"
        "def get_init_inputs():\n    return []\n"
    )


SCALINGS = {
    # name: (forward's expression, expected catalog operators)
    "rows": ("torch.diag(a) @ b", ["reshape", "mul"]),
    "columns": ("b.t() @ torch.diag(a)", ["transpose", "mul"]),
    "diag_embed_vector": ("torch.matmul(torch.diag_embed(a), b[:, 0])", ["select", "mul"]),
    "mm_of_computed_vector": ("torch.mm(torch.diag(a * 2.0), b)", ["mul", "reshape", "mul"]),
    # b of rank 3: each of the 3 matrices' rows scaled (v broadcasts over the batch).
    "batched_rows": ("torch.diag(a) @ (b.reshape(3, 8, 20).repeat(1, 3, 1) + 1.0)", None),
}


@pytest.mark.parametrize("name", sorted(SCALINGS))
def test_diagonal_products_map_to_a_scaling(name: str) -> None:
    body, ops = SCALINGS[name]
    code = two_input_task(body)
    assert_maps_and_reproduces(code, ops)
    text = from_module_source(code).program_text
    assert "matmul" not in text and "torch.mm" not in text
    verdict = verify(text, emit(text), device="cpu", input_seed=0)
    assert verdict.correct, verdict.reason


def test_a_diagonal_matrix_used_elsewhere_stays_for_that_use() -> None:
    # The product is rewritten; the sum over diag(a) still needs the matrix (a PyTorch call).
    code = two_input_task("torch.diag(a) @ b + torch.diag(a).sum()")
    result = from_module_source(code)
    assert not result.fully_mapped
    assert "matmul" not in result.source


def test_off_diagonal_and_matrix_diagonals_are_left_alone() -> None:
    class Model(torch.nn.Module):
        def forward(self, a: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
            # diag of a matrix is a vector; diag(a, 1) is an off-diagonal matrix.
            return torch.diag(a, 1)[:4, :4] @ m + torch.diag(m) @ m

    exported = torch.export.export(Model(), (torch.randn(4), torch.randn(4, 4)))
    assert diagonal_products(exported.graph_module) == 0


def test_the_rewrite_keeps_the_products_values() -> None:
    class Model(torch.nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
            return torch.diag(a) @ b, b.t() @ torch.diag(a), torch.diag(a) @ b[:, 1]

    inputs = (torch.randn(6), torch.randn(6, 5))
    exported = torch.export.export(Model(), inputs)
    assert diagonal_products(exported.graph_module) == 3
    for got, want in zip(exported.module()(*inputs), Model()(*inputs), strict=True):
        torch.testing.assert_close(got, want)

"""A bool mask passed to forward is a program input: torch.randint(0, 2, size,
dtype=torch.bool) in get_inputs, read by torch.where where the module multiplies by it.

On the CPU (Triton's interpreter), small shapes."""

from __future__ import annotations

import os

import pytest

from drtriton import _core
from drtriton.frontend import check_equivalence, from_module_source
from drtriton.optimize import OptimizeConfig, optimize_source

os.environ.pop("TRITON_INTERPRET", None)

# A masked running sum, as models write it (a float tensor times a bool one).
MASKED_CUMSUM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=self.dim)

def get_inputs():
    return [torch.randn(4, 16), torch.randint(0, 2, (4, 16)).bool()]

def get_init_inputs():
    return [1]
"""


def test_a_mask_input_maps_whole_and_reproduces_the_module() -> None:
    frontend = from_module_source(MASKED_CUMSUM)
    assert frontend.fully_mapped
    assert [i.dtype for i in frontend.inputs if i.kind == "user"] == ["float32", "bool"]
    assert "torch.randint(0, 2, (4, 16), dtype=torch.bool)" in frontend.program_text
    ok, program, _ = _core.parse(frontend.program_text)
    assert ok and program["source"] == frontend.program_text
    assert check_equivalence(MASKED_CUMSUM, frontend).ok


@pytest.mark.skipif(not hasattr(_core, "codegen_variants"), reason="no teacher binding")
def test_masked_cumsum_is_one_verified_kernel() -> None:
    result = optimize_source(MASKED_CUMSUM, OptimizeConfig(max_ops=3, k=1))
    assert result.error is None, result.error
    assert result.verdict["status"] == "correct", result.verdict
    assert [s["ops"] for s in result.segments if s["fused"]] == [["mul", "where", "cumsum"]]
    assert "torch.cumsum" not in result.model_new.split("ModelNew below")[1]

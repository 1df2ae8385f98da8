"""Scaled dot-product attention stays one PyTorch call (frontend/export.py says why).

On the CPU (Triton's interpreter), small shapes."""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F

from drtriton import _core
from drtriton.frontend import check_equivalence, from_module_source
from drtriton.frontend.public import public_call
from drtriton.optimize import OptimizeConfig, optimize_source

os.environ.pop("TRITON_INTERPRET", None)

# nn.TransformerEncoderLayer in eval mode calls F.multi_head_attention_forward with
# need_weights=False, which reaches F.scaled_dot_product_attention (KernelBench L3 28, 32).
ENCODER = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=2 * dim, dropout=0.0)

    def forward(self, x):
        return torch.tanh(self.layer(x)) * 2.0

def get_inputs():
    return [torch.rand(3, 2, 16)]

def get_init_inputs():
    return [16, 4]
"""

# The call's own options: a causal mask and a scale given by keyword.
CAUSAL = """import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3).relu() * 2.0 + 1.0

def get_inputs():
    return [torch.rand(2, 3, 5, 8), torch.rand(2, 3, 5, 8), torch.rand(2, 3, 5, 8)]

def get_init_inputs():
    return []
"""


def _attention_lines(code: str) -> list:
    frontend = from_module_source(code)
    return [line for line in frontend.lines if "scaled_dot_product_attention" in line.call]


@pytest.mark.parametrize("code", [ENCODER, CAUSAL], ids=["encoder_layer", "causal_scaled"])
def test_attention_is_one_opaque_line_that_reproduces_the_module(code: str) -> None:
    frontend = from_module_source(code)
    calls = [line.call.split("(")[0] for line in frontend.lines]
    assert calls.count("torch.ops.aten.scaled_dot_product_attention.default") == 1
    # Not decomposed: no softmax, and none of _safe_softmax's guard for fully masked rows.
    assert not any(op in c for c in calls for op in ("softmax", "logical_not", "matmul"))
    (line,) = _attention_lines(code)
    assert line.op is None and not frontend.fully_mapped
    assert line.public is not None and line.public.startswith("F.scaled_dot_product_attention(")
    equivalence = check_equivalence(code, frontend)
    assert equivalence.ok, equivalence


def test_causal_keywords_reach_the_public_spelling() -> None:
    (line,) = _attention_lines(CAUSAL)
    assert "True" in line.public and "scale=0.3" in line.public


def test_public_spelling_computes_the_aten_call() -> None:
    q, k, v = (torch.rand(2, 3, 5, 8) for _ in range(3))
    mask = torch.rand(5, 5) > 0.3
    args, kwargs = ["q", "k", "v", "mask", 0.0, False], {"scale": 0.25}
    spelling = public_call(torch.ops.aten.scaled_dot_product_attention.default, args, kwargs, str)
    assert spelling is not None and "torch.ops" not in spelling
    got = eval(spelling, {"F": F}, {"q": q, "k": k, "v": v, "mask": mask})  # our own spelling
    want = torch.ops.aten.scaled_dot_product_attention.default(
        q, k, v, mask, 0.0, False, scale=0.25
    )
    assert torch.equal(got, want)


@pytest.mark.skipif(not hasattr(_core, "codegen_variants"), reason="no teacher binding")
def test_attention_hybrid_verifies_with_the_call_in_pytorch() -> None:
    result = optimize_source(CAUSAL, OptimizeConfig(max_ops=3, k=1))
    assert result.error is None, result.error
    assert result.verdict["status"] == "correct", result.verdict
    assert "F.scaled_dot_product_attention(" in result.model_new
    assert [s["ops"] for s in result.segments if s["fused"]] == [["relu", "mul", "add"]]


def _exported_attention_graph(shape: tuple[int, ...]) -> torch.fx.Graph:
    from drtriton.frontend.export import load_module_task

    code = CAUSAL.replace("torch.rand(2, 3, 5, 8)", f"torch.rand{shape}")
    task = load_module_task(code, fake_inputs=True)  # shapes only: L1 97's would be 6 GB
    return torch.export.export(task.model, tuple(task.inputs)).graph


def test_only_small_attention_stays_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    from drtriton.frontend import export

    # KernelBench L1 97's call (1.1 TFLOP) is decomposed; L3 28's (2 MFLOP) is not.
    (node,) = [
        n
        for n in _exported_attention_graph((32, 32, 512, 1024)).nodes
        if n.target is export.ATTENTION
    ]
    assert export.attention_flops(node) == 2 * 32 * 32 * 512 * 512 * 2048
    assert not export._attention_is_small(_exported_attention_graph((32, 32, 512, 1024)))
    assert export._attention_is_small(_exported_attention_graph((197, 8, 2, 64)))
    monkeypatch.setattr(export, "ATTENTION_WHOLE_BELOW_FLOPS", 0)
    calls = [line.call for line in from_module_source(CAUSAL).lines]
    assert any("softmax" in c for c in calls)
    assert not any("scaled_dot_product_attention" in c for c in calls)

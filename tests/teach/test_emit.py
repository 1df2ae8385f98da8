"""The teacher's Python API: candidates, variants, unsupported operators, errors."""

from __future__ import annotations

import ast

import pytest

from drtriton.errors import UserError
from drtriton.teach import emit, unsupported_ops, variants
from drtriton.verify.static import check_source

HEADER = "import torch\nimport torch.nn.functional as F\n\n"


def task(body: str, inputs: str) -> str:
    return f"{HEADER}{body}\ndef get_inputs():\n    return [{inputs}]\n"


SOFTMAX_MLP = task(
    "def fused_operator(x0, x1, x2):\n"
    "    t0 = F.linear(x0, x1, x2)\n"
    "    t1 = F.gelu(t0)\n"
    "    t2 = torch.softmax(t1, -1)\n"
    "    return t2\n",
    "torch.randn(8, 32), torch.randn(16, 32), torch.randn(16)",
)


def test_candidate_is_python_with_kernels_and_wrapper() -> None:
    text = emit(SOFTMAX_MLP)
    tree = ast.parse(text)
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert names[-1] == "triton_fused_operator"
    # linear, its gelu epilogue and the softmax over its 16 features in one kernel (a row tail:
    # codegen fusion.h), and the autotuner's filter.
    assert [n for n in names if n.endswith("_kernel")] == ["k0_linear_kernel"]
    assert text.count("@triton.jit\n") == 1
    assert "tl.max(tl.where(mask_n, " in text
    # An 8-row linear takes the GPU's tensor-core split like a 16-row one (an FMA tl.dot pads
    # its tile to 16 just the same), or the interpreter's exact path, chosen at launch time:
    # bf16x6, the split of float32's 24 bits, since the linear feeds a softmax
    # (emit_contraction.cc ContractionPrecision).
    assert "input_precision=DOT_PRECISION" in text
    for rows in ("8", "16"):
        wider = emit(SOFTMAX_MLP.replace("torch.randn(8, 32)", f"torch.randn({rows}, 32)"))
        assert 'dot_precision = "bf16x6" if torch.get_float32_matmul_precision() ' in wider
        assert 'dot_precision = "ieee"\n' in wider
    assert 'if x0.device.type != "cuda" and dot_precision != "fp16":' in wider


def test_candidate_passes_the_static_rules() -> None:
    issues = check_source(emit(SOFTMAX_MLP), "triton_fused_operator")
    assert not issues, issues


def test_variants_are_distinct_and_valid() -> None:
    vs = variants(SOFTMAX_MLP, 5)
    assert 2 <= len(vs) <= 5
    assert len(set(vs)) == len(vs)
    for v in vs:
        ast.parse(v)
    assert vs[0] == emit(SOFTMAX_MLP)


def test_every_catalog_example_is_supported() -> None:
    from drtriton import _core

    for op in _core.ops():
        if op["kind"] != "compute" or any(p.get("boolean") for p in op["params"]):
            continue  # where: no program input is bool (tests/frontend/test_masks.py emits it)
        ok, text, _ = _core.example_program(op["name"])
        assert ok, text
        assert unsupported_ops(text) == [], op["name"]
        emit(text)


def test_unsupported_configuration_is_named() -> None:
    source = task(
        "def fused_operator(x0, x1, x2):\n"
        "    t0 = F.instance_norm(x0, x1, x2, None, None, False)\n"
        "    return t0\n",
        "torch.randn(2, 3, 4), torch.randn(3), torch.rand(3)",
    )
    assert unsupported_ops(source) == ["instance_norm(use_input_stats=False)"]
    with pytest.raises(UserError, match="instance_norm"):
        emit(source)
    assert variants(source, 3) == []


def test_bad_task_is_a_user_error() -> None:
    with pytest.raises(UserError):
        emit("def fused_operator(x0):\n    return torch.nope(x0)\n")

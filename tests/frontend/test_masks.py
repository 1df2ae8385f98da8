"""Boolean masks of real models: comparisons (bool results, as PyTorch's), torch.where and
masked_fill map into the catalog; the mapped program reproduces the module, dtypes included
(check_equivalence runs both), and the teacher's kernels for it pass the verifier in the
interpreter."""

from __future__ import annotations

import pytest
from test_frontend import assert_maps_and_reproduces, assert_stays_partly_pytorch, module_task

from drtriton import parse
from drtriton.frontend import from_module_source
from drtriton.teach import emit, unsupported_ops
from drtriton.verify import verify

CAUSAL = "self.register_buffer('bias', torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8))\n"

CASES = {
    # name: (init, forward, inputs, expected catalog operators)
    # minGPT's causal attention mask (KernelBench level 3, 43/44/50).
    "causal_masked_fill": (
        CAUSAL,
        "t = x.size(-1)\n"
        "att = (x @ x.transpose(-2, -1)) * 0.5\n"
        "att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float('-inf'))\n"
        "return torch.softmax(att, dim=-1)\n",
        "torch.randn(2, 3, 5, 5)",
        ["transpose", "matmul", "mul", "narrow", "narrow", "eq", "where", "softmax"],
    ),
    "where_of_comparison": (
        "",
        "return torch.where(x > 0.5, torch.exp(x), x * 2.0)\n",
        "torch.randn(3, 6)",
        ["gt", "exp", "mul", "where"],
    ),
    "where_with_number_branch": (
        "",
        "return torch.where(x <= x.mean(dim=1, keepdim=True), 0.0, x)\n",
        "torch.randn(4, 5)",
        ["mean", "le", "where"],
    ),
    # A bool result is returned as bool: the verifier compares dtypes exactly.
    "comparisons_returned": (
        "",
        "y = torch.tanh(x)\nreturn y >= 0.25, y < 0.0, y != y, y == 0.0\n",
        "torch.randn(3, 4)",
        ["tanh", "ge", "lt", "ne", "eq"],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mask_maps_and_reproduces_the_module(name):
    init, forward, inputs, ops = CASES[name]
    assert_maps_and_reproduces(module_task(init, forward, inputs), ops)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_mapped_mask_program_verifies_in_the_interpreter(name):
    init, forward, inputs, _ = CASES[name]
    text = from_module_source(module_task(init, forward, inputs)).program_text
    assert unsupported_ops(text) == []
    verdict = verify(text, emit(text), device="cpu", input_seed=0)
    assert verdict.correct, verdict.reason


def test_a_bool_result_keeps_its_dtype_in_the_program():
    init, forward, inputs, _ = CASES["comparisons_returned"]
    program = parse(from_module_source(module_task(init, forward, inputs)).program_text)
    assert {program.dtypes[o] for o in program.outputs} == {"bool"}


def test_logical_operators_on_masks_stay_pytorch_calls():
    """A comparison of bools, or arithmetic on one, has no catalog spelling (the catalog's
    operators take float32): it stays an opaque call and the program is still right."""
    code = module_task(
        "", "m = x > 0\nreturn torch.logical_not(m).float() * x\n", "torch.randn(3, 4)"
    )
    assert_stays_partly_pytorch(code)

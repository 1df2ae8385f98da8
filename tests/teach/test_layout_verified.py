"""Layout operators in teacher candidates, judged by the real verifier on the CPU
interpreter: each reads its input through index arithmetic inside the consuming kernel
(no copy), alone, as an epilogue's input, as a contraction's operand and under a reduction."""

from __future__ import annotations

import pytest
from teach_tasks import BMM_OUTPUT_VIEW, DEVICE, task

from drtriton.teach import emit, generic_unsupported_ops, unsupported_ops
from shared_verifier import verify

CASES = {
    "permute_relu": task(
        ["t0 = torch.permute(x0, [2, 0, 1])", "t1 = torch.relu(t0)"], "x0", "torch.randn(3, 4, 5)"
    ),
    # A reshape that is no squeeze: the flat index, then the input's coordinates.
    "reshape_softmax": task(
        ["t0 = torch.reshape(x0, [4, -1])", "t1 = torch.softmax(t0, -1)"],
        "x0",
        "torch.randn(2, 6, 3)",
    ),
    "unsqueeze_broadcast_add": task(
        ["t0 = torch.reshape(x1, [3, 1])", "t1 = torch.add(x0, t0)"],
        "x0, x1",
        "torch.randn(3, 5), torch.randn(3)",
    ),
    "flatten_into_linear": task(
        ["t0 = torch.reshape(x0, [2, 12])", "t1 = F.linear(t0, x1, x2)"],
        "x0, x1, x2",
        "torch.randn(2, 3, 4), torch.randn(5, 12), torch.randn(5)",
    ),
    "narrow_select_flip": task(
        [
            "t0 = torch.narrow(x0, 1, 1, 3)",
            "t1 = torch.flip(t0, [-1])",
            "t2 = torch.select(x0, 1, 0)",
            "t3 = torch.reshape(t2, [2, 1, 6])",
            "t4 = torch.mul(t1, t3)",
        ],
        "x0",
        "torch.randn(2, 5, 6)",
    ),
    # The bmm's output reshaped into a view of it (teach_tasks.BMM_OUTPUT_VIEW).
    "bmm_output_view": BMM_OUTPUT_VIEW,
    # cat([x0, x1], 1) as the frontend writes it.
    "cat_as_padded_sum": task(
        [
            "t0 = F.pad(x0, [0, 0, 0, 3])",
            "t1 = F.pad(x1, [0, 0, 2, 0])",
            "t2 = torch.add(t0, t1)",
            "t3 = torch.sum(t2, 1)",
        ],
        "x0, x1",
        "torch.randn(2, 2, 4), torch.randn(2, 3, 4)",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_layout_candidate_is_accepted(name: str) -> None:
    source = CASES[name]
    assert unsupported_ops(source) == []
    candidate = emit(source)
    verdict = verify(source, candidate, device=DEVICE, input_seed=0)
    assert verdict.correct, verdict.reason


def test_a_layout_operator_is_index_arithmetic_not_a_copy() -> None:
    candidate = emit(CASES["permute_relu"])
    assert candidate.count("@triton.jit") == 1
    wrapper = candidate.split("def triton_fused_operator")[1]
    assert ".permute(" not in wrapper and ".contiguous(" not in wrapper


def test_an_output_in_a_stored_order_is_a_view() -> None:
    wrapper = emit(CASES["bmm_output_view"]).split("def triton_fused_operator")[1]
    assert "t3 = t0.view((8, 6))" in wrapper
    assert wrapper.count("](") == wrapper.count("k0_bmm_kernel[")  # no other launch


def test_layout_operators_are_left_to_pytorch_in_generic_shape_mode() -> None:
    assert generic_unsupported_ops(CASES["permute_relu"]) == ["permute"]

"""Reductions over a product's columns taken before it (core/codegen/reassociate.h), run by the
verifier: the teacher sums (or averages) the other operand first and multiplies by one
column, and its candidate must match the program as written, in fp32 and fp16."""

from __future__ import annotations

import pytest
from teach_tasks import DEVICE, task

from drtriton.teach import emit
from drtriton.verify import Options
from shared_verifier import verify

CASES = {
    # KernelBench L2 14's program: (x @ W.T / c).sum(1, keepdim) * c'.
    "matmul_div_sum": task(
        [
            "t0 = torch.transpose(x1, 0, 1)",
            "t1 = torch.matmul(x0, t0)",
            "t2 = torch.div(t1, x2)",
            "t3 = torch.sum(t2, 1, True)",
            "t4 = torch.mul(t3, x3)",
        ],
        "x0, x1, x2, x3",
        "torch.randn(64, 512), torch.randn(384, 512), torch.randn(1), torch.randn(1)",
    ),
    # A linear with its bias, a shift by a per-row term, a mean over the columns.
    "linear_add_mean": task(
        ["t0 = F.linear(x0, x1, x2)", "t1 = torch.add(t0, x3)", "t2 = torch.mean(t1, -1)"],
        "x0, x1, x2, x3",
        "torch.randn(4, 32, 96), torch.randn(200, 96), torch.randn(200), torch.randn(32, 1)",
    ),
    # A batched product summed over its columns, keepdim False, then an activation.
    "bmm_sum_relu": task(
        [
            "t0 = torch.bmm(x0, x1)",
            "t1 = torch.neg(t0)",
            "t2 = torch.sum(t1, 2)",
            "t3 = torch.relu(t2)",
        ],
        "x0, x1",
        "torch.randn(3, 40, 64), torch.randn(3, 64, 72)",
    ),
}


# fp16 where the outputs stay in its range: matmul_div_sum divides by a drawn scalar, and its
# uniform and scaled_10 input sets overflow fp16 in eager PyTorch too (69,375 and 73,479).
PRECISIONS = [(name, "fp32") for name in CASES] + [
    ("linear_add_mean", "fp16"),
    ("bmm_sum_relu", "fp16"),
]


@pytest.mark.parametrize(("name", "precision"), PRECISIONS)
def test_the_reduced_product_matches_the_program(name: str, precision: str) -> None:
    candidate = emit(CASES[name])
    assert "N=1 " in candidate  # the product of the reduced operand: one column
    verdict = verify(CASES[name], candidate, options=Options(device=DEVICE, precision=precision))
    assert verdict.correct, verdict.reason


def test_the_generic_candidate_reduces_first_at_other_sizes() -> None:
    # generic_shapes: sizes come from the inputs, so the candidate written for 64 rows and 384
    # columns is judged on a task of 128 rows and 200 columns (the rewrite's new values take
    # the program's size names).
    candidate = emit(CASES["matmul_div_sum"], generic_shapes=True)
    assert "N=1" in candidate
    other = CASES["matmul_div_sum"].replace(
        "torch.randn(64, 512), torch.randn(384, 512)",
        "torch.randn(128, 512), torch.randn(200, 512)",
    )
    assert other != CASES["matmul_div_sum"]
    verdict = verify(other, candidate, options=Options(device=DEVICE))
    assert verdict.correct, verdict.reason


def test_the_transposed_weight_is_summed_down_its_columns() -> None:
    """L2 14's sum runs over the transpose's rows, which are the stored weight's columns: a
    tile of adjacent columns walks down them (rows.h ReducedDimStrided), where one program a
    column read lanes a row of the weight apart (0.339 ms against eager's 0.198, H100)."""
    candidate = emit(CASES["matmul_div_sum"])
    column_sum = candidate.split("def k0_sum_kernel")[1].split("@triton.jit")[0]
    assert "for r0 in tl.range(0, 384, BLOCK_R)" in column_sum
    launch = candidate.split("k0_sum_kernel[")[1].split(")\n")[0]
    assert "BLOCK_O=1," not in launch


# Sums and means over a convolution's spatial dims taken before it (reassociate_conv.cc): the
# input summed over each tap's range, a convolution one position wide along the dim.
CONV_CASES = {
    # KernelBench L2 44 in small: stride 2, padding 1, output padding 1; a scale; global means.
    "conv_transpose2d_global_mean": task(
        [
            "t0 = F.conv_transpose2d(x0, x1, x2, [2, 2], [1, 1], [1, 1], 1, [1, 1])",
            "t1 = torch.mul(t0, x3)",
            "t2 = torch.mean(t1, 3, True)",
            "t3 = torch.mean(t2, 2, True)",
            "t4 = torch.mean(t3, 3, True)",
            "t5 = torch.mean(t4, 2, True)",
        ],
        "x0, x1, x2, x3",
        "torch.randn(2, 6, 9, 7), torch.randn(6, 8, 3, 3), torch.randn(8), torch.randn(1)",
    ),
    # L2 13 in small: a mean over the depth alone, then a shift.
    "conv_transpose3d_depth_mean": task(
        [
            "t0 = F.conv_transpose3d(x0, x1, x2, [1, 1, 1], [1, 1, 1], [0, 0, 0], 1, [1, 1, 1])",
            "t1 = torch.mean(t0, 2, True)",
            "t2 = torch.add(t1, x3)",
        ],
        "x0, x1, x2, x3",
        "torch.randn(2, 4, 6, 5, 7), torch.randn(4, 6, 3, 3, 3), torch.randn(6), "
        "torch.randn(1, 6, 1, 1, 1)",
    ),
    # Groups, dilation and uneven padding; a sum (the bias counted per position), no keepdim.
    "conv2d_grouped_sum": task(
        [
            "t0 = F.conv2d(x0, x1, x2, [1, 1], [2, 1], [2, 1], 2)",
            "t1 = torch.mul(t0, x3)",
            "t2 = torch.sum(t1, 2)",
        ],
        "x0, x1, x2, x3",
        "torch.randn(3, 4, 10, 6), torch.randn(6, 2, 3, 2), torch.randn(6), torch.randn(6, 1, 1)",
    ),
    # A valid convolution's taps each miss part of the input; every spatial dim averaged.
    "conv3d_all_means": task(
        [
            "t0 = F.conv3d(x0, x1, x2, [1, 1, 1], [1, 0, 1], [1, 1, 1])",
            "t1 = torch.mean(t0, 4)",
            "t2 = torch.mean(t1, 3)",
            "t3 = torch.mean(t2, 2)",
        ],
        "x0, x1, x2",
        "torch.randn(2, 3, 5, 6, 7), torch.randn(4, 3, 3, 2, 3), torch.randn(4)",
    ),
    # Stride 3, dilation 2 and groups in a transposed convolution.
    "conv_transpose1d_strided_mean": task(
        ["t0 = F.conv_transpose1d(x0, x1, x2, [3], [4], [2], 2, [2])", "t1 = torch.mean(t0, 2)"],
        "x0, x1, x2",
        "torch.randn(2, 4, 5), torch.randn(4, 3, 5), torch.randn(6)",
    ),
}
# fp16 where the reference can judge: conv2d_grouped_sum's sum over 10 positions cancels, and on
# the scaled_10 inputs fp16 eager itself lands up to 4.9 tolerance units from float64 (the
# candidate, summing before it multiplies, up to 3.5), so either passes or fails by the draw.
CONV_PRECISIONS = [(name, "fp32") for name in CONV_CASES] + [
    ("conv_transpose2d_global_mean", "fp16"),
    ("conv_transpose3d_depth_mean", "fp16"),
]


@pytest.mark.parametrize(("name", "precision"), CONV_PRECISIONS)
def test_the_reduced_convolution_matches_the_program(name: str, precision: str) -> None:
    candidate = emit(CONV_CASES[name])
    assert "_taps" in candidate  # the input's range sums, not the convolution as written
    verdict = verify(
        CONV_CASES[name], candidate, options=Options(device=DEVICE, precision=precision)
    )
    assert verdict.correct, verdict.reason

"""A contraction whose epilogue ends in a row operator over its channels (codegen fusion.h,
Group::row_tail), run by the verifier: one kernel computes the convolution or GEMM and then
the softmax, log_softmax, logsumexp or reduction across its tile's columns.

In float32 the pointer kernel runs (and its fp16x3 range guard's tile where the GPU takes
it); in fp16 the interpreter runs the TMA kernels (shifted rows for convolutions, paired
phases for a transposed one, the TMA GEMM), judged also with the pointer kernel's launch
switched off so that the TMA kernel alone computes the output.
"""

from __future__ import annotations

import pytest
from teach_tasks import DEVICE, task

from drtriton.teach import emit
from drtriton.verify import Options
from shared_verifier import verify

POINTER_LAUNCH = "    if not k0_tma:\n"
ACROSS_COLUMNS = "axis=1)[:, None]"

FP32 = {
    # L2 91's shape: conv, softmax over the 24 channels, sigmoid.
    "conv_softmax_sigmoid": task(
        ["t0 = F.conv2d(x0, x1, x2)", "t1 = torch.softmax(t0, 1)", "t2 = torch.sigmoid(t1)"],
        "x0, x1, x2",
        "torch.randn(2, 8, 10, 10), torch.randn(24, 8, 3, 3), torch.randn(24)",
    ),
    # L2 25's: a minimum over the channels, kept, then tanh: one column stored.
    "conv_amin_tanh": task(
        [
            "t0 = F.conv2d(x0, x1)",
            "t1 = torch.relu(t0)",
            "t2 = torch.amin(t1, 1, True)",
            "t3 = torch.tanh(t2)",
        ],
        "x0, x1",
        "torch.randn(2, 8, 10, 10), torch.randn(16, 8, 3, 3)",
    ),
    # Batched matrices, log_softmax over the last dim's 48 columns.
    "bmm_log_softmax": task(
        ["t0 = torch.bmm(x0, x1)", "t1 = torch.log_softmax(t0, 2)"],
        "x0, x1",
        "torch.randn(3, 20, 16), torch.randn(3, 16, 48)",
    ),
    # A transposed convolution's phases, the maximum over channels dropped (no keepdim).
    "conv_transpose_amax": task(
        ["t0 = F.conv_transpose2d(x0, x1, None, 2, 1, 1)", "t1 = torch.amax(t0, 1)"],
        "x0, x1",
        "torch.randn(2, 8, 6, 6), torch.randn(8, 16, 3, 3)",
    ),
}

FP16_TMA = {
    # Shifted rows by TMA; 40 channels in a tile of 64.
    "conv_softmax": task(
        ["t0 = F.conv2d(x0, x1, x2)", "t1 = torch.softmax(t0, 1)"],
        "x0, x1, x2",
        "torch.randn(8, 16, 34, 34), torch.randn(40, 16, 3, 3), torch.randn(40)",
    ),
    # Paired phases (emit_contraction.cc PairsLastPhases): each row is two phases interleaved.
    "conv_transpose_amin_tanh": task(
        [
            "t0 = F.conv_transpose2d(x0, x1, None, 2, 1, 1)",
            "t1 = torch.amin(t0, 1, True)",
            "t2 = torch.tanh(t1)",
        ],
        "x0, x1",
        "torch.randn(8, 16, 16, 16), torch.randn(16, 24, 3, 3)",
    ),
    # The TMA GEMM, logsumexp over its 96 features.
    "linear_logsumexp": task(
        ["t0 = F.linear(x0, x1, x2)", "t1 = torch.logsumexp(t0, 1, True)"],
        "x0, x1, x2",
        "torch.randn(16384, 64), torch.randn(96, 64), torch.randn(96)",
    ),
}


def judged(source: str, candidate: str, precision: str) -> bool:
    opts = Options(device=DEVICE, precision=precision, input_seed=0, trials=2)
    return verify(source, candidate, options=opts).correct


@pytest.mark.parametrize("name", sorted(FP32))
def test_the_row_operator_runs_in_the_contractions_epilogue(name: str) -> None:
    source = FP32[name]
    candidate = emit(source)
    assert ACROSS_COLUMNS in candidate
    kernels = candidate[: candidate.index("def triton_fused_operator")]
    assert not any(f"_{row}_kernel" in kernels for row in ("softmax", "amin", "amax"))
    assert judged(source, candidate, "fp32")


@pytest.mark.parametrize("name", sorted(FP16_TMA))
def test_the_tma_kernels_compute_the_row_operator_alone(name: str) -> None:
    source = FP16_TMA[name]
    candidate = emit(source)
    assert ACROSS_COLUMNS in candidate and POINTER_LAUNCH in candidate
    assert judged(source, candidate.replace(POINTER_LAUNCH, "    if False:\n"), "fp16")


# Reductions over more features than one tile holds (fusion.h Group::row_tail_partials):
# each tile stores a partial statistic per 64 columns, a second kernel of the group combines
# a row's and computes the rest of the epilogue.
WIDE = {
    # L2 56's form: sigmoid, then the sum over the features.
    "linear_sigmoid_sum": task(
        ["t0 = F.linear(x0, x1, x2)", "t1 = torch.sigmoid(t0)", "t2 = torch.sum(t1, 1, True)"],
        "x0, x1, x2",
        "torch.randn(40, 32), torch.randn(200, 32), torch.randn(200)",
    ),
    # L2 80's: the maximum over the features, then an epilogue on the (rows, 1) result.
    "linear_amax_gelu": task(
        ["t0 = F.linear(x0, x1)", "t1 = torch.amax(t0, 1, True)", "t2 = F.gelu(t1)"],
        "x0, x1",
        "torch.randn(40, 32), torch.randn(320, 32)",
    ),
    # L2 64's: logsumexp over the features, then leaky_relu.
    "linear_logsumexp_leaky": task(
        [
            "t0 = F.linear(x0, x1, x2)",
            "t1 = torch.logsumexp(t0, 1, True)",
            "t2 = F.leaky_relu(t1, 0.01)",
        ],
        "x0, x1, x2",
        "torch.randn(40, 32), torch.randn(300, 32), torch.randn(300)",
    ),
    # Batched: relu (or the mean would move before the product, reassociate.h), a mean over
    # the last dim, dropped (no keepdim), then a minimum.
    "bmm_relu_mean_min": task(
        [
            "t0 = torch.bmm(x0, x1)",
            "t1 = torch.relu(t0)",
            "t2 = torch.mean(t1, 2)",
            "t3 = torch.amin(t2, 1)",
        ],
        "x0, x1",
        "torch.randn(3, 20, 16), torch.randn(3, 16, 260)",
    ),
    # Split-K (few tiles, a long K): the partial tiles summed, then the partial statistics.
    "bmm_split_k_relu_logsumexp": task(
        ["t0 = torch.bmm(x0, x1)", "t1 = torch.relu(t0)", "t2 = torch.logsumexp(t1, 2)"],
        "x0, x1",
        "torch.randn(2, 16, 40000), torch.randn(2, 40000, 160)",
    ),
}
TAIL_KERNEL = "_tail_kernel["


@pytest.mark.parametrize("name", sorted(WIDE))
def test_a_wide_reduction_is_combined_from_the_tiles_partials(name: str) -> None:
    source = WIDE[name]
    candidate = emit(source)
    assert TAIL_KERNEL in candidate and "rt_chunk" in candidate, candidate
    assert ("_part_kernel[(" in candidate) == ("split_k" in name)
    assert judged(source, candidate, "fp32")


def test_the_tma_gemm_alone_writes_the_partials() -> None:
    # fp16 in the interpreter runs the TMA GEMM; with the pointer launch off it alone writes.
    source = task(
        ["t0 = F.linear(x0, x1, x2)", "t1 = torch.logsumexp(t0, 1, True)"],
        "x0, x1, x2",
        "torch.randn(16384, 64), torch.randn(384, 64), torch.randn(384)",
    )
    candidate = emit(source)
    assert TAIL_KERNEL in candidate and POINTER_LAUNCH in candidate
    assert judged(source, candidate.replace(POINTER_LAUNCH, "    if False:\n"), "fp16")


# A group norm of a GEMM's (M, C) output whose groups every tile holds whole (fusion.h
# GroupsFitTiles): each tile's columns viewed as (rows, groups, group) for the statistics.
GROUP_NORM = {
    # L2 37's form: a hand-written swish (x read twice: its paths join, fusion.cc
    # JoinOfReaders), a bias, then the norm over groups of 16 of 128 features.
    "linear_swish_bias_group_norm": task(
        [
            "t0 = F.linear(x0, x1, x2)",
            "t1 = torch.sigmoid(t0)",
            "t2 = torch.mul(t1, t0)",
            "t3 = torch.add(t2, x3)",
            "t4 = F.group_norm(t3, 8, x4, x5)",
        ],
        "x0, x1, x2, x3, x4, x5",
        "torch.randn(40, 32), torch.randn(128, 32), torch.randn(128), torch.randn(128), "
        "torch.randn(128), torch.randn(128)",
    ),
    # L2 88's: the norm first (groups of 32, no affine), then swish, a scale, swish again, over
    # 320 features: the last tile's columns past them are whole groups the store drops.
    "linear_group_norm_swish_twice": task(
        [
            "t0 = F.linear(x0, x1)",
            "t1 = F.group_norm(t0, 10)",
            "t2 = torch.sigmoid(t1)",
            "t3 = torch.mul(t1, t2)",
            "t4 = torch.mul(t3, x2)",
            "t5 = torch.sigmoid(t4)",
            "t6 = torch.mul(t4, t5)",
        ],
        "x0, x1, x2",
        "torch.randn(40, 32), torch.randn(320, 32), torch.randn(320)",
    ),
}
GROUP_STATS = ", axis=2, keep_dims=True)"


@pytest.mark.parametrize("name", sorted(GROUP_NORM))
def test_the_group_norm_runs_in_the_gemms_epilogue(name: str) -> None:
    source = GROUP_NORM[name]
    candidate = emit(source)
    assert GROUP_STATS in candidate
    # One kernel (and the fp16x3 split's copies): no stored intermediate, no rows kernel.
    assert candidate.count("torch.empty((40, ") == 1
    assert "_group_norm_kernel" not in candidate
    assert judged(source, candidate, "fp32")
    assert judged(source, candidate, "fp16")


def test_the_tma_gemm_alone_computes_the_group_norm() -> None:
    # fp16 in the interpreter runs the TMA GEMM (128 x 256 tiles, 64 channels a group: the
    # epilogue halved, two groups a half); with the pointer launch off it alone writes.
    source = task(
        ["t0 = F.linear(x0, x1)", "t1 = F.group_norm(t0, 4)", "t2 = torch.tanh(t1)"],
        "x0, x1",
        "torch.randn(16384, 64), torch.randn(256, 64)",
    )
    candidate = emit(source)
    assert GROUP_STATS in candidate and POINTER_LAUNCH in candidate
    assert "acc_lo, acc_hi = tl.split(" in candidate
    assert judged(source, candidate.replace(POINTER_LAUNCH, "    if False:\n"), "fp16")

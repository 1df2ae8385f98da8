"""A training batch norm of a contraction's output takes its statistics from the
contraction's tiles (codegen fusion.h, Group::column_stats): each tile stores its columns'
count, mean and squared deviations, a small kernel combines them per channel, and the norm's
kernel reads the stored output once, to write it normalized; judged by the verifier.

In float32 the pointer kernel writes them (and its fp16x3 range guard's tile where the GPU
takes it); in fp16 the interpreter runs the TMA kernels (shifted rows for a convolution, the
TMA GEMM), the pointer kernel's launch switched off so that the TMA kernel alone writes them.
"""

from __future__ import annotations

import pytest
from teach_tasks import DEVICE, task

from drtriton.teach import emit, variants
from drtriton.verify import Options
from shared_verifier import verify

POINTER_LAUNCH = "    if not k0_tma:\n"
BN = "torch.batch_norm({x}, x3, x4, None, None, True, 0.1, 1e-05, True)"


def conv_bn(channels: int) -> str:
    # 5 x 64 x 64 = 20,480 positions of 64 channels: rows and values enough
    # (fusion.h kColumnStatsMinRows, kColumnStatsMinElements).
    return task(
        ["t0 = F.conv2d(x0, x1, x2)", "t1 = torch.relu(t0)", "t2 = " + BN.format(x="t1")],
        "x0, x1, x2, x3, x4",
        f"torch.randn(5, {channels}, 66, 66), torch.randn(64, {channels}, 3, 3), "
        "torch.randn(64), torch.randn(64), torch.randn(64)",
    )


def linear_bn(features: int) -> str:
    return task(
        ["t0 = F.linear(x0, x1, x2)", "t1 = " + BN.format(x="t0")],
        "x0, x1, x2, x3, x4",
        f"torch.randn(20000, {features}), torch.randn(64, {features}), torch.randn(64), "
        "torch.randn(64), torch.randn(64)",
    )


def judged(source: str, candidate: str, precision: str) -> bool:
    opts = Options(device=DEVICE, precision=precision, input_seed=0, trials=2)
    return verify(source, candidate, options=opts).correct


def assert_statistics_from_columns(candidate: str) -> None:
    kernels = candidate[: candidate.index("def triton_fused_operator")]
    assert "batch_norm_train_colstats_kernel" in kernels
    assert "batch_norm_train_stats_kernel" not in kernels  # no second read of the output
    assert "t1_colstats = torch.zeros((" in candidate or "t0_colstats = torch.zeros((" in candidate


@pytest.mark.parametrize("source", [conv_bn(4), linear_bn(8)], ids=["conv", "linear"])
def test_the_pointer_kernel_writes_the_norms_statistics(source: str) -> None:
    candidate = emit(source, column_stats=True)
    assert_statistics_from_columns(candidate)
    assert judged(source, candidate, "fp32")


@pytest.mark.parametrize("source", [conv_bn(16), linear_bn(64)], ids=["shifted_rows", "gemm"])
def test_the_tma_kernels_write_the_norms_statistics_alone(source: str) -> None:
    candidate = emit(source, column_stats=True)
    assert_statistics_from_columns(candidate)
    assert POINTER_LAUNCH in candidate
    assert judged(source, candidate.replace(POINTER_LAUNCH, "    if False:\n"), "fp16")


def test_a_norm_over_few_rows_keeps_its_own_statistics() -> None:
    # 2 x 8 x 8 = 128 positions a channel: the norm reads its row once anyway.
    source = task(
        ["t0 = F.conv2d(x0, x1, x2)", "t1 = " + BN.format(x="t0")],
        "x0, x1, x2, x3, x4",
        "torch.randn(2, 4, 10, 10), torch.randn(8, 4, 3, 3), torch.randn(8), torch.randn(8), "
        "torch.randn(8)",
    )
    candidate = emit(source, column_stats=True)
    assert "colstats" not in candidate
    assert judged(source, candidate, "fp32")


def test_only_on_request_and_among_the_variants() -> None:
    # Not by default (core/codegen/fusion.h: they cost the contraction's kernel what they
    # save); the variants try them second, and the default candidate verifies as well.
    source = conv_bn(4)
    candidate = emit(source)
    assert "colstats" not in candidate
    found = variants(source, 2)
    assert found[0] == candidate
    assert found[1] == emit(source, column_stats=True)
    assert judged(source, candidate, "fp32")

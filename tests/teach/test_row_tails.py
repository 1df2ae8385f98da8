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
from drtriton.verify import Options, verify

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

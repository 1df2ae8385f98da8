"""The teacher's kernels in the half precision modes (issue 21), judged by the verifier on the CPU.

One candidate serves every mode (core/codegen/wrapper.cc): floating outputs and intermediates
are allocated in the inputs' dtype (an intermediate whose rounding reaches a norm, softmax or
argmax stays float32: codegen/amplify.h), loads convert to float32, sums and norms run in
float32, stores convert to the stored dtype, and a contraction's tl.dot takes fp16 or bf16 operands on the tensor cores
where the inputs are half. The verifier casts inputs as KernelBench does and compares against
the reference run in that dtype (1e-2), output dtypes included, so a kernel that still
allocated float32 outputs would be rejected here ("dtype torch.float32, expected ...").

What the CPU interpreter cannot run: a bf16 tl.dot (missing there), so on the CPU the wrapper
multiplies bf16 inputs through "ieee" on their float32 conversions, and it keeps bf16
intermediates float32 (the interpreter truncates float32 stored to bf16, `inter_dtype`); the bf16 tensor-core branch
runs only on a GPU (DRTRITON_TEST_DEVICE=cuda runs these cases there). fp16 tl.dot runs in the
interpreter, so the fp16 cases exercise the kernels' own half branch.
"""

from __future__ import annotations

import pytest
from teach_tasks import BMM_OUTPUT_VIEW, DEVICE, task

from drtriton.teach import emit
from drtriton.verify import Options
from shared_verifier import verify

CASES = {
    # tl.dot with a fused epilogue, then a row kernel (softmax) reading the half intermediate.
    "linear_gelu_softmax": task(
        ["t0 = F.linear(x0, x1, x2)", "t1 = F.gelu(t0)", "t2 = torch.softmax(t1, 1)"],
        "x0, x1, x2",
        "torch.randn(32, 64), torch.randn(48, 64), torch.randn(48)",
    ),
    # Channels-last copies of half inputs (4 channels), an implicit-GEMM conv, group norm.
    "conv2d_group_norm": task(
        ["t0 = F.conv2d(x0, x1, x2, 1, 1)", "t1 = F.group_norm(t0, 4)"],
        "x0, x1, x2",
        "torch.randn(2, 4, 8, 8), torch.randn(16, 4, 3, 3), torch.randn(16)",
    ),
    # The narrow path (no tl.dot): a depthwise window sum, then a scan.
    "depthwise_cumsum": task(
        ["t0 = F.conv2d(x0, x1, None, 1, 0, 1, 3)", "t1 = torch.cumsum(t0, -1)"],
        "x0, x1",
        "torch.randn(2, 3, 9, 9), torch.randn(3, 1, 3, 3)",
    ),
    # Two contractions: the second reads the first's output (relu'd) rounded to the inputs'
    # dtype, as its own tl.dot would round it.
    "linear_relu_linear": task(
        ["t0 = F.linear(x0, x1)", "t1 = torch.relu(t0)", "t2 = F.linear(t1, x2)"],
        "x0, x1, x2",
        "torch.randn(32, 64), torch.randn(48, 64), torch.randn(40, 48)",
    ),
    # A 3 x 3 pool's kernel reads the convolution's output in the inputs' dtype.
    "conv2d_pool_relu": task(
        ["t0 = F.conv2d(x0, x1)", "t1 = F.max_pool2d(t0, 3)", "t2 = torch.relu(t1)"],
        "x0, x1",
        "torch.randn(2, 4, 14, 14), torch.randn(16, 4, 3, 3)",
    ),
    # Pooling, a mean and an argmax: the int64 result keeps its dtype.
    # The bmm's output reshaped into a view of it (teach_tasks.BMM_OUTPUT_VIEW).
    "bmm_output_view": BMM_OUTPUT_VIEW,
    "pool_mean_argmax": task(
        ["t0 = F.max_pool2d(x0, 2)", "t1 = torch.mean(t0, 1)", "t2 = torch.argmax(t1, -1)"],
        "x0",
        "torch.randn(2, 6, 8, 8)",
    ),
}


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_one_candidate_is_accepted_in_the_half_modes(name: str, precision: str) -> None:
    source = CASES[name]
    opts = Options(device=DEVICE, precision=precision, input_seed=0)
    verdict = verify(source, emit(source), options=opts)
    assert verdict.correct, f"{verdict.status}: {verdict.reason}"
    assert verdict.precision == precision


def test_half_inputs_choose_their_own_tensor_core_dot() -> None:
    text = emit(CASES["linear_gelu_softmax"])
    assert "float_dtype = x0.dtype" in text
    # The output in the inputs' dtype; no intermediate: the softmax over the linear's 48
    # features is its epilogue's (a row tail: codegen fusion.h).
    assert "t2 = torch.empty((32, 48), device=x0.device, dtype=float_dtype)" in text
    assert "t1 = torch.empty(" not in text
    assert "tl.dot(a.to(tl.bfloat16), b.to(tl.bfloat16))" in text
    assert "tl.dot(a.to(tl.float16), b.to(tl.float16))" in text
    # Each stored floating value is read as float32: the sums never run in half.
    assert text.count(".to(tl.float32)") >= 3


def test_intermediates_are_half_unless_a_norm_or_argmax_reads_them() -> None:
    # `inter_dtype` is float_dtype, but float32 for bf16 off the GPU.
    inter = "device=x0.device, dtype=inter_dtype)"
    assert f"t1 = torch.empty((32, 48), {inter}" in emit(CASES["linear_relu_linear"])
    assert f"t0 = torch.empty((2, 16, 12, 12), {inter}" in emit(CASES["conv2d_pool_relu"])
    # The group norm and the argmax read float32 (the mean ends the argmax's path: t0 is half).
    assert "t0 = torch.empty((2, 16, 8, 8), device=x0.device, dtype=torch.float32)" in emit(
        CASES["conv2d_group_norm"]
    )
    pooled = emit(CASES["pool_mean_argmax"])
    assert f"t0 = torch.empty((2, 6, 4, 4), {inter}" in pooled
    assert "t1 = torch.empty((2, 4, 4), device=x0.device, dtype=torch.float32)" in pooled

"""Teacher candidates judged by the real verifier on the CPU interpreter: one program per
group kind and fusion pattern (about 3-5 s each), plus strided and broadcast inputs.

DRTRITON_TEST_DEVICE=cuda runs the same cases compiled on a GPU (the NaN cases matter there:
the interpreter propagates NaN through tl.maximum whatever the kernel asks for)."""

from __future__ import annotations

import pytest
from teach_tasks import DEVICE, task

from drtriton.teach import emit, variants
from shared_verifier import verify

CASES = {
    "elementwise_broadcast": task(
        ["t0 = torch.mul(x0, x1)", "t1 = F.hardswish(t0)", "t2 = F.gelu(t1, approximate='tanh')"],
        "x0, x1",
        "torch.randn(3, 1, 5), torch.randn(4, 1)",
    ),
    "transpose_mish_selu": task(
        ["t0 = torch.transpose(x0, 0, 2)", "t1 = F.mish(t0)", "t2 = torch.selu(t1)"],
        "x0",
        "torch.randn(3, 4, 5)",
    ),
    "argmin_keepdim": task(["t0 = torch.argmin(x0, 1, True)"], "x0", "torch.randn(4, 7, 3)"),
    # Attention's scaled q and k: the one-element scale loads as a scalar inside the K loop.
    "scaled_operands_matmul": task(
        ["t0 = torch.mul(x0, x2)", "t1 = torch.mul(x1, x2)", "t2 = torch.matmul(t0, t1)"],
        "x0, x1, x2",
        "torch.randn(96, 80), torch.randn(80, 72), torch.randn(1)",
    ),
    "logsumexp_epilogue": task(
        ["t0 = torch.logsumexp(x0, 0)", "t1 = F.softplus(t0, 2.0, 20.0)"],
        "x0",
        "torch.randn(6, 5)",
    ),
    # The verifier's scaled-by-10 input set crosses float32's range within ~70 elements.
    "cumprod_long_row": task(["t0 = torch.cumprod(x0, -1)"], "x0", "torch.rand(2, 600)"),
    # Log-probabilities of ~1e2 overflow a float32 product within ~19 rows, and each row's
    # maximum is exactly 0: multiplied in float32 that is inf * 0 = NaN, while torch's CPU
    # cumprod (float64 inside) gives 0. The kernel multiplies as torch does on the device
    # (H200 paper-preset program 54 was rejected with float64 on the GPU, and float32 on the
    # CPU before that); DRTRITON_TEST_DEVICE=cuda runs the GPU's side.
    "cumprod_after_log_softmax": task(
        ["t0 = torch.matmul(x0, x1)", "t1 = torch.log_softmax(t0, 1)", "t2 = torch.cumprod(t1, 0)"],
        "x0, x1",
        "torch.randn(40, 4096), torch.randn(4096, 64)",
    ),
    "group_norm": task(
        ["t0 = F.group_norm(x0, 2, x1, x2)"],
        "x0, x1, x2",
        "torch.randn(2, 4, 3, 3), torch.randn(4), torch.randn(4)",
    ),
    # The task copies into its running stats; the interpreter's own argument copies must not
    # make the candidate look like it computes through torch.
    "instance_norm_running_stats": task(
        ["t0 = F.instance_norm(x0, x1, x2, x3, x4)"],
        "x0, x1, x2, x3, x4",
        "torch.randn(2, 3, 4, 4), torch.randn(3), torch.rand(3), torch.randn(3), torch.randn(3)",
    ),
    "batch_norm_into_layer_norm": task(
        [
            "t0 = F.batch_norm(x0, x1, x2, None, None, False, 0.1, 1e-05)",
            "t1 = F.layer_norm(t0, [3, 4])",
        ],
        "x0, x1, x2",
        "torch.randn(2, 5, 3, 4), torch.randn(5), torch.rand(5)",
    ),
    "bmm_relu": task(
        ["t0 = torch.bmm(x0, x1)", "t1 = torch.relu(t0)"],
        "x0, x1",
        "torch.randn(3, 20, 17), torch.randn(3, 17, 9)",
    ),
    "conv_grouped_strided": task(
        ["t0 = F.conv2d(x0, x1, x2, 2, 1, 1, 2)", "t1 = torch.tanh(t0)"],
        "x0, x1, x2",
        "torch.randn(2, 4, 7, 7), torch.randn(6, 2, 3, 3), torch.randn(6)",
    ),
    "conv_transpose_dilated": task(
        ["t0 = F.conv_transpose1d(x0, x1, None, 2, 1, 1, 1, 2)"],
        "x0, x1",
        "torch.randn(2, 3, 6), torch.randn(3, 4, 3)",
    ),
    "max_pool_ceil": task(
        ["t0 = F.max_pool2d(x0, 3, 2, 1, 1, True)"],
        "x0",
        "torch.randn(2, 3, 8, 7)",
    ),
    # One-element groups: the float32 reference is rounding noise times 1 / sqrt(eps), which
    # the teacher's kernel cannot reproduce; judged against the float64 envelope (compare.py).
    "group_norm_near_constant_groups": task(
        ["t0 = torch.mean(x0, -1)", "t1 = F.group_norm(t0, 1, x1)"],
        "x0, x1",
        "torch.randn(7, 1, 1, 1), torch.randn(1)",
    ),
    # NaN inside the program (log of the negative inputs; the verifier's redraws keep the
    # sign): torch's amax, max pool, clamp and relu propagate it, and so must the kernels.
    "amax_of_nan": task(
        ["t0 = torch.log(x0)", "t1 = torch.amax(t0, -1)"], "x0", "torch.randn(6, 9)"
    ),
    "max_pool_relu_of_nan": task(
        ["t0 = torch.log(x0)", "t1 = F.max_pool2d(t0, 2)", "t2 = torch.relu(t1)"],
        "x0",
        "torch.randn(2, 3, 6, 6)",
    ),
    "avg_pool_no_pad_count": task(
        ["t0 = F.avg_pool2d(x0, 3, 2, 1, True, False)"],
        "x0",
        "torch.randn(2, 3, 8, 7)",
    ),
    # One-element inputs load as scalars (tl.load(ptr)), broadcast by the arithmetic.
    "scalar_times_matrix": task(
        ["t0 = torch.mul(x0, x1)"], "x0, x1", "torch.randn(6, 5), torch.randn(1)"
    ),
    "one_element_output": task(
        ["t0 = torch.add(x0, x1)", "t1 = torch.relu(t0)"],
        "x0, x1",
        "torch.randn(1, 1), torch.randn(1)",
    ),
    # Split-K (one tile, 513 BLOCK_K steps of 64: 4 slices, heuristics.cc ChooseSplitK): the partial
    # kernel's workspace, the in-order sum of the slices, then bias and epilogue.  More split
    # and narrow cases, run once each, are in test_interpreter_dot.py.
    "linear_split_k": task(
        ["t0 = F.linear(x0, x1, x2)", "t1 = torch.tanh(t0)"],
        "x0, x1, x2",
        "torch.randn(16, 32832), torch.randn(24, 32832), torch.randn(24)",
    ),
    # conv -> batch_norm -> relu as one kernel, and two such epilogues meeting at a residual
    # add (the shortcut's stored first, the main conv's epilogue reading it).
    "residual_block": task(
        [
            "t0 = F.conv2d(x0, x1, None, 1, 1)",
            "t1 = F.batch_norm(t0, x2, x3, x4, x5)",
            "t2 = torch.relu(t1)",
            "t3 = F.conv2d(t2, x6, None, 1, 1)",
            "t4 = F.batch_norm(t3, x2, x3, x4, x5)",
            "t5 = F.conv2d(x0, x7)",
            "t6 = F.batch_norm(t5, x2, x3, x4, x5)",
            "t7 = torch.add(t4, t6)",
            "t8 = torch.relu(t7)",
        ],
        "x0, x1, x2, x3, x4, x5, x6, x7",
        "torch.randn(2, 4, 10, 10), torch.randn(8, 4, 3, 3), torch.randn(8), torch.rand(8), "
        "torch.randn(8), torch.randn(8), torch.randn(8, 8, 3, 3), torch.randn(8, 4, 1, 1)",
    ),
    # An input of unaligned rows (8003) read through a transpose: copied into rows of 8016
    # first, which the transpose reads by the same coordinates.
    "transposed_unaligned_matmul": task(
        ["t0 = torch.transpose(x0, -1, -2)", "t1 = torch.matmul(t0, x1)"],
        "x0, x1",
        "torch.randn(134, 8003), torch.randn(3, 134, 25)",
    ),
    # The narrow path (M at most 4: a product and tl.sum, no tl.dot).
    "vector_times_matrix": task(
        ["t0 = torch.matmul(x0, x1)"], "x0, x1", "torch.randn(2, 300), torch.randn(300, 40)"
    ),
    "linear_scaled_by_a_scalar": task(
        ["t0 = F.linear(x0, x1, x2)", "t1 = torch.mul(t0, x3)"],
        "x0, x1, x2, x3",
        "torch.randn(8, 16), torch.randn(4, 16), torch.randn(4), torch.randn(1, 1)",
    ),
}


# Input seeds pinned per case (the verifier draws fresh ones by default): these tests are about
# emission, and a pinned draw makes a failure reproducible.
PINNED_SEED = 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_teacher_candidate_is_accepted(name: str) -> None:
    source = CASES[name]
    verdict = verify(source, emit(source), device=DEVICE, input_seed=PINNED_SEED)
    assert verdict.correct, f"{verdict.status}: {verdict.reason}"


def test_split_and_narrow_cases_take_those_paths() -> None:
    # The cases above test what their names say only while the heuristics send them there.
    assert "_part_kernel[" in emit(CASES["linear_split_k"])
    assert "k0_x0_rows_kernel[" in emit(CASES["transposed_unaligned_matmul"])
    narrow = emit(CASES["vector_times_matrix"])
    assert "tl.dot" not in narrow and "+= a[:, :, None] * b[None, :, :]" in narrow


def test_unfused_variant_is_accepted_too() -> None:
    source = CASES["bmm_relu"]
    unfused = emit(source, fuse_epilogue=False)
    assert unfused.count("@triton.jit\n") == 2
    verdict = verify(source, unfused, device=DEVICE)
    assert verdict.correct, f"{verdict.status}: {verdict.reason}"


def test_block_size_variant_is_accepted() -> None:
    source = CASES["group_norm"]
    candidates = variants(source, 3)
    verdict = verify(source, candidates[-1], device=DEVICE)
    assert verdict.correct, f"{verdict.status}: {verdict.reason}"

"""The half-precision contractions whose operands arrive by TMA (issue 21), run by the verifier.

heuristics.h ChooseTmaContraction and emit_contraction.cc TmaPlanOf: a matmul's, bmm's or
linear's stored operands are read through host tensor descriptors by a kernel of their own,
which the wrapper launches where both are half, contiguous and 16-byte aligned, and the
pointer kernel elsewhere.  Convolutions (contraction_spec.h, ShiftedRows): boxes of shifted
rows of the input's channels-last copy (with zeros around where the convolution pads, folded
by the strides where it has any), one per kernel tap. Triton's interpreter runs host
descriptors and fp16 tl.dot, so the fp16 cases run the TMA kernel itself on the CPU; bf16 runs
there through the pointer kernel (no bf16 tl.dot in the interpreter), and float32 always
does.

Each case is judged twice by the verifier: the emitted candidate (fp16 and fp32), and the
same candidate with the pointer kernel's launch switched off, which must still be right in
fp16 (the TMA kernel computed the output) and wrong in fp32 (the guard chose the pointer
kernel there, so nothing else writes the output).  FP16_ONLY cases skip the fp32 runs.
"""

from __future__ import annotations

import random
import re

import pytest
from teach_tasks import DEVICE, task

from drtriton.teach import emit
from drtriton.verify import Options
from shared_verifier import verify

CASES = {
    # The weight (N, K) read transposed from its descriptor; bias and relu in the epilogue.
    "linear_relu": task(
        ["t0 = F.linear(x0, x1, x2)", "t1 = torch.relu(t0)"],
        "x0, x1, x2",
        "torch.randn(2048, 64), torch.randn(1024, 64), torch.randn(1024)",
    ),
    # 256 tiles of 128 x 128 (N under 256) walked by 128 persistent programs, two rounds each.
    "linear_persistent": task(
        ["t0 = F.linear(x0, x1)", "t1 = torch.sigmoid(t0)"],
        "x0, x1",
        "torch.randn(32768, 64), torch.randn(128, 64)",
    ),
    # 96 tiles of 128 x 256 (one program each): the epilogue (bias, gelu) runs on one half of
    # the columns, then the other (WriteHalvedEpilogue).  Two M tiles: one alone would stream
    # its weight in 128 x 128 tiles (heuristics.cc ChooseTmaContraction).
    "linear_halved_epilogue": task(
        ["t0 = F.linear(x0, x1, x2)", "t1 = F.gelu(t0)"],
        "x0, x1, x2",
        "torch.randn(256, 64), torch.randn(12288, 64), torch.randn(12288)",
    ),
    # One M tile streaming its weight: 68 tiles of 128 x 128 in K steps of 128, the last
    # step past K = 192 read as zeros by the descriptors.
    "linear_streaming": task(
        ["t0 = F.linear(x0, x1)", "t1 = torch.tanh(t0)"],
        "x0, x1",
        "torch.randn(128, 192), torch.randn(8704, 192)",
    ),
    # 3-D descriptors: one batch entry's tiles.
    "bmm_tanh": task(
        ["t0 = torch.bmm(x0, x1)", "t1 = torch.tanh(t0)"],
        "x0, x1",
        "torch.randn(4, 1024, 64), torch.randn(4, 64, 512)",
    ),
    # A 3-D input as its 2-D view (M = 4 x 512); K of 72 leaves a partial BLOCK_K step, which
    # the descriptor fills with zeros.
    "linear_3d_input": task(
        ["t0 = F.linear(x0, x1)"],
        "x0, x1",
        "torch.randn(4, 512, 72), torch.randn(1024, 72)",
    ),
    # Shifted rows: 8 samples of 34 x 34 (9 tiles of 128 positions each), bias and relu.
    "conv2d_relu": task(
        ["t0 = F.conv2d(x0, x1, x2)", "t1 = torch.relu(t0)"],
        "x0, x1, x2",
        "torch.randn(8, 16, 34, 34), torch.randn(32, 16, 3, 3), torch.randn(32)",
    ),
    # 24 channels in BLOCK_K 16 (the second box runs past the copy's channels: zeros), 24
    # output channels in a tile of 32, dilation 2, padding 3 (a copy with zeros around).
    "conv1d_dilated": task(
        ["t0 = F.conv1d(x0, x1, None, 1, 3, 2)", "t1 = torch.tanh(t0)"],
        "x0, x1",
        "torch.randn(16, 24, 600), torch.randn(24, 24, 5)",
    ),
    # Padding 1 in 2-D: the copy is 34 x 34 a sample, its border zeros.
    "conv2d_padded": task(
        ["t0 = F.conv2d(x0, x1, x2, 1, 1)"],
        "x0, x1, x2",
        "torch.randn(8, 16, 32, 32), torch.randn(16, 16, 3, 3), torch.randn(16)",
    ),
    # Three spatial dims: a tap's offset is kd * 144 + kh * 12 + kw.
    "conv3d": task(
        ["t0 = F.conv3d(x0, x1)"],
        "x0, x1",
        "torch.randn(8, 16, 10, 12, 12), torch.randn(16, 16, 3, 3, 3)",
    ),
    # Stride 2 and padding 1 over 65 x 65: the copy is padded to 68 x 68 (whole residues) and
    # folded into four 34 x 34 grids; 33 x 33 outputs.
    "conv2d_strided": task(
        ["t0 = F.conv2d(x0, x1, x2, 2, 1)", "t1 = torch.relu(t0)"],
        "x0, x1, x2",
        "torch.randn(8, 16, 65, 65), torch.randn(16, 16, 3, 3), torch.randn(16)",
    ),
    # Stride 3 with dilation 2: taps 0, 2, 4, 6, 8 read residues 0, 2, 1, 0, 2 at positions
    # 0, 0, 1, 2, 2 past the output's.
    "conv1d_strided_dilated": task(
        ["t0 = F.conv1d(x0, x1, None, 3, 0, 2)"],
        "x0, x1",
        "torch.randn(16, 16, 2000), torch.randn(24, 16, 5)",
    ),
    # Strides (1, 2, 2): folded along the last two dims only.
    "conv3d_strided": task(
        ["t0 = F.conv3d(x0, x1, None, (1, 2, 2), 1)"],
        "x0, x1",
        "torch.randn(5, 16, 6, 34, 34), torch.randn(16, 16, 3, 3, 3)",
    ),
    # Transposed, stride 2: four phases (launches), 1 or 2 taps a dim each; a copy padded by
    # one above (the odd phase's last output reads past the input).
    "conv_transpose2d": task(
        ["t0 = F.conv_transpose2d(x0, x1, x2, 2, 1, 1)", "t1 = torch.relu(t0)"],
        "x0, x1, x2",
        "torch.randn(8, 16, 16, 16), torch.randn(16, 16, 3, 3), torch.randn(16)",
    ),
    # Stride 2 and dilation 2: the odd phases reach no input (bias alone, an empty K loop).
    "conv_transpose2d_dilated": task(
        ["t0 = F.conv_transpose2d(x0, x1, x2, 2, 0, 0, 1, 2)"],
        "x0, x1, x2",
        "torch.randn(8, 16, 16, 16), torch.randn(16, 24, 3, 3), torch.randn(24)",
    ),
    # Stride 2 along the last dim: its two phases in one program (emit_contraction.cc,
    # PairsLastPhases), interleaved so an output row is written whole; an odd output length
    # (1,401) gives the even phase one position more than the odd one.
    "conv_transpose1d_paired_odd": task(
        ["t0 = F.conv_transpose1d(x0, x1, None, 2, 1)"],
        "x0, x1",
        "torch.randn(20, 16, 701), torch.randn(16, 24, 3)",
    ),
    # Pairs along W in each of the four (D, H) phases' launches, a bias and relu after.
    "conv_transpose3d_paired": task(
        ["t0 = F.conv_transpose3d(x0, x1, x2, 2, 1, 1)", "t1 = torch.relu(t0)"],
        "x0, x1, x2",
        "torch.randn(4, 16, 6, 8, 8), torch.randn(16, 16, 3, 3, 3), torch.randn(16)",
    ),
    # Stride 1 along the last dim: no pairs, one launch per phase of H.
    "conv_transpose2d_stride_2_1": task(
        ["t0 = F.conv_transpose2d(x0, x1, None, (2, 1), 1)"],
        "x0, x1",
        "torch.randn(16, 16, 32, 24), torch.randn(16, 16, 3, 3)",
    ),
    # Transposed, stride 1: one phase over a copy padded by k - 1 on both sides.
    "conv_transpose1d": task(
        ["t0 = F.conv_transpose1d(x0, x1)"],
        "x0, x1",
        "torch.randn(20, 16, 500), torch.randn(16, 24, 5)",
    ),
}
POINTER_LAUNCH = "    if not k0_tma:\n"
# Cases whose float32 runs (the pointer kernel; its guard) linear_relu and conv2d_relu already
# show: the interpreter's float32 products are its slowest.
FP16_ONLY = {
    "linear_halved_epilogue",
    "linear_streaming",
    "conv1d_dilated",
    "conv1d_strided_dilated",
    "conv3d_strided",
    "conv2d_padded",
    "conv3d",
    "conv_transpose2d_dilated",
    "conv_transpose1d",
    "conv_transpose1d_paired_odd",
    "conv_transpose3d_paired",
    "conv_transpose2d_stride_2_1",
}
# Transposed convolutions of stride 2 along the last dim (PairsLastPhases); the dilated one's
# odd phases have no taps (an empty loop for one half of each pair).
PAIRED = {
    "conv_transpose2d",
    "conv_transpose2d_dilated",
    "conv_transpose1d_paired_odd",
    "conv_transpose3d_paired",
}


def judged(source: str, candidate: str, precision: str) -> bool:
    opts = Options(device=DEVICE, precision=precision, input_seed=0, trials=2)
    verdict = verify(source, candidate, options=opts)
    return verdict.correct


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_tma_kernel_computes_half_products_and_float32_keeps_the_pointer_kernel(
    name: str,
) -> None:
    source = CASES[name]
    candidate = emit(source)
    assert "TensorDescriptor" in candidate and POINTER_LAUNCH in candidate
    assert ("sample = pid //" in candidate) == name.startswith("conv")
    assert ("for rnd in tl.range(0, 2):" in candidate) == (name == "linear_persistent")
    # A GEMM halves its epilogue from 128 accumulators a thread; a convolution's shifted-rows
    # kernel wherever its tile has a multiple of 32 channels (emit_contraction.cc).
    block_n = int(re.search(r"_tma_kernel\[.*?BLOCK_N=(\d+)", candidate, re.S).group(1))
    halved = name == "linear_halved_epilogue" or (name.startswith("conv") and block_n % 32 == 0)
    assert ("acc_lo, acc_hi = tl.split" in candidate) == halved
    assert ("tl.join(acc_a, acc_b)" in candidate) == (name in PAIRED)
    assert ("[128, 128])" in candidate) == (name == "linear_streaming")
    assert judged(source, candidate, "fp16")
    tma_only = candidate.replace(POINTER_LAUNCH, "    if False:\n")
    assert judged(source, tma_only, "fp16")
    if name in FP16_ONLY:
        return
    assert judged(source, candidate, "fp32")
    assert not judged(source, tma_only, "fp32")


def test_bf16_takes_the_pointer_kernel_off_the_gpu() -> None:
    # The interpreter has no bf16 tl.dot: the wrapper's check keeps bf16 to the GPU.
    source = CASES["linear_relu"]
    if DEVICE != "cpu":
        pytest.skip("on a GPU bf16 takes the TMA kernel")
    assert judged(source, emit(source), "bf16")
    tma_only = emit(source).replace(POINTER_LAUNCH, "    if False:\n")
    assert not judged(source, tma_only, "bf16")


def random_convolution(rng: random.Random) -> tuple[str, str, bool]:
    """A direct or transposed conv1d/conv2d of random kernel, stride, padding, dilation and
    (transposed) output padding, its channels multiples of 8 and enough positions for the
    TMA kernel's 66 tiles; returns (operator line, inputs, whether a stride exceeds 1)."""
    dims = rng.choice([1, 2])
    transpose = rng.random() < 0.4
    cin, cout = rng.choice([8, 16, 24]), rng.choice([8, 16, 40])
    k = [rng.randint(1, 5) for _ in range(dims)]
    s = [rng.randint(1, 3) for _ in range(dims)]
    d = [rng.randint(1, 3) for _ in range(dims)]
    p = [rng.randint(0, (kk - 1) * dd) for kk, dd in zip(k, d, strict=True)]
    n, size = (24, [rng.randint(300, 900)]) if dims == 1 else (48, [rng.randint(20, 40)] * 2)
    k_text = ", ".join(map(str, k))
    if transpose:
        extra = [rng.randint(0, min(ss, dd) - 1) for ss, dd in zip(s, d, strict=True)]
        line = f"t0 = F.conv_transpose{dims}d(x0, x1, None, {s}, {p}, {extra}, 1, {d})"
        weight = f"torch.randn({cin}, {cout}, {k_text})"
    else:
        line = f"t0 = F.conv{dims}d(x0, x1, None, {s}, {p}, {d})"
        weight = f"torch.randn({cout}, {cin}, {k_text})"
    inputs = f"torch.randn({n}, {cin}, {', '.join(map(str, size))}), {weight}"
    return line, inputs, max(s) > 1


def test_random_convolutions_are_right_by_the_tma_kernel_alone() -> None:
    """Seeded draws (kept: those that take the TMA kernel): strides fold the copy, transposed
    ones split into phases, padding and dilation move the taps; in fp16 with the pointer
    kernel's launch switched off, the TMA kernel alone must compute each output."""
    rng = random.Random(0)
    checked = []
    while len(checked) < 4:
        line, inputs, strided = random_convolution(rng)
        source = task([line], "x0, x1", inputs)
        candidate = emit(source)
        if "TensorDescriptor" not in candidate:
            continue
        tma_only = candidate.replace(POINTER_LAUNCH, "    if False:\n")
        assert tma_only != candidate, line
        assert judged(source, tma_only, "fp16"), (line, inputs)
        checked.append(strided)
    assert any(checked)  # the seed draws strided ones too

"""Convolution schedules in bf16 against cuDNN and torch.compile, at KernelBench level 2's
conv2d shapes (3 x 3, stride 1, no padding, 64 input channels).

    python benchmarks/conv_variants.py --device cuda [--out conv.json]    # H100 or H200
    python benchmarks/conv_variants.py --device cpu    # compiles the TMA kernels for sm_90 only

Why: in bf16 on the H100 (benchmarks/results/h100-2026-12-05b), 24 of level 2's 43 correct
convolution problems lost to torch.compile, most of them with 64 input and 128 output channels
at 128 x 128 or 256 x 256 (L2 4, 17, 31, 32, 35, 46, 52: 0.39-0.83x). L2 1, the teacher's
fused kernel for the same convolution as L2 31's, ran 0.99 ms against torch.compile's 1.04:
300 GFLOP, so about 300 TFLOP/s where the bf16 TMA GEMM reaches 776 (L2 14's 1024 x 8192 x
8192). The teacher's convolution copies its input channels-last, then multiplies tiles that
cp.async gathers through index arithmetic (core/codegen/emit_contraction.cc). What may close
the gap, timed here before it goes into the teacher:
- `tma_rows`: an output tile is BM consecutive pixels of one output row by BN output channels.
  For a stride-1 convolution without padding, the input pixels of tap (kh, kw) for that tile
  are BM consecutive rows of the channels-last input viewed as (N*H*W, C), starting at
  (n*H + oh + kh)*W + ow0 + kw: one TMA box per tap and channel block, no index arithmetic.
  Rows past the output row's end read the next input row; their outputs are masked at the
  store. The weight, permuted to (Cout, KH*KW*Cin), arrives by TMA too. Output NCHW by pointer.
- `tma_rows_persistent`: the same, one program per SM walking the tiles.
- `tma_shifted_persistent`: tma_shifted (below) with one program per SM, its tile loop
  flattened with the tap loop (`tl.range(..., flatten=True)`), so the next tile's boxes load
  during this one's epilogue: at 64 channels a 3 x 3 tile has 9 K steps, and 3 stages leave 2
  of them exposed per tile when each program computes one.
- Not possible: reading the NCHW input itself, a (channels, positions) box per tap, to drop
  the copy. A TMA box's start along the innermost dimension must be 16-byte aligned, and a
  tap's positions start at p0 + kh*W + kw. Triton's interpreter asserts it; on an H100
  (2026-12-06, results/h100-2026-12-06) every config of such a kernel failed and the
  process's CUDA context died with "an illegal instruction was encountered".
- `tma_shifted`: the teacher's shifted-rows form (core/codegen/contraction_spec.h,
  ShiftedRows): a tile is BM consecutive positions of one sample's flattened input (H*W), so
  tap (kh, kw) reads the rows p0 + kh*W + kw of the (N, H*W, C) copy, one box, and positions
  whose column or row lies past the output's are computed and masked (3% more products at
  128 x 128). The teacher's kernel (`teacher`) has one config (heuristics.h,
  ChooseShiftedRowsTma); this one is autotuned over CONFIGS, which says whether that is the one.
`copy_tiles`: the teacher's input copy written by hand, autotuned over COPY_CONFIGS (its
bandwidth in the JSON, `tb_s`); `copy_tma` the same copy by TMA boxes in and out, transposed in
the program (COPY_TMA_CONFIGS). The teacher rows carry `kernels`: each of their kernels' mean
time (torch.profiler), so the copies and the convolution are seen apart.
Baselines: `cudnn` (F.conv2d on NCHW tensors, as eager runs it), `cudnn_cl` (input and
weight channels-last beforehand: the convolution alone, as torch.compile's layout optimization
calls it), `cl_copy` (the input's channels-last copy alone), `compile` (torch.compile of
F.conv2d on NCHW), `teacher` (the teacher's candidate for the convolution alone: its wrapper,
copies included; in bf16 on a GPU that is its shifted-rows TMA kernel), `teacher_pointer` (the
same candidate with the TMA kernel's guard forced off: its pointer-loaded kernel). The TMA rows
are timed without the input's copy; add `cl_copy` for a whole convolution from NCHW.
A shape may add a stride and padding (`--shapes 10x128x56x56x256x3x2x1`): the baselines and
the teacher's variants run it (the teacher's TMA kernel then reads a copy folded by the
stride), the hand-written TMA variants are skipped.

Each variant is autotuned over CONFIGS by `triton.testing.do_bench` (L2 cleared between calls,
median); its output is poisoned with NaN before the checked call and compared with float32
products of the same bf16 operands: relative Frobenius norm. One table per shape: variant,
config, ms, TFLOP/s, x cudnn, x compile, error. Exit 0 when every variant ran and matched
(relative error under 1e-2), 1 otherwise, 2 on a usage error. On the CPU nothing runs: the TMA
kernels are compiled for sm_90 (`triton.compile`, no GPU) at every config and their TTGIR's TMA
loads and wgmma counted.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import re
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import triton
import triton.language as tl

ROOT = pathlib.Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

sys.path.insert(0, str(ROOT / "benchmarks"))

from drtriton.files import write_text_atomic  # noqa: E402
from gemm_variants import fastest_config, report_compile_check  # noqa: E402
from teacher_profile import kernel_times  # noqa: E402

# (N, Cin, H, W, Cout, K): L2 1, 17, 31, 35, 46 (and 1's 0.99 ms); L2 4 and 32; L2 52.
SHAPES = [(128, 64, 128, 128, 128, 3), (64, 64, 256, 256, 128, 3), (64, 64, 128, 128, 128, 3)]
# (BM, BN, BK, num_warps, num_stages)
CONFIGS = [
    (128, 128, 64, 8, 3),
    (128, 128, 64, 8, 4),
    (128, 128, 64, 4, 4),
    (64, 128, 64, 4, 4),
    (128, 64, 64, 4, 4),
    (256, 128, 64, 8, 3),  # two warp groups of 128 x 128: half the tiles, half their overhead
]
TMA_VARIANTS = ("tma_rows", "tma_rows_persistent", "tma_shifted", "tma_shifted_persistent")
TEACHER_VARIANTS = ("teacher", "teacher_pointer")
# Why the teacher's TMA kernel took 0.876 ms inside its candidate where tma_shifted, the same
# sm_90 build, took 0.675 alone (results/h100-2026-12-06b): `teacher_kernel` replays the
# teacher's own convolution launch alone (captured from one call of its wrapper), timed as
# the hand kernels are; `copy_then_shifted` times copy_tiles and tma_shifted back to back at
# their best configs, as the candidate runs its copy and its kernel.  Answered in
# results/h100-2026-12-06c: replayed alone the teacher's kernel takes as long (0.883), while
# the hand kernel chose 4 stages (0.803); `teacher_kernel_4_stages` replays the teacher's
# launch with 4 stages instead of its 3.  Each kernel on the other's buffers too
# (results/h100-2026-12-07b/teacher_vs_hand_probe.py): the teacher's kernel 6-7% slower on
# both, the difference its epilogue's runtime output strides (since then literal).
PROBE_VARIANTS = ("teacher_kernel", "teacher_kernel_4_stages", "copy_then_shifted")
VARIANTS = ("cudnn", "cudnn_cl", "cl_copy", "copy_tiles", "copy_tma", "compile", *TEACHER_VARIANTS,
            *TMA_VARIANTS, *PROBE_VARIANTS)  # fmt: skip
# The input copy's tiles (BLOCK_R, BLOCK_C, num_warps): the teacher's (heuristics.cc
# ChooseChannelsLast: 4,096 elements, 64 x 64 at 64 channels, 4 warps) first.
COPY_CONFIGS = [(64, 64, 4), (128, 64, 4), (256, 64, 4), (256, 64, 8), (512, 64, 8)]
# copy_tma's (BLOCK_R, -, num_warps): its boxes take all channels (at most 256).
COPY_TMA_CONFIGS = [(64, 0, 4), (128, 0, 4), (128, 0, 8), (256, 0, 8)]
MAX_REL_ERR = 1e-2


@triton.jit
def _conv_tile(xd, wd, b_ptr, y_ptr, tile, OH, OW, H, W, COUT, TILES_W, TILES_N,
               KH: tl.constexpr, KW: tl.constexpr, CIN: tl.constexpr, BM: tl.constexpr,
               BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
    """Output tile `tile`: BM pixels of one output row by BN channels, taps by TMA."""
    pn = tile % TILES_N  # channel blocks innermost: neighbours share the input rows
    rest = tile // TILES_N
    pw = rest % TILES_W
    rest = rest // TILES_W
    oh = rest % OH
    n = rest // OH
    ow0 = pw * BM
    row0 = (n * H + oh) * W + ow0
    blocks: tl.constexpr = CIN // BK
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in tl.range(0, KH * KW * blocks):
        tap = k // blocks
        c0 = (k % blocks) * BK
        a = xd.load([row0 + (tap // KW) * W + tap % KW, c0])
        b = wd.load([pn * BN, tap * CIN + c0])
        acc = tl.dot(a, b.T, acc)
    co = pn * BN + tl.arange(0, BN)[None, :]
    ow = ow0 + tl.arange(0, BM)[:, None]
    acc += tl.load(b_ptr + co, mask=co < COUT, other=0.0).to(tl.float32)
    address = y_ptr + ((n * COUT + co) * OH + oh) * OW + ow
    tl.store(address, acc.to(y_ptr.dtype.element_ty), mask=(ow < OW) & (co < COUT))


@triton.jit
def conv_tma_rows(xd, wd, b_ptr, y_ptr, OH, OW, H, W, COUT, TILES_W, TILES_N,
                  KH: tl.constexpr, KW: tl.constexpr, CIN: tl.constexpr, BM: tl.constexpr,
                  BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
    _conv_tile(xd, wd, b_ptr, y_ptr, tl.program_id(0), OH, OW, H, W, COUT, TILES_W, TILES_N,
               KH, KW, CIN, BM, BN, BK)  # fmt: skip


@triton.jit
def conv_tma_rows_persistent(xd, wd, b_ptr, y_ptr, OH, OW, H, W, COUT, TILES_W, TILES_N,
                             TILES, KH: tl.constexpr, KW: tl.constexpr, CIN: tl.constexpr,
                             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                             PROGRAMS: tl.constexpr):  # fmt: skip
    for tile in tl.range(tl.program_id(0), TILES, PROGRAMS):
        _conv_tile(xd, wd, b_ptr, y_ptr, tile, OH, OW, H, W, COUT, TILES_W, TILES_N,
                   KH, KW, CIN, BM, BN, BK)  # fmt: skip


@triton.jit
def _shifted_tile(xd, wd, b_ptr, y_ptr, tile, OH, OW, W, COUT, TILES_P, TILES_N,
                  KH: tl.constexpr, KW: tl.constexpr, CIN: tl.constexpr, BM: tl.constexpr,
                  BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
    """Output tile `tile`: BM consecutive input positions of one sample by BN channels."""
    pn = tile % TILES_N
    n = tile // (TILES_N * TILES_P)
    p0 = (tile // TILES_N % TILES_P) * BM
    blocks: tl.constexpr = CIN // BK
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in tl.range(0, KH * KW * blocks):
        tap = k // blocks
        c0 = (k % blocks) * BK
        a = xd.load([n, p0 + (tap // KW) * W + tap % KW, c0]).reshape(BM, BK)
        b = wd.load([pn * BN, tap * CIN + c0])
        acc = tl.dot(a, b.T, acc)
    p = p0 + tl.arange(0, BM)[:, None]
    oh = p // W
    ow = p % W
    co = pn * BN + tl.arange(0, BN)[None, :]
    acc += tl.load(b_ptr + co, mask=co < COUT, other=0.0).to(tl.float32)
    address = y_ptr + ((n * COUT + co) * OH + oh) * OW + ow
    tl.store(address, acc.to(y_ptr.dtype.element_ty), mask=(oh < OH) & (ow < OW) & (co < COUT))


@triton.jit
def conv_tma_shifted(xd, wd, b_ptr, y_ptr, OH, OW, W, COUT, TILES_P, TILES_N,
                     KH: tl.constexpr, KW: tl.constexpr, CIN: tl.constexpr, BM: tl.constexpr,
                     BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
    _shifted_tile(xd, wd, b_ptr, y_ptr, tl.program_id(0), OH, OW, W, COUT, TILES_P, TILES_N,
                  KH, KW, CIN, BM, BN, BK)  # fmt: skip


@triton.jit
def conv_tma_shifted_persistent(xd, wd, b_ptr, y_ptr, OH, OW, W, COUT, TILES_P, TILES_N, TILES,
                                KH: tl.constexpr, KW: tl.constexpr, CIN: tl.constexpr,
                                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                                PROGRAMS: tl.constexpr):  # fmt: skip
    """conv_tma_shifted's tiles walked by one program per SM, the tile loop flattened with the
    tap loop: the next tile's first boxes load while this one's epilogue runs."""
    for tile in tl.range(tl.program_id(0), TILES, PROGRAMS, flatten=True):
        _shifted_tile(xd, wd, b_ptr, y_ptr, tile, OH, OW, W, COUT, TILES_P, TILES_N,
                      KH, KW, CIN, BM, BN, BK)  # fmt: skip


@triton.jit
def channels_last_copy(x_ptr, y_ptr, POSITIONS, TILES_R, C: tl.constexpr, BLOCK_R: tl.constexpr,
                       BLOCK_C: tl.constexpr):  # fmt: skip
    """The teacher's input copy (emit_repack.cc, EmitChannelsLast) at other tiles: BLOCK_R
    positions by BLOCK_C channels of one sample, read along positions, written along channels."""
    pid = tl.program_id(0)
    n = pid // TILES_R
    offs_r = (pid % TILES_R) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    offs_c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]
    mask = (offs_r < POSITIONS) & (offs_c < C)
    x = tl.load(x_ptr + n * POSITIONS * C + offs_c * POSITIONS + offs_r, mask=mask)
    tl.store(y_ptr + n * POSITIONS * C + offs_r * C + offs_c, x, mask=mask)


@triton.jit
def channels_last_copy_tma(xd, yd, TILES_R, C: tl.constexpr, BLOCK_R: tl.constexpr):
    """The same copy by TMA: a (C, BLOCK_R) box of the (N, C, H*W) input in (its start is a
    whole tile: 16-byte aligned), transposed in the program, a (BLOCK_R, C) box out."""
    pid = tl.program_id(0)
    n = pid // TILES_R
    r0 = (pid % TILES_R) * BLOCK_R
    x = xd.load([n, 0, r0]).reshape(C, BLOCK_R)
    yd.store([n, r0, 0], tl.trans(x).reshape(1, BLOCK_R, C))


def launch_copy(x: Any, y: Any, config: tuple[int, ...], tma: bool = False) -> None:
    block_r, block_c, warps = config
    n, c, h, w = x.shape
    if tma:  # block_c is all of C (a box dim holds at most 256)
        from triton.tools.tensor_descriptor import TensorDescriptor

        p = h * w
        xd = TensorDescriptor(x, [n, c, p], [c * p, p, 1], [1, c, block_r])
        yd = TensorDescriptor(y, [n, p, c], [p * c, c, 1], [1, block_r, c])
        tiles_r = triton.cdiv(p, block_r)
        channels_last_copy_tma[(n * tiles_r,)](xd, yd, tiles_r, C=c, BLOCK_R=block_r,
                                               num_warps=warps)  # fmt: skip
        return
    tiles_r = triton.cdiv(h * w, block_r)
    channels_last_copy[(n * tiles_r, triton.cdiv(c, block_c))](
        x, y, h * w, tiles_r, C=c, BLOCK_R=block_r, BLOCK_C=block_c, num_warps=warps
    )


def tma_operands(x: Any, w: Any) -> tuple[Any, Any]:
    """The input channels-last as (N*H*W, Cin) and the weight as (Cout, KH*KW*Cin), both
    contiguous: the TMA kernels' operands."""
    n, c, h, wd = x.shape
    rows = x.permute(0, 2, 3, 1).contiguous().view(n * h * wd, c)
    taps = w.permute(0, 2, 3, 1).contiguous().view(w.shape[0], -1)
    return rows, taps


def launch_tma(variant: str, rows: Any, taps: Any, bias: Any, y: Any, shape: tuple[int, ...],
               config: tuple[int, ...], sms: int) -> None:  # fmt: skip
    from triton.tools.tensor_descriptor import TensorDescriptor

    bm, bn, bk, warps, stages = config
    n, cin, h, w, cout, k = shape
    oh, ow = h - k + 1, w - k + 1
    tiles_w, tiles_n = triton.cdiv(ow, bm), triton.cdiv(cout, bn)
    tiles = n * oh * tiles_w * tiles_n
    xd = TensorDescriptor.from_tensor(rows, [bm, bk])
    wd = TensorDescriptor.from_tensor(taps, [bn, bk])
    common = {"KH": k, "KW": k, "CIN": cin, "BM": bm, "BN": bn, "BK": bk, "num_warps": warps,
              "num_stages": stages}  # fmt: skip
    if variant.startswith("tma_shifted"):
        tiles_p = triton.cdiv((oh - 1) * w + ow, bm)  # up to the last output position
        xd = TensorDescriptor(rows, [n, h * w, cin], [h * w * cin, cin, 1], [1, bm, bk])
        shifted = n * tiles_p * tiles_n
        if variant == "tma_shifted":
            conv_tma_shifted[(shifted,)](xd, wd, bias, y, oh, ow, w, cout, tiles_p, tiles_n,
                                         **common)  # fmt: skip
            return
        programs = min(sms, shifted)
        conv_tma_shifted_persistent[(programs,)](xd, wd, bias, y, oh, ow, w, cout, tiles_p,
                                                 tiles_n, shifted, PROGRAMS=programs,
                                                 **common)  # fmt: skip
        return
    sizes = (oh, ow, h, w, cout, tiles_w, tiles_n)
    if variant == "tma_rows":
        conv_tma_rows[(tiles,)](xd, wd, bias, y, *sizes, **common)
        return
    programs = min(sms, tiles)
    conv_tma_rows_persistent[(programs,)](xd, wd, bias, y, *sizes, tiles, PROGRAMS=programs,
                                          **common)  # fmt: skip


def teacher_candidate(shape: tuple[int, ...], pointer: bool = False) -> str:
    """The teacher's candidate for F.conv2d alone at `shape` (6 numbers, or 8 with stride and
    padding); with `pointer`, its TMA kernel's guard forced off (its pointer-loaded kernel runs
    in every dtype)."""
    from drtriton.teach import emit

    n, cin, h, w, cout, k, stride, pad = full_shape(shape)
    program = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "def fused_operator(x0, x1, x2):\n"
        f"    t0 = F.conv2d(x0, x1, x2, {stride}, {pad})\n    return t0\n\n"
        f"def get_inputs():\n    return [torch.randn({n}, {cin}, {h}, {w}), "
        f"torch.randn({cout}, {cin}, {k}, {k}), torch.randn({cout})]\n"
    )
    candidate = emit(program)
    return candidate.replace("    k0_tma = ", "    k0_tma = False and ") if pointer else candidate


def teacher_module(shape: tuple[int, ...], pointer: bool = False) -> Any:
    """teacher_candidate imported as a module."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="drtriton-conv-"))
    path = folder / "candidate.py"  # Triton reads a kernel's source from its file
    path.write_text(teacher_candidate(shape, pointer))
    spec = importlib.util.spec_from_file_location("conv_candidate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def teacher_operator(shape: tuple[int, ...], pointer: bool = False) -> Any:
    """teacher_candidate's triton_fused_operator."""
    return teacher_module(shape, pointer).triton_fused_operator


class LaunchRecorder:
    """Stands in for a Triton kernel in a candidate module's globals: each `kernel[grid](...)`
    is run and kept (grid, arguments), so that the launch can be replayed alone."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.calls: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        def launch(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((grid, args, kwargs))
            return self.kernel[grid](*args, **kwargs)

        return launch


def teacher_conv_launch(
    shape: tuple[int, ...], inputs: list[Any], **overrides: Any
) -> tuple[Callable[[], None], Any]:
    """The teacher's convolution kernel launch (its TMA kernel where it runs one), captured
    from one call of its wrapper: (replay, the output that launch writes).  `overrides`
    replace launch options in the replay (num_stages=4)."""
    module = teacher_module(shape)
    names = [n for n in vars(module) if n.endswith("_tma_kernel")] or [
        n for n in vars(module) if re.fullmatch(r"k\d+_conv\w*_kernel", n)
    ]
    recorders = {n: LaunchRecorder(getattr(module, n)) for n in names}
    for name, recorder in recorders.items():
        setattr(module, name, recorder)
    out = module.triton_fused_operator(*inputs)
    recorder = next(r for r in recorders.values() if r.calls)
    grid, args, kwargs = recorder.calls[-1]
    kwargs = {**kwargs, **overrides}
    kernel = recorder.kernel
    return (lambda: kernel[grid](*args, **kwargs)), out


def full_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """(N, Cin, H, W, Cout, K, stride, padding): stride 1 and no padding where not given."""
    return tuple(shape) + (1, 0)[len(shape) - 6 :]


def plain_shape(shape: tuple[int, ...]) -> bool:
    """Stride 1 and no padding: the shapes the hand-written TMA variants take."""
    return full_shape(shape)[6:] == (1, 0)


def measure_shape(shape: tuple[int, ...], variants: list[str]) -> list[dict[str, Any]]:
    import torch
    import torch.nn.functional as F
    from triton.testing import do_bench

    n, cin, h, w, cout, k, stride, pad = full_shape(shape)
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.rand(n, cin, h, w, device="cuda", generator=gen).to(torch.bfloat16)
    weight = torch.randn(cout, cin, k, k, device="cuda", generator=gen) / (cin * k * k) ** 0.5
    weight = weight.to(torch.bfloat16)
    bias = torch.randn(cout, device="cuda", generator=gen).to(torch.bfloat16)
    torch.backends.cudnn.allow_tf32 = False
    conv = lambda a, b, c: F.conv2d(a, b, c, stride, pad)  # noqa: E731
    exact = conv(x.float(), weight.float(), bias.float())  # float32 products, same operands
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    flops = 2.0 * n * cout * oh * ow * cin * k * k
    bench = lambda fn: do_bench(fn, return_mode="median")  # noqa: E731
    rows: list[dict[str, Any]] = []

    def add(variant: str, config: Any, ms: float | None, out: Any = None) -> None:
        row = {"shape": list(shape), "variant": variant, "config": config, "ms": ms,
               "tflops": flops / ms / 1e9 if ms else None, "rel_err": None}  # fmt: skip
        if out is not None:
            row["rel_err"] = ((out.float() - exact).norm() / exact.norm()).item()
        rows.append(row)

    x_cl = x.contiguous(memory_format=torch.channels_last)
    w_cl = weight.contiguous(memory_format=torch.channels_last)
    plain = {
        "cudnn": lambda: conv(x, weight, bias),
        "cudnn_cl": lambda: conv(x_cl, w_cl, bias),
        "cl_copy": lambda: x.contiguous(memory_format=torch.channels_last),
    }
    for variant in [v for v in variants if v in plain]:
        out = plain[variant]()
        add(variant, None, bench(plain[variant]), out if variant != "cl_copy" else None)
    if "compile" in variants:
        compiled = torch.compile(lambda a: conv(a, weight, bias))
        add("compile", None, bench(lambda: compiled(x)), compiled(x))
    for variant in [v for v in variants if v in TEACHER_VARIANTS]:
        operator = teacher_operator(shape, pointer=variant == "teacher_pointer")
        add(
            variant, None, bench(lambda op=operator: op(x, weight, bias)), operator(x, weight, bias)
        )
        rows[-1]["kernels"] = kernel_times(operator, [x, weight, bias], "cuda")
    best_configs: dict[str, Any] = {}  # variant -> its fastest config
    for variant in [v for v in ("copy_tiles", "copy_tma") if v in variants]:
        y = torch.empty_like(x_cl)
        tma = variant == "copy_tma"
        configs = COPY_TMA_CONFIGS if tma else COPY_CONFIGS

        def copier(config: Any, y: Any = y, tma: bool = tma) -> Callable[[], None]:
            return lambda: launch_copy(x, y, config, tma)

        best = fastest_config(variant, configs, copier, bench)
        if best is not None:
            best_configs[variant] = best[1]
            launch_copy(x, y, best[1], tma)
            exact_copy = torch.equal(y, x_cl)
            add(variant, list(best[1]), best[0])
            rows[-1]["tflops"] = None  # a copy: its bandwidth is tb_s
            rows[-1]["rel_err"] = 0.0 if exact_copy else float("inf")
            rows[-1]["tb_s"] = 2 * x.numel() * x.element_size() / best[0] / 1e9
    # The teacher's launch as it is, and with 4 stages (heuristics.h ChooseShiftedRowsTma: 3).
    for probe, overrides in (
        ("teacher_kernel", {}),
        ("teacher_kernel_4_stages", {"num_stages": 4}),
    ):
        if probe in variants:
            replay, out = teacher_conv_launch(shape, [x, weight, bias], **overrides)
            add(probe, None, bench(replay), out)
    tma_variants = [v for v in variants if v in TMA_VARIANTS and plain_shape(shape)]
    if "copy_then_shifted" in variants and plain_shape(shape) and "tma_shifted" not in tma_variants:
        tma_variants.append("tma_shifted")
    if tma_variants:
        rows_op, taps = tma_operands(x, weight)
    for variant in tma_variants:

        def launcher(config: Any, v: str = variant) -> Callable[[], None]:
            y = torch.empty(n, cout, oh, ow, device="cuda", dtype=torch.bfloat16)
            return lambda: launch_tma(v, rows_op, taps, bias, y, shape, config, sms)

        best = fastest_config(variant, CONFIGS, launcher, bench)
        if best is None:
            add(variant, None, None)
            continue
        y = torch.full((n, cout, oh, ow), float("nan"), device="cuda", dtype=torch.bfloat16)
        launch_tma(variant, rows_op, taps, bias, y, shape, best[1], sms)
        best_configs[variant] = best[1]
        if variant in variants:
            add(variant, list(best[1]), best[0], y)
    if "copy_then_shifted" in variants and "tma_shifted" in best_configs:
        copy_config = best_configs.get("copy_tiles", COPY_CONFIGS[0])
        y_cl = torch.empty_like(x_cl)
        y = torch.full((n, cout, oh, ow), float("nan"), device="cuda", dtype=torch.bfloat16)
        rows_cl = y_cl.permute(0, 2, 3, 1).reshape(n * h * w, cin)  # the copy's (N*H*W, C) view

        def both() -> None:
            launch_copy(x, y_cl, copy_config, False)
            launch_tma("tma_shifted", rows_cl, taps, bias, y, shape, best_configs["tma_shifted"],
                       sms)  # fmt: skip

        both()
        add("copy_then_shifted", [list(copy_config), list(best_configs["tma_shifted"])],
            bench(both), y)  # fmt: skip
    times = {r["variant"]: r["ms"] for r in rows}
    for r in rows:
        for base in ("cudnn", "compile"):
            r[f"x_{base}"] = times[base] / r["ms"] if r["ms"] and times.get(base) else None
    return rows


def compile_check(variants: list[str]) -> list[dict[str, Any]]:
    """The TMA kernels compiled for sm_90 on this machine at every config: TTGIR op counts."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    kernels = {"tma_rows": conv_tma_rows, "tma_rows_persistent": conv_tma_rows_persistent,
               "tma_shifted": conv_tma_shifted,
               "tma_shifted_persistent": conv_tma_shifted_persistent}  # fmt: skip
    rows = []
    for variant in [v for v in variants if v in TMA_VARIANTS]:
        for bm, bn, bk, warps, stages in CONFIGS:
            shifted = variant.startswith("tma_shifted")
            box = f"1,{bm},{bk}" if shifted else f"{bm},{bk}"
            sig = {"xd": f"tensordesc<bf16[{box}]>", "wd": f"tensordesc<bf16[{bn},{bk}]>",
                   "b_ptr": "*bf16", "y_ptr": "*bf16"}  # fmt: skip
            sizes = ("OH", "OW", "H", "W", "COUT", "TILES_W", "TILES_N")
            if shifted:
                sizes = ("OH", "OW", "W", "COUT", "TILES_P", "TILES_N")
            for size in sizes:
                sig[size] = "i32"
            const = {"KH": 3, "KW": 3, "CIN": 64, "BM": bm, "BN": bn, "BK": bk}
            if variant.endswith("_persistent"):
                sig["TILES"] = "i32"
                const["PROGRAMS"] = 132
            sig.update({name: "constexpr" for name in const})
            source = ASTSource(kernels[variant], sig, const, {})
            config = [bm, bn, bk, warps, stages]
            try:
                options = {"num_warps": warps, "num_stages": stages}
                compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options=options)
            except Exception as exc:
                rows.append({"variant": variant, "config": config,
                             "error": f"{type(exc).__name__}: {str(exc)[:200]}"})  # fmt: skip
                continue
            ttgir = compiled.asm["ttgir"]
            counts = {name: len(re.findall(pattern, ttgir)) for name, pattern in (
                ("tma", r"async_tma_copy_global_to_local|descriptor_load"),
                ("wgmma", r"warp_group_dot\b"))}  # fmt: skip
            rows.append({"variant": variant, "config": config, **counts,
                         "shared": compiled.metadata.shared})  # fmt: skip
    return rows


def fmt(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_rows(rows: list[dict[str, Any]]) -> None:
    print("| shape | variant | config | ms | TFLOP/s | x cudnn | x compile | rel err |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        n, cin, h, w, cout, k, stride, pad = full_shape(tuple(r["shape"]))
        shape = f"{n}x{cin}x{h}x{w} -> {cout}, {k}x{k}"
        if (stride, pad) != (1, 0):
            shape += f" s{stride} p{pad}"
        config = "-" if r["config"] is None else "x".join(map(str, r["config"]))
        print(f"| {shape} | {r['variant']} | {config} | {fmt(r['ms'], '.3f')} | "
              f"{fmt(r['tflops'], '.0f')} | {fmt(r['x_cudnn'], '.2f')} | "
              f"{fmt(r['x_compile'], '.2f')} | {fmt(r['rel_err'], '.1e')} |")  # fmt: skip
    for r in rows:
        if r.get("kernels"):
            parts = ", ".join(f"{name} {ms:.3f}" for name, ms in r["kernels"].items())
            print(f"  {r['variant']} kernels (ms): {parts}")
        if r.get("tb_s"):
            print(f"  {r['variant']} {r['config']}: {r['tb_s']:.2f} TB/s")


def parse_shape(text: str) -> tuple[int, ...]:
    shape = tuple(int(v) for v in text.split("x"))
    if len(shape) not in (6, 8) or min(shape) < 0 or min(shape[:7]) < 1:
        raise ValueError(text)
    return shape


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    shapes_help = (
        "NxCinxHxWxCoutxK[xSTRIDExPAD], e.g. 128x64x128x128x128x3 (default: three) or "
        "10x128x56x56x256x3x2x1; the hand-written TMA variants take stride 1 and no padding "
        "only (skipped elsewhere)"
    )
    ap.add_argument("--shapes", nargs="+", help=shapes_help)
    ap.add_argument("--out", help="write the rows as JSON here")
    args = ap.parse_args(argv)
    try:
        shapes = [parse_shape(s) for s in args.shapes] if args.shapes else SHAPES
    except ValueError:
        ap.error("--shapes takes NxCinxHxWxCoutxK[xSTRIDExPAD], e.g. 128x64x128x128x128x3")
    full = [full_shape(s) for s in shapes]
    if any(s[1] % 64 or s[2] + 2 * s[7] < s[5] or s[3] + 2 * s[7] < s[5] for s in full):
        ap.error("--shapes: Cin a multiple of 64 (the channel block), H and W (padded) at least K")
    if args.device == "cpu":
        return report_compile_check(compile_check(args.variants), args.out)
    import torch

    if not torch.cuda.is_available():
        print("error: --device cuda needs a GPU (use --device cpu to compile only)",
              file=sys.stderr)  # fmt: skip
        return 2
    rows = []
    for shape in shapes:
        rows += measure_shape(shape, args.variants)
        print_rows([r for r in rows if r["shape"] == list(shape)])
        if args.out:  # after every shape: a run cut short keeps what it measured
            device = torch.cuda.get_device_name(0)
            write_text_atomic(args.out, json.dumps({"device": device, "rows": rows}, indent=1))
    bad = [r for r in rows if r["ms"] is None or (r["rel_err"] or 0) > MAX_REL_ERR]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

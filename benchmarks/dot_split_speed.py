"""Speed and accuracy of fp32 tl.dot splits on the GPU: one plain Triton matmul per split and tile.

    python benchmarks/dot_split_speed.py                      # H200: the table
    python benchmarks/dot_split_speed.py --shapes 4096,4096,4096 --json out.json

Why: the teacher's contractions multiply fp32 tiles on the tensor cores through a split
(core/codegen/heuristics.h). Triton's bf16x6 reached 65.6 TFLOP/s on 4096^3 (1.28x cuBLAS's
strict-fp32 SGEMM); bf16x3 100 TFLOP/s but too inaccurate for the verifier. fp16x3 is the
teacher's own split (benchmarks/dot_split_accuracy.py says how it splits and what the verifier
makes of its error on the CPU): three fp16 products per step where bf16x6 has six. This times a
matmul kernel written here with each split and a few tiles against torch.matmul in strict fp32
(TF32 off, cuBLAS SGEMM) in interleaved rounds (verify/timing.py's Bench and Flush: an L2 flush
and the launch slack before each call, CUDA events), and gives each output's relative L2 error
against the float64 product, on torch.randn inputs.

Prints one table (TFLOP/s, x cuBLAS, error); --json writes the rows. Needs a GPU, except
--sass, which compiles the kernels on fp16 parts for sm_90 on this machine and prints their
registers and K-loop instructions. Each split compiles every tile for every shape: on the GPU
pick a few (--splits fp16x3_presplit fp16x3_tma fp16x3_tma_chunk4 --shapes 4096,4096,4096).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages)
TILES = [
    (128, 128, 32, 8, 8, 3),
    (128, 128, 64, 8, 8, 3),
    (128, 128, 64, 8, 8, 4),
    (64, 128, 32, 8, 4, 4),
]
# fp16x3: the teacher's step (emit_contraction.cc: products from zero, one FMA into the sum);
# fp16x3_chained: the accumulators chained through the tensor cores (acc = tl.dot(h, h, acc)),
# which the H200 measured 4.9e-6 off on 4096^3; fp16x3_presplit: the same step as fp16x3 on
# fp16 parts that one pointwise kernel per operand wrote first (_split_parts, timed with the
# matmul), so the K loop only loads and multiplies.  Its sm_90 build (128x128x64, 8 warps, 3
# stages) has 275 instructions in the K loop against fp16x3's 658 (no F2FP, HADD2, PRMT or
# STS: the tiles go from cp.async to the tensor cores), 176 registers against 255.
# fp16x3_tma*: fp16x3_presplit with every part tile loaded by the Hopper's tensor memory
# accelerator through host-built descriptors (triton.tools.tensor_descriptor: no device
# allocator, which the verifier's static rules keep out of candidates); out-of-range rows and
# columns come as zeros from the copy engine instead of masks.  _persistent: one program per
# SM walking tiles NUM_SMS apart.  The teacher's step makes every K step wait for its products
# (they are summed from zero, then added to the fp32 accumulator with an FFMA), so the tensor
# cores idle while the accumulator is updated; _lochain carries the two small cross terms in
# the tensor cores' own accumulator over all of K (their truncation is 2^-11 of the large
# term's), _chunk4/_chunk8 carry all three within chunks of 4 or 8 steps, each chunk added to
# the fp32 accumulator once (how long a chain stays as exact as strict fp32 is what err64
# answers).  _presplit_lochain and _presplit_chunk4 are the same sums on the pointer loads
# the teacher emits now, to tell the accumulation's share from TMA's.  sm_90 builds on the CPU
# (--sass; 128x128x64, 8 warps, 3 stages, 4096^3), K-loop instructions a step / registers:
# presplit 275 / 176, presplit_lochain 210 / 244, tma 290 / 141, tma_persistent 291 / 150,
# tma_lochain 225 / 206, tma_chunk4 and _chunk8 162 / 206 (presplit_chunk4's inner loop
# unrolls: 809 / 255).  Issue 19 asks whether TMA or persistence pays (the bf16 kernel went
# 0.81 -> 0.94 of cuBLAS with TMA, h200-2026-12-03-c).  Predicted over fp16x3_presplit's 180
# TFLOP/s: tma and persistent 1.0-1.1x (the same step, fewer address instructions), lochain
# 1.1-1.2x, chunk4/8 1.2-1.4x if their errors stay near 2e-7.
SPLITS = ("bf16x6", "fp16x3", "fp16x3_chained", "bf16x3", "fp16x3_presplit",
          "fp16x3_presplit_lochain", "fp16x3_presplit_chunk4", "fp16x3_tma",
          "fp16x3_tma_persistent", "fp16x3_tma_lochain", "fp16x3_tma_chunk4",
          "fp16x3_tma_chunk8")  # fmt: skip
SHAPES = [(4096, 4096, 4096), (2048, 4096, 8192), (8192, 8192, 1024)]


@triton.jit
def _fp16_parts(x):
    """hi, lo: fp16 parts of x * 2^-8 (lo scaled by 2^11), dot_split_accuracy.py's fp16x3."""
    s = x * 0.00390625
    hi = s.to(tl.float16)
    lo = ((s - hi.to(tl.float32)) * 2048.0).to(tl.float16)
    return hi, lo


@triton.jit
def _tile_of(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """Output tile number `tile`'s first row and column, tiles in GROUP_M-row groups."""
    num_m, num_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (tile // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    return (first_m + (tile % group) % size_m) * BLOCK_M, ((tile % group) // size_m) * BLOCK_N


@triton.jit
def _tile_rows_cols(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """The program's output rows and columns (its tile: _tile_of)."""
    off_m, off_n = _tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    return off_m + tl.arange(0, BLOCK_M), off_n + tl.arange(0, BLOCK_N)


@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, sam, sak, sbk, sbn, scm, scn,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
            GROUP_M: tl.constexpr, SPLIT: tl.constexpr):  # fmt: skip
    rm, rn = _tile_rows_cols(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    acc_lo = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in tl.range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * sam + rk[None, :] * sak,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)  # fmt: skip
        b = tl.load(b_ptr + rk[:, None] * sbk + rn[None, :] * sbn,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)  # fmt: skip
        if SPLIT == "fp16x3":
            ah, al = _fp16_parts(a)
            bh, bl = _fp16_parts(b)
            lo = tl.dot(al, bh, tl.dot(ah, bl))
            acc += tl.dot(ah, bh, lo * 0.00048828125) * 65536.0
        elif SPLIT == "fp16x3_chained":
            ah, al = _fp16_parts(a)
            bh, bl = _fp16_parts(b)
            acc_lo = tl.dot(al, bh, tl.dot(ah, bl, acc_lo))
            acc = tl.dot(ah, bh, acc)
        else:
            acc = tl.dot(a, b, acc, input_precision=SPLIT)
    if SPLIT == "fp16x3_chained":
        acc = (acc + acc_lo * 0.00048828125) * 65536.0
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))  # fmt: skip


@triton.jit
def _split_parts(x_ptr, hi_ptr, lo_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    hi, lo = _fp16_parts(x)
    tl.store(hi_ptr + offs, hi, mask=offs < n)
    tl.store(lo_ptr + offs, lo, mask=offs < n)


@triton.jit
def _parts_of(a_hi, a_lo, b_hi, b_lo, off_m, off_n, k0, M, N, K, sam, sbk, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, TMA: tl.constexpr):  # fmt: skip
    """The four fp16 part tiles of one K step: by TMA from descriptors, or by masked loads
    from pointers (rows sam and sbk elements apart)."""
    if TMA:
        ah, al = a_hi.load([off_m, k0]), a_lo.load([off_m, k0])
        bh, bl = b_hi.load([k0, off_n]), b_lo.load([k0, off_n])
    else:
        rm = off_m + tl.arange(0, BLOCK_M)
        rn = off_n + tl.arange(0, BLOCK_N)
        rk = k0 + tl.arange(0, BLOCK_K)
        mask_a = (rm[:, None] < M) & (rk[None, :] < K)
        mask_b = (rk[:, None] < K) & (rn[None, :] < N)
        ia = rm[:, None] * sam + rk[None, :]
        ib = rk[:, None] * sbk + rn[None, :]
        ah = tl.load(a_hi + ia, mask=mask_a, other=0.0)
        al = tl.load(a_lo + ia, mask=mask_a, other=0.0)
        bh = tl.load(b_hi + ib, mask=mask_b, other=0.0)
        bl = tl.load(b_lo + ib, mask=mask_b, other=0.0)
    return ah, al, bh, bl


@triton.jit
def _parts_tile(a_hi, a_lo, b_hi, b_lo, c_ptr, M, N, K: tl.constexpr, sam, sbk, scm, off_m, off_n,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                CHAIN: tl.constexpr, TMA: tl.constexpr):  # fmt: skip
    """One output tile of fp16x3 on the parts (_parts_of; K may be overshot: the tiles past it
    are zeros), then its store. CHAIN: how far the tensor cores' own accumulator carries sums.
    0: the teacher's step (each step's products summed from zero, then added to the fp32
    accumulator with one FFMA), which makes every step wait for its products; -1: the two small
    cross terms chained over the whole K, the large hi * hi as in 0; n > 0: all three chained
    within chunks of n steps, each chunk added to the fp32 accumulator once."""
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    lo = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    if CHAIN <= 0:  # one loop: Triton pipelines the innermost loop's loads
        for k0 in tl.range(0, K, BLOCK_K):
            ah, al, bh, bl = _parts_of(a_hi, a_lo, b_hi, b_lo, off_m, off_n, k0, M, N, K, sam,
                                       sbk, BLOCK_M, BLOCK_N, BLOCK_K, TMA)  # fmt: skip
            if CHAIN == 0:
                step = tl.dot(al, bh, tl.dot(ah, bl))
                acc += tl.dot(ah, bh, step * 0.00048828125) * 65536.0
            else:
                lo = tl.dot(al, bh, tl.dot(ah, bl, lo))
                acc += tl.dot(ah, bh) * 65536.0
        if CHAIN == -1:
            acc += lo * 32.0  # 2^-11 * 2^16
    else:
        for kc in tl.range(0, K, BLOCK_K * CHAIN, num_stages=1):
            hi = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
            lo = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
            for k0 in tl.range(kc, kc + BLOCK_K * CHAIN, BLOCK_K):
                ah, al, bh, bl = _parts_of(a_hi, a_lo, b_hi, b_lo, off_m, off_n, k0, M, N, K,
                                           sam, sbk, BLOCK_M, BLOCK_N, BLOCK_K, TMA)  # fmt: skip
                lo = tl.dot(al, bh, tl.dot(ah, bl, lo))
                hi = tl.dot(ah, bh, hi)
            acc += (hi + lo * 0.00048828125) * 65536.0
    rm = off_m + tl.arange(0, BLOCK_M)
    rn = off_n + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))  # fmt: skip


@triton.jit
def _matmul_parts(a_hi, a_lo, b_hi, b_lo, c_ptr, M, N, K: tl.constexpr, sam, sbk, scm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, CHAIN: tl.constexpr, TMA: tl.constexpr):  # fmt: skip
    off_m, off_n = _tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    _parts_tile(a_hi, a_lo, b_hi, b_lo, c_ptr, M, N, K, sam, sbk, scm, off_m, off_n, BLOCK_M,
                BLOCK_N, BLOCK_K, CHAIN, TMA)  # fmt: skip


@triton.jit
def _matmul_parts_persistent(a_hi, a_lo, b_hi, b_lo, c_ptr, M: tl.constexpr, N: tl.constexpr,
                             K: tl.constexpr, sam, sbk, scm, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                             CHAIN: tl.constexpr, TMA: tl.constexpr,
                             NUM_SMS: tl.constexpr):  # fmt: skip
    tiles: tl.constexpr = ((M + BLOCK_M - 1) // BLOCK_M) * ((N + BLOCK_N - 1) // BLOCK_N)
    # Rounds from 0 with the tile tested (a loop from program_id: the interpreter's range
    # takes no tensor bound), the last round partial.
    for round in tl.range(0, (tiles + NUM_SMS - 1) // NUM_SMS):
        tile = tl.program_id(0) + round * NUM_SMS
        if tile < tiles:
            off_m, off_n = _tile_of(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
            _parts_tile(a_hi, a_lo, b_hi, b_lo, c_ptr, M, N, K, sam, sbk, scm, off_m, off_n,
                        BLOCK_M, BLOCK_N, BLOCK_K, CHAIN, TMA)  # fmt: skip


# The kernels on parts written first: (TMA, persistent, CHAIN) (_parts_tile says what CHAIN
# does); fp16x3_presplit is the teacher's loop.
PARTS_VARIANTS = {
    "fp16x3_presplit": (False, False, 0),
    "fp16x3_presplit_lochain": (False, False, -1),
    "fp16x3_presplit_chunk4": (False, False, 4),
    "fp16x3_tma": (True, False, 0),
    "fp16x3_tma_persistent": (True, True, 0),
    "fp16x3_tma_lochain": (True, False, -1),
    "fp16x3_tma_chunk4": (True, False, 4),
    "fp16x3_tma_chunk8": (True, False, 8),
}


def matmul_parts(a: torch.Tensor, b: torch.Tensor, tile: tuple[int, ...],
                 split: str) -> torch.Tensor:  # fmt: skip
    """fp16x3 on parts that one pointwise kernel per operand writes first (timed with the
    matmul), loaded by pointer or by TMA (PARTS_VARIANTS). Descriptors need 16-byte row
    strides: K and N multiples of 8 (fp16)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    tma, persistent, chain = PARTS_VARIANTS[split]
    bm, bn, bk, gm, warps, stages = tile
    (m, k), n = a.shape, b.shape[1]
    parts = [*split_parts(a.contiguous()), *split_parts(b.contiguous())]
    if tma:
        parts = [TensorDescriptor.from_tensor(x, [bm, bk]) for x in parts[:2]] + [
            TensorDescriptor.from_tensor(x, [bk, bn]) for x in parts[2:]
        ]
    c = torch.empty(m, n, device=a.device, dtype=torch.float32)
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    meta = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": gm, "CHAIN": chain,
            "TMA": tma, "num_warps": warps, "num_stages": stages}  # fmt: skip
    if persistent:
        sms = torch.cuda.get_device_properties(a.device).multi_processor_count if a.is_cuda else 4
        programs = min(sms, tiles)
        _matmul_parts_persistent[(programs,)](*parts, c, m, n, k, k, n, n, NUM_SMS=programs,
                                              **meta)  # fmt: skip
    else:
        _matmul_parts[(tiles,)](*parts, c, m, n, k, k, n, n, **meta)
    return c


def split_parts(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """fp16 hi and lo parts of a contiguous float32 tensor (_fp16_parts), one kernel."""
    hi = torch.empty(x.shape, device=x.device, dtype=torch.float16)
    lo = torch.empty_like(hi)
    _split_parts[(triton.cdiv(x.numel(), 4096),)](x, hi, lo, x.numel(), BLOCK=4096, num_warps=8)
    return hi, lo


def matmul(a: torch.Tensor, b: torch.Tensor, split: str, tile: tuple[int, ...]) -> torch.Tensor:
    if split in PARTS_VARIANTS:
        return matmul_parts(a, b, tile, split)
    bm, bn, bk, gm, warps, stages = tile
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n, device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    _matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                  c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm,
                  SPLIT=split, num_warps=warps, num_stages=stages)  # fmt: skip
    return c


def sass_rows(shape: tuple[int, int, int], tile: tuple[int, ...]) -> list[dict[str, Any]]:
    """The presplit and TMA kernels compiled for sm_90 on this machine (no GPU needed):
    registers, shared memory and the K loop's instructions a step (occupancy_audit's reading
    of cuobjdump's SASS), for one shape and tile."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import occupancy_audit as audit

    (m, n, k), (bm, bn, bk, gm, warps, stages) = shape, tile
    blocks = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": gm}
    builds = {}
    for name, (tma, persistent, chain) in PARTS_VARIANTS.items():
        a_kind, b_kind = (f"tensordesc<fp16[{bm},{bk}]>", f"tensordesc<fp16[{bk},{bn}]>")
        kinds = [a_kind, a_kind, b_kind, b_kind] if tma else ["*fp16"] * 4
        sig = dict(zip(("a_hi", "a_lo", "b_hi", "b_lo"), kinds, strict=True))
        sig.update({"c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "constexpr", "sam": "i32",
                    "sbk": "i32", "scm": "i32"})  # fmt: skip
        extra: dict[str, Any] = {"CHAIN": chain, "TMA": tma}
        if persistent:
            sig.update({"M": "constexpr", "N": "constexpr"})
            extra.update({"M": m, "N": n, "NUM_SMS": 132})
        builds[name] = (_matmul_parts_persistent if persistent else _matmul_parts, sig, extra)
    rows = []
    for name, (fn, sig, extra) in builds.items():
        constants = {"K": k, **blocks, **extra}
        sig = {**sig, **{key: "constexpr" for key in constants}}
        # 16-byte alignment of every pointer and integer, as the JIT specializes them here.
        attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values())
                 if t.startswith("*") or t == "i32"}  # fmt: skip
        rows.append({"kernel": name, **audit.compile_sm90(fn, sig, constants, attrs, warps,
                                                          stages)})  # fmt: skip
    return rows


def rel_err(out: torch.Tensor, ref64: torch.Tensor) -> float:
    return float((out.double() - ref64).norm() / ref64.norm())


def measure_shape(shape: tuple[int, int, int], splits: tuple[str, ...], tiles: list[tuple],
                  rounds: int) -> list[dict[str, Any]]:  # fmt: skip
    from drtriton.verify.rounds import Series, interleave
    from drtriton.verify.timing import Bench, Flush, summarize

    m, n, k = shape
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", generator=gen)
    b = torch.randn(k, n, device="cuda", generator=gen)
    ref64 = a.double() @ b.double()
    torch.backends.cuda.matmul.allow_tf32 = False
    flush = Flush(500.0)
    calls: dict[str, Any] = {"cublas": torch.matmul}
    errors = {"cublas": rel_err(torch.matmul(a, b), ref64)}
    for split in splits:
        for tile in tiles:
            name = f"{split} {'x'.join(map(str, tile[:3]))} w{tile[4]} s{tile[5]}"
            fn = lambda x, y, s=split, t=tile: matmul(x, y, s, t)  # noqa: E731
            try:
                errors[name] = rel_err(fn(a, b), ref64)
            except Exception as exc:  # a tile that does not compile (shared memory): left out
                print(f"  {name}: {type(exc).__name__}: {str(exc)[:120]}", file=sys.stderr)
                continue
            calls[name] = fn
    del ref64
    benches = {name: Bench(fn, [[a, b]], flush) for name, fn in calls.items()}
    for bench in benches.values():
        bench.warm(3)
    series = [Series(name, lambda r, b=bench: b.timed(r)[0]) for name, bench in benches.items()]
    interleave(series, min_rounds=rounds, max_rounds=rounds, target=0.0, budget_s=60.0)
    flops = 2.0 * m * n * k
    times = {s.name: summarize(s.times)["trimmed"] for s in series}
    rows = []
    for name, ms in times.items():
        rows.append({"shape": list(shape), "kernel": name, "ms": ms,
                     "tflops": flops / (ms * 1e-3) / 1e12, "x_cublas": times["cublas"] / ms,
                     "err64": errors[name]})  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", nargs="+", help="M,N,K ... (default: three KernelBench GEMMs)")
    ap.add_argument("--splits", nargs="+", default=list(SPLITS), choices=[*SPLITS, "ieee"])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--json", help="write the rows as JSON here")
    ap.add_argument("--sass", action="store_true",
                    help="no timing: compile the presplit and TMA kernels for sm_90 here (no "
                    "GPU needed) and print registers and K-loop instructions")  # fmt: skip
    args = ap.parse_args(argv)
    if args.sass:
        shape = tuple(int(v) for v in args.shapes[0].split(",")) if args.shapes else SHAPES[0]
        print(
            "| kernel | registers | shared bytes | K-loop instructions | loop loads | loop spills |"
        )
        print("|---|---|---|---|---|---|")
        for r in sass_rows(shape, TILES[1]):
            print(f"| {r['kernel']} | {r['regs']} | {r['shared']} | {r['loop_instructions']} | "
                  f"{r['loop_loads']} | {r['loop_spills']} |")  # fmt: skip
        return 0
    if not torch.cuda.is_available():
        print("error: dot_split_speed.py needs a GPU", file=sys.stderr)
        return 2
    shapes = [tuple(int(v) for v in s.split(",")) for s in args.shapes] if args.shapes else SHAPES
    rows = []
    print("| M x N x K | kernel | ms | TFLOP/s | x cuBLAS fp32 | rel. L2 err vs float64 |")
    print("|---|---|---|---|---|---|")
    for shape in shapes:
        for r in measure_shape(shape, tuple(args.splits), TILES, args.rounds):
            rows.append(r)
            print(f"| {'x'.join(map(str, shape))} | {r['kernel']} | {r['ms']:.3f} | "
                  f"{r['tflops']:.1f} | {r['x_cublas']:.2f} | {r['err64']:.1e} |")  # fmt: skip
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

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

Prints one table (TFLOP/s, x cuBLAS, error); --json writes the rows. Needs a GPU.
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
SPLITS = ("bf16x6", "fp16x3", "fp16x3_chained", "bf16x3", "fp16x3_presplit")
SHAPES = [(4096, 4096, 4096), (2048, 4096, 8192), (8192, 8192, 1024)]


@triton.jit
def _fp16_parts(x):
    """hi, lo: fp16 parts of x * 2^-8 (lo scaled by 2^11), dot_split_accuracy.py's fp16x3."""
    s = x * 0.00390625
    hi = s.to(tl.float16)
    lo = ((s - hi.to(tl.float32)) * 2048.0).to(tl.float16)
    return hi, lo


@triton.jit
def _tile_rows_cols(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """The program's output rows and columns, tiles in GROUP_M-row groups (the tutorial's)."""
    pid = tl.program_id(0)
    num_m, num_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    return pid_m * BLOCK_M + tl.arange(0, BLOCK_M), pid_n * BLOCK_N + tl.arange(0, BLOCK_N)


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
def _matmul_parts(ah_ptr, al_ptr, bh_ptr, bl_ptr, c_ptr, M, N, K: tl.constexpr, sam, sbk, scm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):  # fmt: skip
    rm, rn = _tile_rows_cols(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in tl.range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        mask_a = (rm[:, None] < M) & (rk[None, :] < K)
        mask_b = (rk[:, None] < K) & (rn[None, :] < N)
        ia = rm[:, None] * sam + rk[None, :]
        ib = rk[:, None] * sbk + rn[None, :]
        ah = tl.load(ah_ptr + ia, mask=mask_a, other=0.0)
        al = tl.load(al_ptr + ia, mask=mask_a, other=0.0)
        bh = tl.load(bh_ptr + ib, mask=mask_b, other=0.0)
        bl = tl.load(bl_ptr + ib, mask=mask_b, other=0.0)
        lo = tl.dot(al, bh, tl.dot(ah, bl))
        acc += tl.dot(ah, bh, lo * 0.00048828125) * 65536.0
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))  # fmt: skip


def split_parts(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """fp16 hi and lo parts of a contiguous float32 tensor (_fp16_parts), one kernel."""
    hi = torch.empty(x.shape, device=x.device, dtype=torch.float16)
    lo = torch.empty_like(hi)
    _split_parts[(triton.cdiv(x.numel(), 4096),)](x, hi, lo, x.numel(), BLOCK=4096, num_warps=8)
    return hi, lo


def matmul_presplit(a: torch.Tensor, b: torch.Tensor, tile: tuple[int, ...]) -> torch.Tensor:
    bm, bn, bk, gm, warps, stages = tile
    (m, k), n = a.shape, b.shape[1]
    (ah, al), (bh, bl) = split_parts(a.contiguous()), split_parts(b.contiguous())
    c = torch.empty(m, n, device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    _matmul_parts[grid](ah, al, bh, bl, c, m, n, k, k, n, n, BLOCK_M=bm, BLOCK_N=bn,
                        BLOCK_K=bk, GROUP_M=gm, num_warps=warps, num_stages=stages)  # fmt: skip
    return c


def matmul(a: torch.Tensor, b: torch.Tensor, split: str, tile: tuple[int, ...]) -> torch.Tensor:
    if split == "fp16x3_presplit":
        return matmul_presplit(a, b, tile)
    bm, bn, bk, gm, warps, stages = tile
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n, device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    _matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                  c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm,
                  SPLIT=split, num_warps=warps, num_stages=stages)  # fmt: skip
    return c


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
    args = ap.parse_args(argv)
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

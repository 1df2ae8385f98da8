"""Accuracy of tensor-core splits of an fp32 tl.dot, emulated on the CPU and judged by the verifier.

    python benchmarks/dot_split_accuracy.py            # the table (about a minute on 2 cores)
    python benchmarks/dot_split_accuracy.py --quick    # two shapes, one seed
    python benchmarks/dot_split_accuracy.py --json out.json

The teacher's contractions run `tl.dot(a, b, input_precision=DOT_PRECISION)`: a split on the GPU
(core/codegen/heuristics.h, kDefaultDotPrecision), "ieee" in the CPU interpreter, which has no
bf16 tl.dot. The GPU's arithmetic cannot run here, so this emulates it in torch, following
Triton's own definition of the modes (the F32DotTC pass, Triton 3.6):
- each fp32 operand is split into bf16 parts, hi = bf16(x), mid = bf16(x - hi),
  lo = bf16(x - hi - mid) (round to nearest even; bf16x3 uses hi and mid only);
- one tl.dot of a BLOCK_K step starts a fresh fp32 tile at zero and adds the partial products
  in this order: bf16x6: mid*mid, lo*hi, hi*lo, then (bf16x3 starts here) mid*hi, hi*mid;
  NaNs of that sum become 0 (an inf operand has a NaN mid part); then hi*hi; the step's tile
  is then added to the accumulator once;
- the products of two bf16 parts are exact in fp32 (8-bit significands), and the tensor cores
  add them in fp32. The emulation adds them with fp32 matmuls; the hardware's own accumulation
  (its order and rounding inside one MMA) is not modelled: the H200 measurements are the judge
  of that (2.1e-7 relative L2 error for bf16x6 on 4096^3, 4.4e-6 for bf16x3).
The teacher's loop is emulated too: its BLOCK_K steps and, for long K, its chunked partial sums
(core/codegen/heuristics.cc's choice for the shape, read through _core.codegen_contraction_config).

Modes compared, each against the float64 product:
- torch: torch's fp32 matmul on the CPU, the verifier's strict-fp32 reference here;
- sgemm: one running fp32 FMA sum over K, how "ieee" tl.dot and cuBLAS SGEMM accumulate on the
  GPU (the H200's strict SGEMM measured 1.1e-6 on 4096^3 torch.rand inputs; this gives 8.5e-7
  for 128 x 4096 x 128 of them);
- ieee: exact fp32 step products in the teacher's loop, what the CPU interpreter computes;
- bf16x3, bf16x6: the splits in the teacher's loop.
Each output is judged with the verifier's comparison (compare.judge: atol = rtol = 1e-4, and the
float64 envelope of envelope.evaluate when fp32 alone rejects). Inputs: the verifier's
distributions (task = torch.randn here, uniform, scaled_10, scaled_0.01).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

from drtriton.verify import compare, envelope  # noqa: E402

# Bf16 parts per operand, and the partial products before hi*hi, in Triton's order.
PARTS = {"bf16x3": 2, "bf16x6": 3}
HI, MID, LO = 0, 1, 2
CORRECTIONS = {
    "bf16x3": [(MID, HI), (HI, MID)],
    "bf16x6": [(MID, MID), (LO, HI), (HI, LO), (MID, HI), (HI, MID)],
}
MODES = ("torch", "sgemm", "ieee", "bf16x3", "bf16x6", "fp16x3")
# fp16x3 (the teacher's own split, core/codegen/emit_dot_split.cc): each fp32 operand scaled by
# 2^-FP16_PRESCALE (exact), then hi = fp16(x), lo = fp16((x - hi) * 2^11): 22 significant bits
# in two fp16 parts; the step is hi*hi + 2^-11 (hi*lo + lo*hi), three products where bf16x6 has
# six. The prescale keeps operands up to 65504 * 2^8 = 1.7e7 finite; values too small for fp16's
# normal range keep an absolute error under 4e-9 (lo holds what hi's subnormal spacing loses).
FP16_PRESCALE = 8
FP16_LO_SCALE = 11
# (M, K, N): a first conv layer (3 x 3 x 3), a 3 x 3 conv over 64 channels, KernelBench's
# 4096-long GEMMs, the 10,725-long transposed convolution the H200 teacher run lost with ieee,
# and a 16k-long GEMM.
SHAPES = [(512, 27, 64), (256, 576, 128), (128, 4096, 128), (64, 10725, 64), (64, 16384, 64)]
QUICK_SHAPES = [(256, 576, 128), (128, 4096, 128)]
DISTRIBUTIONS: dict[str, Callable[[tuple[int, ...], torch.Generator], torch.Tensor]] = {
    "randn": lambda s, g: torch.randn(s, generator=g),
    "uniform": lambda s, g: torch.rand(s, generator=g),
    "scaled_10": lambda s, g: 10.0 * torch.randn(s, generator=g),
    "scaled_0.01": lambda s, g: 0.01 * torch.randn(s, generator=g),
}


def split(x: torch.Tensor, parts: int) -> list[torch.Tensor]:
    """`x` as `parts` bf16 values (held in fp32) whose sum approximates it: hi, mid, lo."""
    out, rest = [], x
    for i in range(parts):
        part = rest.to(torch.bfloat16).to(torch.float32)
        out.append(part)
        if i < parts - 1:
            rest = rest - part  # exact in fp32: the part is rest rounded to 8 bits
    return out


def split_fp16(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`x` as the fp16x3 parts (held in fp32): hi and the scaled lo (MODES' comment)."""
    scaled = x * 2.0**-FP16_PRESCALE
    hi = scaled.to(torch.float16).to(torch.float32)
    lo = ((scaled - hi) * 2.0**FP16_LO_SCALE).to(torch.float16).to(torch.float32)
    return hi, lo


def step(a: torch.Tensor, b: torch.Tensor, mode: str) -> torch.Tensor:
    """One tl.dot of a BLOCK_K step, from a zero tile (module docstring)."""
    if mode == "ieee":
        return a @ b
    if mode == "fp16x3":
        (ah, al), (bh, bl) = split_fp16(a), split_fp16(b)
        lo = torch.addmm(al @ bh, ah, bl)
        hi = ah @ bh
        return (hi + lo * 2.0**-FP16_LO_SCALE) * 2.0 ** (2 * FP16_PRESCALE)
    pa, pb = split(a, PARTS[mode]), split(b, PARTS[mode])
    tile = torch.zeros(a.shape[0], b.shape[1])
    for i, j in CORRECTIONS[mode]:
        tile = torch.addmm(tile, pa[i], pb[j])
    tile = torch.where(torch.isnan(tile), 0.0, tile)
    return torch.addmm(tile, pa[HI], pb[HI])


def teacher_loop(a: torch.Tensor, b: torch.Tensor, mode: str, block_k: int,
                 chunk_k: int) -> torch.Tensor:  # fmt: skip
    """The emitted kernel's sum: BLOCK_K steps into `part`, chunk by chunk into `acc` (one
    running sum when chunk_k is 0)."""
    k = a.shape[1]
    acc = torch.zeros(a.shape[0], b.shape[1])
    span = chunk_k or k
    for kc in range(0, k, span):
        part = torch.zeros_like(acc)
        for k0 in range(kc, min(kc + span, k), block_k):
            part = part + step(a[:, k0 : k0 + block_k], b[k0 : k0 + block_k], mode)
        acc = acc + part
    return acc


def fma_chain(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """One fp32 FMA per element of K into one running sum (GPU ieee tl.dot, SGEMM)."""
    acc = torch.zeros(a.shape[0], b.shape[1])
    for i in range(a.shape[1]):
        acc = torch.addcmul(acc, a[:, i : i + 1], b[i : i + 1, :])
    return acc


def teacher_config(m: int, k: int, n: int, precision: str = "") -> tuple[int, int]:
    """(BLOCK_K, K chunk) of the teacher's kernel for an (m, k) x (k, n) product on the GPU at
    `precision` ("" = the default split; chunk 0 = one running sum): heuristics.cc's choice."""
    from drtriton import _core

    config = _core.codegen_contraction_config(m, n, k, precision=precision)
    return int(config["block_k"]), int(config["chunk_k"])


@dataclass
class Row:
    shape: tuple[int, int, int]
    distribution: str
    seed: int
    mode: str
    chunk_k: int
    rel_l2: float  # ||out - ref64|| / ||ref64||
    accepted: bool  # compare.judge: atol = rtol = 1e-4 with the float64 envelope
    reason: str | None


def judge(out: torch.Tensor, ref32: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> str | None:
    """The verifier's verdict on `out`: None when accepted, else its reason."""
    expected = compare.Expected(
        values=[ref32],
        pending=lambda: envelope.evaluate(torch.matmul, [a, b], [ref32], compare.flatten),
    )
    return compare.judge([out], expected, None, None)


def measure(shape: tuple[int, int, int], distribution: str, seed: int,
            modes: tuple[str, ...] = MODES) -> list[Row]:  # fmt: skip
    m, k, n = shape
    gen = torch.Generator().manual_seed(seed)
    draw = DISTRIBUTIONS[distribution]
    a, b = draw((m, k), gen), draw((k, n), gen)
    ref32 = a @ b
    ref64 = a.double() @ b.double()
    rows = []
    for mode in modes:
        chunk = 0
        if mode == "torch":
            out = ref32
        elif mode == "sgemm":
            out = fma_chain(a, b)
        else:
            # The teacher's tiles for this split (fp16x3 steps over 64 of K, the others 32);
            # "ieee" runs bf16x6's loop with exact products (what its split costs, alone).
            block_k, chunk = teacher_config(m, k, n, "bf16x6" if mode == "ieee" else mode)
            out = teacher_loop(a, b, mode, block_k, chunk)
        reason = judge(out, ref32, a, b)
        rel = float((out.double() - ref64).norm() / ref64.norm())
        rows.append(Row(shape, distribution, seed, mode, chunk, rel, reason is None, reason))
    return rows


def chunk_crossover(ks: list[int], seeds: int, distribution: str) -> list[dict[str, Any]]:
    """bf16x6's error with one running sum and in chunks of 256, over torch's, for 64 x K x 64
    products in BLOCK_K steps of 32 (the numbers behind heuristics.h's kSplitChunkedAbove)."""
    draw = DISTRIBUTIONS[distribution]
    out = []
    for k in ks:
        ratios: dict[str, list[float]] = {"single": [], "chunked": [], "sgemm": []}
        for seed in range(seeds):
            gen = torch.Generator().manual_seed(seed)
            a, b = draw((64, k), gen), draw((k, 64), gen)
            ref64 = a.double() @ b.double()

            def rel(x: torch.Tensor, ref64: torch.Tensor = ref64) -> float:
                return float((x.double() - ref64).norm() / ref64.norm())

            base = rel(a @ b)
            ratios["single"].append(rel(teacher_loop(a, b, "bf16x6", 32, 0)) / base)
            ratios["chunked"].append(rel(teacher_loop(a, b, "bf16x6", 32, 256)) / base)
            ratios["sgemm"].append(rel(fma_chain(a, b)) / base)
        out.append(
            {"k": k, "inputs": distribution, **{n: sum(v) / len(v) for n, v in ratios.items()}}
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="two shapes, one seed, no crossover")
    ap.add_argument("--seeds", type=int, default=2, help="input draws per shape and distribution")
    ap.add_argument("--json", help="write the rows as JSON here")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    shapes = QUICK_SHAPES if args.quick else SHAPES
    seeds = 1 if args.quick else args.seeds
    rows = [
        r for s in shapes for d in DISTRIBUTIONS for i in range(seeds) for r in measure(s, d, i)
    ]
    print("relative L2 error vs float64; * = rejected by the verifier (1e-4, float64 envelope)")
    print(f"| M x K x N | inputs | {' | '.join(MODES)} |")
    print("|---|---|" + "---|" * len(MODES))
    for shape in shapes:
        for dist in DISTRIBUTIONS:
            cells = []
            for mode in MODES:
                mine = [r for r in rows if r.shape == shape and r.distribution == dist
                        and r.mode == mode]  # fmt: skip
                worst = max(r.rel_l2 for r in mine)
                cells.append(f"{worst:.1e}" + ("" if all(r.accepted for r in mine) else "*"))
            print(f"| {'x'.join(map(str, shape))} | {dist} | " + " | ".join(cells) + " |")
    crossover = []
    if not args.quick:
        ks = [1024, 2048, 4096, 6144, 8192, 12288]
        crossover = [c for d in ("randn", "uniform") for c in chunk_crossover(ks, 3, d)]
        print("\nerror / torch fp32's error, 64 x K x 64, BLOCK_K 32, mean of 3 seeds")
        print("| K | inputs | bf16x6, one running sum | bf16x6, chunks of 256 | sgemm |")
        print("|---|---|---|---|---|")
        for c in crossover:
            print(f"| {c['k']} | {c['inputs']} | {c['single']:.2f} | {c['chunked']:.2f} | "
                  f"{c['sgemm']:.2f} |")  # fmt: skip
    if args.json:
        data = {"rows": [asdict(r) for r in rows], "chunk_crossover": crossover}
        pathlib.Path(args.json).write_text(json.dumps(data, indent=1))
    bad = [r for r in rows if r.mode == "bf16x6" and not r.accepted]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

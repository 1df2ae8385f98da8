"""The arithmetic of the GPU's tensor-core splits, emulated on the CPU and judged by the verifier.

The teacher's contractions run its own fp16x3 split on the GPU (core/codegen/heuristics.h,
kDefaultDotPrecision; tests/teach/test_interpreter_dot.py runs its emitted code in the
interpreter too), and could run Triton's bf16x6 or bf16x3 (`input_precision`), which the CPU
interpreter cannot run. These tests check the split itself, through benchmarks/dot_split_accuracy.py's
emulation of Triton's definition (bf16 hi/mid/lo parts, partial products in Triton's order, each
BLOCK_K step from a fresh tile, the teacher's K chunks), under the verifier's own comparison
(compare.judge with the float64 envelope). They document why bf16x6 and not bf16x3 is the
default; a change to the tolerance, the envelope, the chunking or the emulation that makes
bf16x6 lose accuracy fails them.
"""

from __future__ import annotations

import dataclasses
import json
from types import ModuleType
from typing import Any

import pytest
import torch

from benchmark_scripts import once_per_run

# KernelBench-like (M, K, N): a first conv layer (K = 3 x 3 x 3), a 3 x 3 conv over 64 channels,
# a 4096-long GEMM (one running sum under the split) and the 10,725-long transposed convolution
# the H200 teacher run lost with ieee (chunked).
SHAPES = [(512, 27, 64), (256, 576, 128), (128, 4096, 128), (64, 10725, 64)]
RANDN_FAMILY = ("randn", "scaled_10", "scaled_0.01")  # cancellation: elements near zero


@pytest.fixture(scope="module")
def bench(benchmark_script: Any) -> ModuleType:
    return benchmark_script("dot_split_accuracy.py")


@pytest.fixture(scope="module")
def rows(bench: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[Any, ...], Any]:
    # Measured once per run: under pytest-xdist both workers set this module fixture up when
    # its tests are split between them (24 s and 19 s of the two CPU cores in one CI run).
    def measured() -> str:
        return json.dumps([dataclasses.asdict(row) for shape in SHAPES
                           for dist in bench.DISTRIBUTIONS
                           for row in bench.measure(shape, dist, seed=0)])  # fmt: skip

    out = {}
    for fields in json.loads(once_per_run(tmp_path_factory, "dot_split_rows", measured)):
        row = bench.Row(**{**fields, "shape": tuple(fields["shape"])})
        out[(row.shape, row.distribution, row.mode)] = row
    return out


def test_parts_are_bf16_and_sum_back_to_the_operand(bench: ModuleType) -> None:
    # Seeded, and no zeros (|x| / |x| of an exact 0 is NaN): the tests of a process share the
    # global generator, whose state depends on which tests ran before (pytest-xdist).
    gen = torch.Generator().manual_seed(0)
    x = (torch.rand(100_000, generator=gen) + 0.5) * torch.logspace(-20, 20, 100_000)
    hi, mid, lo = bench.split(x, 3)
    for part in (hi, mid, lo):
        assert torch.equal(part.to(torch.bfloat16).to(torch.float32), part)
    # Three 8-bit parts hold fp32's 24-bit significand: the sum is x again, exactly.
    assert torch.equal((hi + mid) + lo, x)
    # bf16x3's two parts: about 16 bits, a relative error up to 2^-17 (round to nearest twice).
    two = bench.split(x, 2)
    assert float(((two[0] + two[1] - x).abs() / x.abs()).max()) <= 2.0**-16


def test_an_inf_operand_stays_inf(bench: ModuleType) -> None:
    # inf's mid part is inf - inf = NaN: Triton zeroes NaNs of the corrections before hi*hi.
    a = torch.ones(16, 32)
    a[3, 5] = float("inf")
    b = torch.rand(32, 16) + 0.5
    for mode in ("bf16x3", "bf16x6"):
        out = bench.step(a, b, mode)
        assert torch.isinf(out[3]).all() and torch.isfinite(out[:3]).all(), mode


def test_bf16x6_passes_the_verifier_at_least_as_accurately_as_strict_fp32(rows: dict) -> None:
    for (shape, dist, mode), row in rows.items():
        if mode != "bf16x6":
            continue
        where = f"{shape} {dist}"
        assert row.accepted, f"{where}: {row.reason}"
        # The GPU's strict-fp32 arithmetic it replaces (one FMA sum: ieee tl.dot, SGEMM).
        assert row.rel_l2 <= rows[(shape, dist, "sgemm")].rel_l2, where
        # The same loop with exact fp32 step products: the split itself costs nothing.
        assert row.rel_l2 <= 1.05 * rows[(shape, dist, "ieee")].rel_l2, where
        # torch's own fp32 matmul (this machine's reference), where cancellation decides verdicts.
        # On torch.rand inputs a 4096-long single sum is 1.9x torch's error (1.5e-7, 600x inside
        # rtol): heuristics.cc says why that sum is not chunked.
        if dist in RANDN_FAMILY:
            assert row.rel_l2 <= rows[(shape, dist, "torch")].rel_l2, where


def test_bf16x3_fails_the_verifier_on_randn_inputs(rows: dict) -> None:
    # Its two parts leave 2^-17 of each operand out: 4.5e-6 relative error (the H200: 4.4e-6),
    # outside 1e-4 near the zeros of a randn product even with the float64 envelope.
    for shape in SHAPES[1:]:
        row = rows[(shape, "randn", "bf16x3")]
        assert not row.accepted, shape
        assert 3e-6 < row.rel_l2 < 6e-6, (shape, row.rel_l2)
        assert not rows[(shape, "scaled_10", "bf16x3")].accepted, shape
    # Positive inputs have no cancellation, and there it passes: the verdict depends on the
    # task's inputs, so it cannot be the default.
    for shape in SHAPES:
        assert rows[(shape, "uniform", "bf16x3")].accepted, shape


def test_long_split_sums_are_chunked_where_one_sum_would_lose_to_fp32(bench: ModuleType) -> None:
    # heuristics.cc chunks a split above 128 BLOCK_K steps: below, one running sum beats
    # torch's fp32 matmul on randn inputs; far above, it grows to torch's error (0.98-1.00x at
    # K = 12288 with this machine's BLAS, whose own error depends on its build and threads, so
    # no test of which side of 1.0 it lands), while the chunked sum stays well under.
    short, long = bench.chunk_crossover([4096, 12288], seeds=2, distribution="randn")
    assert short["single"] < 1.0
    assert long["single"] > 1.5 * short["single"]
    assert long["chunked"] < 0.5 * long["single"] and long["chunked"] < 1.0
    assert bench.teacher_config(64, 4096, 64, "bf16x6") == (32, 0)
    assert bench.teacher_config(64, 12288, 64, "bf16x6") == (32, 256)
    # fp16x3's steps are 64 long: the same 128 steps, twice the K.
    assert bench.teacher_config(64, 8192, 64, "fp16x3") == (64, 0)
    assert bench.teacher_config(64, 12288, 64, "fp16x3") == (64, 512)


def test_fp16x3_parts_are_fp16_and_hold_22_bits(bench: ModuleType) -> None:
    # Operands from 0.016 (2^-14, fp16's smallest normal, after the 2^-8 prescale) to 1.6e7
    # (below 65504 * 2^8).
    gen = torch.Generator().manual_seed(0)
    signs = torch.randint(0, 2, (100_000,), generator=gen) * 2.0 - 1.0  # +-1, never 0
    x = signs * torch.logspace(-1.8, 7.2, 100_000)
    hi, lo = bench.split_fp16(x)
    for part in (hi, lo):
        assert torch.isfinite(part).all()
        assert torch.equal(part.to(torch.float16).to(torch.float32), part)
    back = (hi + lo * 2.0**-bench.FP16_LO_SCALE) * 2.0**bench.FP16_PRESCALE
    assert float(((back - x).abs() / x.abs()).max()) <= 2.0**-21
    # Smaller operands fall below fp16's normal range: an absolute error under 4e-9 instead.
    tiny = signs[:10_000] * torch.logspace(-9, -1.8, 10_000)
    th, tl_ = bench.split_fp16(tiny)
    back = (th + tl_ * 2.0**-bench.FP16_LO_SCALE) * 2.0**bench.FP16_PRESCALE
    assert float((back - tiny).abs().max()) < 4e-9


def test_fp16x3_passes_the_verifier_as_accurately_as_the_gpus_strict_fp32(rows: dict) -> None:
    for (shape, dist, mode), row in rows.items():
        if mode != "fp16x3":
            continue
        where = f"{shape} {dist}"
        assert row.accepted, f"{where}: {row.reason}"
        # One FMA sum (ieee tl.dot, cuBLAS SGEMM: what strict fp32 runs on the GPU) has at least
        # this error from K = 576 on; on the first conv layer's K = 27 both are at fp32's
        # rounding (fp16x3 1.1e-7, the sum 9.6e-8; 3.7e-7 for scaled_0.01, whose prescaled
        # operands lose bits below fp16's normal range).
        if shape[1] >= 576:
            assert row.rel_l2 <= rows[(shape, dist, "sgemm")].rel_l2, where
        assert row.rel_l2 <= 5e-7, where

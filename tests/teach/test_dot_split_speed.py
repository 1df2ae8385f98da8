"""benchmarks/dot_split_speed.py's kernels on fp16x3 parts written first, which the GPU times
(issue 19: whether TMA loads, a persistent grid or longer tensor-core accumulation pay): each
variant computes the product in Triton's interpreter, and each compiles for sm_90 here."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

PROBE = f"""
import json, sys
import torch
sys.path.insert(0, {str(ROOT / "benchmarks")!r})
import dot_split_speed as bench

torch.manual_seed(0)
m, n, k = 200, 136, 520  # partial tiles along M and N; K not a multiple of any chunk
a, b = torch.randn(m, k), torch.randn(k, n)
exact = a.double() @ b.double()
outs = {{name: bench.matmul(a, b, name, (64, 64, 32, 4, 4, 2)) for name in bench.PARTS_VARIANTS}}
same = {{name: bool(torch.equal(out, outs["fp16x3_presplit"])) for name, out in outs.items()}}
print(json.dumps({{"errors": {{name: bench.rel_err(out, exact) for name, out in outs.items()}},
                  "same_as_presplit": same}}))
"""


@pytest.fixture(scope="module")
def bench(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("dot_split_speed.py")


def test_every_parts_variant_computes_the_product(
    interpreted_probe: Callable[[str, pathlib.Path], Any], tmp_path: pathlib.Path
) -> None:
    got = interpreted_probe(PROBE, tmp_path)
    assert set(got["errors"]) >= {"fp16x3_presplit", "fp16x3_tma", "fp16x3_tma_chunk4"}
    for name, error in got["errors"].items():
        assert error < 3e-7, (name, error)  # fp16x3's ~1.4e-7 here; a lost term gives ~1e-3
    # The teacher's step (CHAIN 0) by pointer or by TMA, tiled or persistent: the same sums.
    for name in ("fp16x3_tma", "fp16x3_tma_persistent"):
        assert got["same_as_presplit"][name], name


def test_the_tma_kernels_load_by_tma_on_sm90(bench: ModuleType) -> None:
    rows = {r["kernel"]: r for r in bench.sass_rows((4096, 4096, 4096), bench.TILES[1])}
    assert set(rows) == set(bench.PARTS_VARIANTS)
    for name, row in rows.items():
        loads = row["loop_loads"] or {}
        uses_tma = bench.PARTS_VARIANTS[name][0]
        assert any(op.startswith("UTMALDG") for op in loads) == uses_tma, (name, loads)
        assert 0 < row["regs"] <= 255 and row["shared"] <= 232448, row

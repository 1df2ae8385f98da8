"""The teacher's TF32 products round their float32 operands to nearest first.

On the GPU the tensor cores read a float32 operand's top 19 bits, and Triton's tf32 dot feeds
them unrounded: a truncation, about three times less exact than cuBLAS's and cuDNN's TF32,
which round (core/codegen/emit_contraction.cc WriteProducts).  The emitted kernel therefore
rounds each operand (to nearest, ties away from zero, as cvt.rna does) before its tf32 dot.
The interpreter computes every tl.dot exactly in float32 (test_interpreter_dot.py), so here
the forced tf32 path must give the float32 product of the rounded operands, not of the
truncated ones, and keep infinities and NaN where float32 has them.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

from teach_tasks import task
from test_interpreter_dot import GPU_CHOICE

from drtriton.teach import emit

PROBE = r"""
import json, pathlib, sys
import numpy as np
import torch
from drtriton.verify.task import import_file

folder = pathlib.Path(sys.argv[1])
torch.manual_seed(0)
a, b = torch.randn(48, 40), torch.randn(40, 24)
a[5, 7] = float("inf")  # row 5 of the product: inf or NaN, as float32's

def to_nearest(x):  # 11 significant bits, ties away from zero, by frexp (not by bits)
    m, e = np.frexp(x.numpy().astype(np.float64))
    scaled = m * 2.0**11
    kept = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
    return torch.from_numpy(np.where(np.isfinite(x.numpy()), np.ldexp(kept, e - 11), x.numpy()))

def truncated(x):
    return torch.from_numpy((x.numpy().view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32))

out = import_file(str(folder / "cand.py"), "cand").triton_fused_operator(a, b).double()
finite = torch.isfinite(a @ b)
def rel(ref):
    return float((out[finite] - ref[finite]).norm() / ref[finite].norm())
print(json.dumps({
    "vs_nearest": rel(to_nearest(a) @ to_nearest(b)),
    "vs_truncated": rel(truncated(a).double() @ truncated(b).double()),
    "vs_float64": rel(a.double() @ b.double()),
    "nonfinite_as_fp32": all(torch.equal(f(out), f((a @ b).double()))
                             for f in (torch.isnan, torch.isposinf, torch.isneginf)),
}))
"""


def test_tf32_products_round_their_operands_to_nearest(
    tmp_path: pathlib.Path, interpreted_probe: Callable[[str, pathlib.Path], Any]
) -> None:
    candidate = emit(
        task(["t0 = torch.matmul(x0, x1)"], "x0, x1", "torch.randn(48, 40), torch.randn(40, 24)")
    )
    assert GPU_CHOICE in candidate
    (tmp_path / "cand.py").write_text(candidate.replace(GPU_CHOICE, 'dot_precision = "tf32"'))
    got = interpreted_probe(PROBE, tmp_path)
    # The float32 product of the rounded operands (float32 sums: ~1e-7), and TF32's own
    # distance from the exact product (~1e-4), which truncation roughly doubles.
    assert got["vs_nearest"] < 1e-6, got
    assert got["vs_truncated"] > 10 * got["vs_nearest"] + 1e-5, got
    assert 1e-5 < got["vs_float64"] < 1e-3, got
    assert got["nonfinite_as_fp32"], got

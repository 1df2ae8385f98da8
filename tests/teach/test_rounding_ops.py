"""torch.round, trunc and ceil in the teacher's kernels (catalog/lowering.cc): exactly torch's
on halves (round: to even), on floats too large to have a fraction, on signed values and on
inf and NaN, in the interpreter (which has no rint: round is built from floors)."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

from teach_tasks import task

from drtriton.teach import emit

VALUES = (
    "[-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997, -0.49999997, 1.4999999, "
    "2.5000002, -2.7, 2.7, 0.3, -0.3, 4194304.5, 4194305.5, -4194305.5, 8388609.0, "
    "-8388609.0, 16777218.0, 3e38, -3e38, 0.0, -0.0, float('inf'), float('-inf'), float('nan')]"
)

PROBE = rf"""
import json, pathlib, sys
import torch
from drtriton.verify.task import import_file

folder = pathlib.Path(sys.argv[1])
x = torch.tensor({VALUES}, dtype=torch.float32)
report = {{}}
for name in ("round", "trunc", "ceil"):
    got = import_file(str(folder / (name + ".py")), name).triton_fused_operator(x)
    want = getattr(torch, name)(x)
    same = torch.equal(got.nan_to_num(0.0), want.nan_to_num(0.0))
    report[name] = [bool(same and torch.equal(got.isnan(), want.isnan())),
                    [(a, b) for a, b in zip(got.tolist(), want.tolist()) if a != b and a == a]]
print(json.dumps(report))
"""


def test_round_trunc_and_ceil_are_torchs(
    tmp_path: pathlib.Path, interpreted_probe: Callable[[str, pathlib.Path], Any]
) -> None:
    for name in ("round", "trunc", "ceil"):
        source = emit(task([f"t0 = torch.{name}(x0)"], "x0", "torch.randn(29)"))
        (tmp_path / f"{name}.py").write_text(source)
    got = interpreted_probe(PROBE, tmp_path)
    for name in ("round", "trunc", "ceil"):
        assert got[name][0], (name, got[name][1])

"""The teacher's prod reduction: each row's product in its order, one element a step
(core/codegen/emit_rows.cc EmitProd), specialized and shape-generic, in the interpreter."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

from teach_tasks import task

from drtriton.teach import emit

PROBE = r"""
import json, pathlib, sys
import torch
from drtriton.verify.task import import_file

folder = pathlib.Path(sys.argv[1])
torch.manual_seed(0)
report = {}
for path in sorted(folder.glob("*.py")):
    dim, keep, generic = path.stem.split("_")
    kernel = import_file(str(path), path.stem).triton_fused_operator
    shapes = [(4, 8, 3)] + ([(5, 13, 7), (2, 3, 40)] if generic == "generic" else [])
    worst = 0.0
    for shape in shapes:
        x = torch.randn(*shape)
        x[0, 0, 0] = float("inf") if shape == (4, 8, 3) else x[0, 0, 0]
        got = kernel(x)
        want = torch.prod(x.double(), int(dim), keepdim=keep == "keep")
        ok = got.shape == want.shape and torch.equal(got.isinf(), want.isinf())
        finite = torch.isfinite(want)
        rel = ((got.double() - want).abs() / want.abs())[finite]
        worst = max(worst, float(rel.max()) if ok else float("inf"))
    report[path.stem] = worst
print(json.dumps(report))
"""


def test_prod_along_each_dim_specialized_and_generic(
    tmp_path: pathlib.Path, interpreted_probe: Callable[[str, pathlib.Path], Any]
) -> None:
    for dim in (0, 1, 2):
        for keep in ("keep", "drop"):
            for generic in ("generic", "fixed"):
                line = f"t0 = torch.prod(x0, {dim}, {keep == 'keep'})"
                source = emit(
                    task([line], "x0", "torch.randn(4, 8, 3)"), generic_shapes=generic == "generic"
                )
                assert ("assert tuple(" in source) == (generic == "fixed")
                (tmp_path / f"{dim}_{keep}_{generic}.py").write_text(source)
    got = interpreted_probe(PROBE, tmp_path)
    assert len(got) == 12
    # float32 products of up to 40 factors against float64: ~n rounding errors of 6e-8, and
    # an inf factor gives inf (not NaN) where no factor is 0.
    assert all(worst < 40 * 2.0**-24 for worst in got.values()), got

"""The teacher's log1p and expm1 stay exact near 0 (catalog/lowering.cc: Kahan's corrections).

log(1 + x) and exp(x) - 1 written out lose every digit as x nears 0 (x = 1e-7: 1 + x rounds
to 1 in float32); torch.log1p and torch.expm1 do not, and logsigmoid and the binary cross
entropy losses export to them. In the interpreter the emitted kernels must be within a few
float32 ulp of the float64 answer across magnitudes, and give torch's inf, -inf and NaN.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

from teach_tasks import task

from drtriton.teach import emit

VALUES = (
    "[1e-30, -1e-30, 1e-9, -1e-9, 1e-7, -1e-7, 3e-6, -3e-6, 1e-4, -1e-4, 0.01, -0.01, 0.3, "
    "-0.3, 0.9, -0.9, 1.5, 7.0, 30.0, 80.0, -20.0, -100.0, 0.0, -0.0]"
)
SPECIALS = "[float('inf'), float('-inf'), float('nan'), -1.0, -2.0, 100.0]"

PROBE = rf"""
import json, pathlib, sys
import torch
from drtriton.verify.task import import_file

folder = pathlib.Path(sys.argv[1])
x = torch.tensor({VALUES} + {SPECIALS}, dtype=torch.float32)
report = {{}}
for name in ("log1p", "expm1"):
    got = import_file(str(folder / (name + ".py")), name).triton_fused_operator(x)
    want, torch32 = getattr(torch, name)(x.double()), getattr(torch, name)(x)
    finite = torch.isfinite(want) & (want != 0) & torch.isfinite(torch32)
    rel = (got[finite].double() - want[finite]).abs() / want[finite].abs()
    special = ~torch.isfinite(torch32)
    report[name] = {{
        "worst_ulps": float(rel.max()) / 2.0**-24,
        "zeros_kept": bool(torch.equal(got[want == 0].double(), want[want == 0])),
        "specials_as_torch": bool(torch.equal(got[special].nan_to_num(0.0),
                                              torch32[special].nan_to_num(0.0))
                                  and torch.equal(got[special].isnan(), torch32[special].isnan())),
    }}
print(json.dumps(report))
"""


def test_log1p_and_expm1_are_exact_near_zero(
    tmp_path: pathlib.Path, interpreted_probe: Callable[[str, pathlib.Path], Any]
) -> None:
    for name in ("log1p", "expm1"):
        source = emit(task([f"t0 = torch.{name}(x0)"], "x0", "torch.rand(30)"))
        (tmp_path / f"{name}.py").write_text(source)
    got = interpreted_probe(PROBE, tmp_path)
    for name in ("log1p", "expm1"):
        # Written out, log(1 + x) at x = 1e-7 is 19% off (1 + x rounds to 1 + 1.19e-7).
        assert got[name]["worst_ulps"] < 8, got
        assert got[name]["zeros_kept"], got
        assert got[name]["specials_as_torch"], got


SMALL_PROBE = r"""
import json, pathlib, sys
import torch
import torch.nn.functional as F
from drtriton.verify.task import import_file

folder = pathlib.Path(sys.argv[1])
x = torch.tensor([-30.0, -20.0, -17.5, -1e-9, 1e-9, 3e-8, -0.03, 0.039, 0.5, 4.0, 25.0])
want = {"softplus": F.softplus, "tanh": torch.tanh, "mish": F.mish}
report = {}
for name, f in want.items():
    got = import_file(str(folder / (name + ".py")), name).triton_fused_operator(x).double()
    ref = f(x.double())
    report[name] = float(((got - ref).abs() / ref.abs()).max())
print(json.dumps(report))
"""


def test_softplus_tanh_and_mish_keep_tiny_values(
    tmp_path: pathlib.Path, interpreted_probe: Callable[[str, pathlib.Path], Any]
) -> None:
    """softplus is log1p(exp(x)) (written out, log(1 + exp(x)) is 0 below x = -17), and tanh
    near 0 its series (2 * sigmoid(2x) - 1 is 0 below |x| = 3e-8): mish(-20) = -4e-8 is a
    value a group norm over such rows divides by (catalog/lowering.cc)."""
    calls = {"softplus": "F.softplus(x0)", "tanh": "torch.tanh(x0)", "mish": "F.mish(x0)"}
    for name, call in calls.items():
        source = emit(task([f"t0 = {call}"], "x0", "torch.randn(11)"))
        (tmp_path / f"{name}.py").write_text(source)
    got = interpreted_probe(SMALL_PROBE, tmp_path)
    for name in calls:
        assert got[name] < 1e-5, got  # relative, every value (was 1.0 at the tiny ones)

"""Contraction operands with unaligned rows, copied into padded rows by the emitted wrapper.

Triton vectorizes a tile's loads only for row strides divisible by 16 elements
(core/codegen/heuristics.h, kRowAlignment), so the wrapper checks each operand that is a plain
read of a candidate input at run time and copies one with unit-stride rows of an unaligned
stride into a buffer of padded rows first (core/codegen/emit_repack.cc). Here the candidates
run in Triton's interpreter on CPU tensors (a child process with TRITON_INTERPRET=1), with
aligned, unaligned, sliced, transposed and permuted inputs, against torch in float64; each copy
kernel's launches are counted, so the run-time check is seen to copy exactly the operands it
should.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable
from typing import Any

import pytest
from teach_tasks import task

from drtriton.teach import emit
from drtriton.verify.static import check_source

# name -> (operator lines, parameters, get_inputs() shapes, the inputs the probe passes (an
# expression of torch), the copy kernels expected to launch).
CASES = {
    # K = 37 and N = 21: both row strides unaligned, both operands copied.
    "unaligned": (
        ["t0 = torch.matmul(x0, x1)"],
        "x0, x1",
        "torch.randn(40, 37), torch.randn(37, 21)",
        "[torch.randn(40, 37), torch.randn(37, 21)]",
        ["k0_x0_rows_kernel", "k0_x1_rows_kernel"],
    ),
    # Rows of 32 and 48: no check emitted (heuristics.cc), the candidate as before; a view into
    # a wider tensor (row stride 50) is read through its strides.
    "aligned": (
        ["t0 = torch.matmul(x0, x1)"],
        "x0, x1",
        "torch.randn(40, 32), torch.randn(32, 48)",
        "[torch.randn(40, 50)[:, :32], torch.randn(32, 48)]",
        [],
    ),
    # K = 37 padded in the example, so x0 is copied only where its stride says so: here its
    # rows are 48 apart already and only x1 (N = 21) is copied.
    "padded_input": (
        ["t0 = torch.matmul(x0, x1)"],
        "x0, x1",
        "torch.randn(40, 37), torch.randn(37, 21)",
        "[torch.randn(40, 48)[:, :37], torch.randn(37, 21)]",
        ["k0_x1_rows_kernel"],
    ),
    # A transposed x0 (strides (1, 40)) has no unit-stride rows: read through its strides as
    # before; x1 is copied.
    "transposed": (
        ["t0 = torch.matmul(x0, x1)"],
        "x0, x1",
        "torch.randn(37, 40), torch.randn(40, 21)",
        "[torch.randn(40, 37).t(), torch.randn(40, 21)]",
        ["k0_x1_rows_kernel"],
    ),
    # A column slice of a 40 x 50 tensor: unit stride, row stride 50, copied through its strides.
    "sliced": (
        ["t0 = torch.matmul(x0, x1)"],
        "x0, x1",
        "torch.randn(40, 37), torch.randn(37, 32)",
        "[torch.randn(40, 50)[:, :37], torch.randn(37, 32)]",
        ["k0_x0_rows_kernel"],
    ),
    # A batch permuted in front (strides (37, 111, 1)): rows decomposed over two dims.
    "bmm_permuted": (
        ["t0 = torch.bmm(x0, x1)"],
        "x0, x1",
        "torch.randn(3, 20, 37), torch.randn(3, 37, 18)",
        "[torch.randn(20, 3, 37).permute(1, 0, 2), torch.randn(3, 37, 18)]",
        ["k0_x0_rows_kernel", "k0_x1_rows_kernel"],
    ),
    # linear's 3-D input and its (N, K) weight, both K = 37, and a bias and relu epilogue.
    "linear_relu": (
        ["t0 = F.linear(x0, x1, x2)", "t1 = torch.relu(t0)"],
        "x0, x1, x2",
        "torch.randn(2, 10, 37), torch.randn(24, 37), torch.randn(24)",
        "[torch.randn(2, 10, 37), torch.randn(24, 37), torch.randn(24)]",
        ["k0_x0_rows_kernel", "k0_x1_rows_kernel"],
    ),
    # A generic-shape candidate (its sizes read at run time), run at other sizes than emitted.
    "generic_bmm": (
        ["t0 = torch.bmm(x0, x1)"],
        "x0, x1",
        "torch.randn(3, 20, 32), torch.randn(3, 32, 16)",
        "[torch.randn(2, 9, 45), torch.randn(2, 45, 33)]",
        ["k0_x0_rows_kernel", "k0_x1_rows_kernel"],
    ),
}
# Shape-specialized candidates copy only operands of at least 1M elements (heuristics.h,
# kRepackMinElements), too large for the interpreter's pace: every case but "aligned" (which
# checks that nothing is emitted) runs as a generic-shape candidate, whose run-time check and
# copy are the same code with the sizes read at run time.
GENERIC = set(CASES) - {"aligned"}

PROBE = r"""
import json, pathlib, sys
import torch
from drtriton.verify.task import import_file

folder = pathlib.Path(sys.argv[1])
cases = json.loads((folder / "cases.json").read_text())


class Counted:
    def __init__(self, kernel):
        self.kernel, self.launches = kernel, 0

    def __getitem__(self, grid):
        self.launches += 1
        return self.kernel[grid]


result = {}
for name, inputs_expr in cases.items():
    task = import_file(str(folder / f"task_{name}.py"), "task_" + name)
    cand = import_file(str(folder / f"cand_{name}.py"), "cand_" + name)
    counted = {}
    for attr in dir(cand):
        if attr.endswith("_rows_kernel"):
            counted[attr] = Counted(getattr(cand, attr))
            setattr(cand, attr, counted[attr])
    torch.manual_seed(0)
    inputs = eval(inputs_expr)
    out = cand.triton_fused_operator(*inputs)
    with torch.no_grad():
        ref64 = task.fused_operator(*[x.double() for x in inputs])
        ref32 = task.fused_operator(*inputs)
    result[name] = {
        "max_err": float((out.double() - ref64).abs().max()),
        "torch_max_err": float((ref32.double() - ref64).abs().max()),
        "close": bool(torch.allclose(out, ref32, atol=1e-4, rtol=1e-4)),
        "launched": sorted(k for k, c in counted.items() if c.launches),
    }
print(json.dumps(result))
"""


def _candidate(name: str) -> str:
    lines, args, shapes, _, _ = CASES[name]
    return emit(task(lines, args, shapes), generic_shapes=name in GENERIC)


@pytest.fixture(scope="module")
def probe(
    tmp_path_factory: pytest.TempPathFactory, interpreted_probe: Callable[[str, pathlib.Path], Any]
) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("repack_rows")
    for name, (lines, args, shapes, _, _) in CASES.items():
        (folder / f"task_{name}.py").write_text(task(lines, args, shapes))
        (folder / f"cand_{name}.py").write_text(_candidate(name))
    (folder / "cases.json").write_text(json.dumps({n: c[3] for n, c in CASES.items()}))
    return interpreted_probe(PROBE, folder)


def test_the_wrapper_checks_each_large_input_operand_at_run_time() -> None:
    lines, args, _, _, _ = CASES["unaligned"]
    text = emit(task(lines, args, "torch.randn(1024, 1037), torch.randn(1037, 1029)"))
    for x in ("x0", "x1"):
        assert f"k0_{x}_repack = {x}.stride(1) == 1 and {x}.stride(0) % 16 != 0" in text
        assert f"if k0_{x}_repack:\n        k0_{x}_rows_kernel[" in text
    # Allocated with the last row's padding (the copy writes zeros there), viewed at 1037.
    assert (
        "torch.empty_strided((1024, 1040), (1040, 1), device=x0.device, dtype=x0.dtype)[..., :1037]"
        in text
    )
    # The matmul masks x0's loads along K and x1's along N at the padded length where copied.
    launch = 'k0_matmul_kernel[lambda META: (triton.cdiv(1024, META["BLOCK_M"]) * '
    assert (
        launch
        + 'triton.cdiv(1029, META["BLOCK_N"]),)](\n        (1040 if k0_x0_repack else 1037), '
        "(1040 if k0_x1_repack else 1029), k0_x0_rows, k0_x0_rows.stride(0)" in text
    )
    # Under 1M elements an operand is read as it is: one more launch would cost more.
    small = emit(task(lines, args, CASES["unaligned"][2]))
    assert "_repack" not in small and "_rows" not in small
    # Aligned rows of a shape-specialized candidate emit no check (a contiguous input is aligned).
    assert "_repack" not in _candidate("aligned") and "_rows" not in _candidate("aligned")


def test_generic_candidates_check_every_input_operand() -> None:
    lines, args, shapes, _, _ = CASES["aligned"]
    text = emit(task(lines, args, shapes), generic_shapes=True)
    assert "k0_x0_repack = x0.stride(1) == 1 and x0.stride(0) % 16 != 0" in text
    assert "(x0_s1 + 15) // 16 * 16" in text


def test_candidates_pass_the_static_rules() -> None:
    for name in CASES:
        issues = check_source(_candidate(name), "triton_fused_operator")
        assert not issues, (name, issues)


def test_repacked_contractions_match_torch(probe: dict) -> None:
    for name, case in CASES.items():
        got = probe[name]
        assert got["close"], (name, got)
        # Exact fp32 products in the interpreter: within a few fp32 roundings of float64.
        assert got["max_err"] <= max(4 * got["torch_max_err"], 1e-5), (name, got)
        assert got["launched"] == sorted(case[4]), (name, got)

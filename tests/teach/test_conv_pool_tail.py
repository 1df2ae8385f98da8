"""A convolution's TMA kernel that computes the 2 x 2 pool reading its output (issue 20;
emit_contraction.cc ShiftedRowsPoolTma), run in Triton's interpreter (fp16).

A program takes 64 positions of two neighbouring output rows (two K loops), runs the
convolution's epilogue on each, pools their pairs of rows and of columns and runs the pool
group's epilogue on the pooled tile, which it stores: the convolution's full-size output is
never stored, and the pool group's own kernel runs only where the TMA kernel does not (the
pointer kernel's path: float32, or bf16 off a GPU). A child process (PROBE) runs each
candidate with the other path's launches off: the TMA kernel alone must compute the pooled
output in fp16.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

import pytest
from teach_tasks import DEVICE, task

from drtriton.teach import emit
from drtriton.verify import Options
from shared_verifier import verify

CASES = {
    # L2 35's form: subtract, hardswish, max pool, mish after.
    "max_pool": (
        [
            "t0 = F.conv2d(x0, x1, x2)",
            "t1 = torch.sub(t0, x3)",
            "t2 = F.hardswish(t1)",
            "t3 = F.max_pool2d(t2, 2)",
            "t4 = F.mish(t3)",
        ],
        "x0, x1, x2, x3",
        "torch.randn(8, 16, 32, 64), torch.randn(32, 16, 3, 3), torch.randn(32), torch.randn(1)",
    ),
    # L2 46's form: an average pool; 31 output rows (the last one dropped by the pool's floor).
    "avg_pool_odd_rows": (
        [
            "t0 = F.conv2d(x0, x1)",
            "t1 = torch.tanh(t0)",
            "t2 = F.avg_pool2d(t1, 2)",
        ],
        "x0, x1",
        "torch.randn(8, 16, 33, 64), torch.randn(24, 16, 3, 3)",
    ),
    # L2 10's form: a transposed convolution of stride 1 (padding 1: its copy is 34 x 66 a
    # sample), then hardtanh after the pool; the second block of 64 columns runs past the
    # grid's row into the next (masked: 32 outputs a row).
    "transposed_max_pool": (
        [
            "t0 = F.conv_transpose2d(x0, x1, x2, 1, 1)",
            "t1 = F.max_pool2d(t0, 2, 2)",
            "t2 = F.hardtanh(t1, -1.0, 1.0)",
        ],
        "x0, x1, x2",
        "torch.randn(16, 16, 32, 64), torch.randn(16, 24, 3, 3), torch.randn(24)",
    ),
    # 48 columns (46 outputs a row, a block of 64 past them).
    "avg_pool_narrow_rows": (
        ["t0 = F.conv2d(x0, x1)", "t1 = F.avg_pool2d(t0, 2)"],
        "x0, x1",
        "torch.randn(16, 16, 40, 48), torch.randn(16, 16, 3, 3)",
    ),
    # Padding 1 (the TMA kernel's copy is padded, 34 x 64 a sample), no epilogue.
    "max_pool_padded": (
        ["t0 = F.conv2d(x0, x1, None, 1, 1)", "t1 = F.max_pool2d(t0, 2, 2)"],
        "x0, x1",
        "torch.randn(8, 16, 32, 62), torch.randn(16, 16, 3, 3)",
    ),
}


POINTER_PATH = "    if not k0_tma:\n"
# The child, over the folder in sys.argv[1]: each candidate in fp16 on its task's inputs, the
# kernels it launched, its output's dtype and relative L2 error against the task in float64.
PROBE = r"""
import json, pathlib, sys
import torch
from drtriton.verify.task import import_file

folder = pathlib.Path(sys.argv[1])
result = {}
for task_path in sorted(folder.glob("task_*.py")):
    name = task_path.stem[len("task_"):]
    task = import_file(str(task_path), "task_" + name)
    torch.manual_seed(0)
    inputs = [x.half() for x in task.get_inputs()]
    with torch.no_grad():
        ref = task.fused_operator(*[x.double() for x in inputs])
    module = import_file(str(folder / f"cand_{name}.py"), "cand_" + name)
    launched = []
    for attr in dir(module):
        kernel = getattr(module, attr)
        if attr.endswith("_kernel") and hasattr(kernel, "run"):
            def counted(*args, _run=kernel.run, _name=attr, **kwargs):
                launched.append(_name)
                return _run(*args, **kwargs)
            kernel.run = counted
    out = module.triton_fused_operator(*inputs)
    err = ((out.double() - ref).norm() / ref.norm()).item()
    result[name] = {"launched": launched, "rel_l2": err, "dtype": str(out.dtype)}
print(json.dumps(result))
"""


@pytest.fixture(scope="module")
def probe(
    tmp_path_factory: pytest.TempPathFactory, interpreted_probe: Callable[[str, pathlib.Path], Any]
) -> dict[str, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("conv_pool_tail")
    for name, (lines, args, inputs) in CASES.items():
        source = task(lines, args, inputs)
        (folder / f"task_{name}.py").write_text(source)
        # The TMA kernel alone: the pointer kernel's path switched off.
        (folder / f"cand_{name}.py").write_text(
            emit(source).replace(POINTER_PATH, "    if False:\n")
        )
    return interpreted_probe(PROBE, folder)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_tma_kernel_alone_computes_the_pooled_output(
    probe: dict[str, dict[str, Any]], name: str
) -> None:
    row = probe[name]
    assert row["launched"][-1].endswith("_tma_kernel"), row
    assert not any("pool" in k for k in row["launched"]), row
    assert row["dtype"] == "torch.float16" and row["rel_l2"] < 2e-3, row


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_pool_group_runs_where_the_tma_kernel_does_not(name: str) -> None:
    source = task(*CASES[name])
    candidate = emit(source)
    assert "pid_i * 2 + 1" in candidate and "tl.split(tl.reshape(rows," in candidate
    launch = candidate[candidate.index("def triton_fused_operator") :]
    pool_launch = launch.index("_pool2d_kernel[")
    assert launch.rindex("if not k0_tma", 0, pool_launch) > launch.rindex(
        "if k0_tma:", 0, pool_launch
    )
    # The whole candidate, judged by the verifier: in fp16 the TMA kernel computes the pooled
    # output; in float32 the pointer kernel and the pool's own kernel do.
    for precision in ("fp16", "fp32"):
        opts = Options(device=DEVICE, precision=precision, input_seed=0, trials=1)
        assert verify(source, candidate, options=opts).correct, precision


def test_other_pools_keep_their_own_kernel() -> None:
    # A 3 x 3 window, and a pool of stride 1: the convolution stores its output as before.
    for pool in ("F.max_pool2d(t0, 3)", "F.avg_pool2d(t0, 2, 1)"):
        source = task(
            ["t0 = F.conv2d(x0, x1)", f"t1 = {pool}"],
            "x0, x1",
            "torch.randn(8, 16, 32, 64), torch.randn(16, 16, 3, 3)",
        )
        candidate = emit(source)
        assert "TensorDescriptor" in candidate and "pid_i * 2 + 1" not in candidate, pool

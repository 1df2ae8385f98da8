"""The cooperative kernel of softmax and the norms over long rows (core/codegen/rows_coop.cc):
each program loads one chunk of a row, publishes its statistics, waits for the row's other
chunks and writes its chunk from registers, so each element moves once each way.

On a GPU the wrapper launches it cooperatively with a grid of whole rows of resident programs;
elsewhere it launches the split pair (statistics kernel, output kernel: tests/teach/test_rows.py
judges that path with the verifier). Here the cooperative kernel itself runs in Triton's
interpreter with every program on a thread of its own (concurrent_interpreter.py), the wrapper
told it is on a GPU of a few SMs, so that a round of programs holds one or two rows and the
programs loop over the rest: its output is compared with float64 and with torch's float32, and
the split pair must not run. Cases: rows straddling no round, a partial last chunk, a chunk of
-inf and a row of -inf in a softmax, the norms with weights along R, per channel and per group,
batch statistics over channels, a producer recomputed and an epilogue fused.
"""

from __future__ import annotations

import pathlib
import re
from collections.abc import Callable
from typing import Any

import pytest
from teach_tasks import task

from drtriton.teach import emit

HERE = pathlib.Path(__file__).resolve().parent

# name -> (operator lines, parameters, inputs).  Rows of at least 65,536 elements (heuristics.h
# kCooperativeMinRow), chunks of 8192.
CASES = {
    # 3 rows of 9 chunks (the last 4,464 long).
    "softmax": (["t0 = torch.softmax(x0, -1)"], "x0", "torch.randn(3, 70000)"),
    "log_softmax_of_exp_then_sigmoid": (
        ["t0 = torch.exp(x0)", "t1 = torch.log_softmax(t0, 1)", "t2 = torch.sigmoid(t1)"],
        "x0",
        "torch.randn(2, 70000)",
    ),
    "layer_norm": (
        ["t0 = F.layer_norm(x0, [7, 10000], x1, x2)"],
        "x0, x1, x2",
        "torch.randn(2, 7, 10000), torch.randn(7, 10000), torch.randn(7, 10000)",
    ),
    # Groups of 2 channels x 37,500: blocks cross channels (weights gathered per element).
    "group_norm": (
        ["t0 = F.group_norm(x0, 2, x1, x2)"],
        "x0, x1, x2",
        "torch.randn(1, 4, 150, 250), torch.randn(4), torch.randn(4)",
    ),
    "instance_norm": (
        ["t0 = F.instance_norm(x0, None, None, x1, x2)"],
        "x0, x1, x2",
        "torch.randn(1, 3, 300, 250), torch.randn(3), torch.randn(3)",
    ),
    # Rows are channels over (sample, position): 2 channels of 72,000.
    "batch_norm_train": (
        ["t0 = torch.batch_norm(x0, x1, x2, None, None, True, 0.1, 1e-05, True)"],
        "x0, x1, x2",
        "torch.randn(4, 2, 150, 120), torch.randn(2), torch.randn(2)",
    ),
}
# Inputs the task format cannot build (constructors only), passed to the candidate directly:
# softmax's row 1 has a whole chunk of -inf (its outputs 0, the rest exact) and row 2 is all
# -inf (NaN, as torch); group norm's inputs sit 3 away from 0 (the chunks' means combine).
SPECIAL = {
    "softmax": "x = torch.randn(3, 70000); x[1, 8192:16384] = float('-inf'); "
    "x[2] = float('-inf'); inputs = [x]",
    "group_norm": "inputs = [torch.randn(1, 4, 150, 250) + 3.0, torch.randn(4), torch.randn(4)]",
}

# The wrapper as on a GPU of `sms` SMs (2 programs each), whatever device the tensors are on.
GPU_SIZING = re.compile(
    r"torch\.cuda\.get_device_properties\((\w+)\.device\)\.multi_processor_count"
)

PROBE = r"""
import importlib.util, json, pathlib, sys
import torch
folder = pathlib.Path(sys.argv[1])
sys.path.insert(0, (folder / "helper_dir.txt").read_text())
from concurrent_interpreter import concurrent_programs
from drtriton.verify.task import import_file

result = {}
for task_path in sorted(folder.glob("task_*.py")):
    name = task_path.stem[len("task_"):]
    task = import_file(str(task_path), "task_" + name)
    torch.manual_seed(0)
    inputs = task.get_inputs()
    special = folder / f"special_{name}.txt"
    if special.exists():
        scope = {"torch": torch}
        exec(special.read_text(), scope)
        inputs = scope["inputs"]
    with torch.no_grad():
        ref64 = task.fused_operator(*[x.double() for x in inputs])
        ref32 = task.fused_operator(*inputs)
    module = import_file(str(folder / f"cand_{name}.py"), "cand_" + name)
    launched = []
    for attr in dir(module):
        kernel = getattr(module, attr)
        if attr.endswith("_kernel") and hasattr(kernel, "run"):
            run = kernel.run
            def counted(*args, _run=run, _name=attr, **kwargs):
                launched.append(_name)
                return _run(*args, **kwargs)
            kernel.run = counted
    with concurrent_programs():
        out = module.triton_fused_operator(*inputs)
    finite = torch.isfinite(ref64)
    err = ((out.double() - ref64)[finite].norm() / ref64[finite].norm()).item()
    result[name] = {
        "launched": launched,
        "rel_l2": err,
        "like_fp32": bool(torch.allclose(out, ref32, rtol=1e-5, atol=1e-5, equal_nan=True)),
        "nan_where_torch": bool(torch.equal(out.isnan(), ref32.isnan())),
    }
print(json.dumps(result))
"""


def on_a_small_gpu(candidate: str, sms: int) -> str:
    """The candidate's wrapper sizing its cooperative grid as on a GPU of `sms` SMs, the
    tensors' device taken for one."""
    sized, n = GPU_SIZING.subn(str(sms), candidate)
    assert n == 1, candidate
    return sized.replace('.device.type == "cuda" else 0', '.device.type == "cpu" else 0')


def split_of(candidate: str) -> int:
    return int(re.search(r"_coop = \w+_programs >= (\d+)", candidate).group(1))


@pytest.fixture(scope="module")
def probe(
    tmp_path_factory: pytest.TempPathFactory, interpreted_probe: Callable[[str, pathlib.Path], Any]
) -> dict[str, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("cooperative_rows")
    (folder / "helper_dir.txt").write_text(str(HERE))
    for name, (lines, args, inputs) in CASES.items():
        source = task(lines, args, inputs)
        candidate = emit(source)
        assert "_coop_kernel[(" in candidate and "launch_cooperative_grid=True" in candidate
        # Rounds of programs hold whole rows: 2 x split programs (two rows at once) for softmax,
        # one row a round elsewhere, so the programs loop over items.
        split = split_of(candidate)
        sms = split if name == "softmax" else (split + 1) // 2
        (folder / f"task_{name}.py").write_text(source)
        (folder / f"cand_{name}.py").write_text(on_a_small_gpu(candidate, sms))
        if name in SPECIAL:
            (folder / f"special_{name}.txt").write_text(SPECIAL[name])
    return interpreted_probe(PROBE, folder)


@pytest.mark.parametrize("name", sorted(CASES))
def test_cooperative_kernel_alone_matches_torch(
    probe: dict[str, dict[str, Any]], name: str
) -> None:
    row = probe[name]
    assert len(row["launched"]) == 1 and row["launched"][0].endswith("_coop_kernel"), row
    assert row["rel_l2"] < 1e-6, row
    assert row["like_fp32"] and row["nan_where_torch"], row


def test_the_cpu_wrapper_takes_the_split_pair() -> None:
    candidate = emit(task(*CASES["softmax"]))
    assert 'if x0.device.type == "cuda" else 0' in candidate
    assert "if not k0_coop:\n        k0_softmax_stats_kernel[(27,)](" in candidate

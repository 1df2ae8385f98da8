"""Fragment enumeration, the cover DP and stitching through the Python bindings (no verifier)."""

from __future__ import annotations

import math
import pathlib

import pytest

from drtriton import _core, parse
from drtriton.search.stitch import prefixed, stitch

TASK = (
    "import torch\nimport torch.nn.functional as F\n\n"
    "def fused_operator(x0, x1):\n"
    "    t0 = torch.relu(x0)\n"
    "    t1 = torch.add(t0, x1)\n"
    "    t2 = torch.log(t1)\n"
    "    t3 = torch.mul(t2, t0)\n"
    "    return t3\n\n"
    "def get_inputs():\n    return [torch.randn(4, 8), torch.randn(4, 8)]\n"
)


def test_fragments_are_tasks_with_external_inputs_and_live_outputs():
    fragments = _core.fragments(TASK, 5)
    assert len(fragments) == 4 + 3 + 2 + 1
    by_range = {(f["start"], f["end"]): f for f in fragments}
    middle = by_range[(1, 3)]
    assert middle["inputs"] == ["t0", "x1"] and middle["outputs"] == ["t2"]
    assert parse(middle["source"]).ops == ["add", "log"]
    # log's input is an intermediate here; alone it is a parameter, created positive.
    assert "torch.rand(4, 8)" in by_range[(2, 3)]["source"]
    assert by_range[(0, 2)]["outputs"] == ["t0", "t1"]  # t0 is read again by mul
    assert by_range[(0, 4)]["bytes"] < by_range[(0, 4)]["unfused_bytes"]
    # Runs of 1 and 2, and the whole task (longer than 2: fragments.h, kWholeProgramMaxOps).
    short_runs = _core.fragments(TASK, 2)
    assert len(short_runs) == 4 + 3 + 1
    assert (short_runs[-1]["start"], short_runs[-1]["end"]) == (0, 4)
    assert len(_core.fragments(TASK, 5, [False, True, False, False])) == 1 + 3


@pytest.mark.parametrize(
    ("costs", "expected"),
    [
        ({(0, 4): 1.0, (0, 2): 1.0, (2, 4): 1.0}, [(0, 4, True)]),
        ({(0, 4): 9.0, (0, 2): 1.0, (2, 4): 1.0}, [(0, 2, True), (2, 4, True)]),
        ({(0, 4): math.inf}, [(0, 1, False), (1, 2, False), (2, 3, False), (3, 4, False)]),
        ({(1, 3): 0.5}, [(0, 1, False), (1, 3, True), (3, 4, False)]),
    ],
)
def test_best_cover(costs, expected):
    cover = _core.best_cover(4, costs, [1.0, 1.0, 1.0, 1.0])
    assert [(s["start"], s["end"], s["fused"]) for s in cover] == expected


def test_best_cover_rejects_mismatched_costs():
    with pytest.raises(ValueError):
        _core.best_cover(3, {}, [1.0])


def test_plan_and_stitch():
    cover = [
        {"start": 0, "end": 2, "fused": True},
        {"start": 2, "end": 3, "fused": False},
        {"start": 3, "end": 4, "fused": True},
    ]
    plan = _core.plan_hybrid(TASK, cover)
    assert plan["entry"].splitlines() == [
        "def triton_fused_operator(x0, x1):",
        "    t0, t1 = fragment_0(x0, x1)",
        "    t2 = torch.log(t1)",
        "    t3 = fragment_1(t2, t0)",
        "    return t3",
    ]
    kernel = "import triton\n\ndef helper(a):\n    return a\n\ndef triton_fused_operator(a, b):\n    return helper(a), b\n"
    imports, body = prefixed(kernel, "f0_")
    assert imports == ["import triton"]
    assert "def f0_helper(a)" in body and "return (f0_helper(a), b)" in body
    other = kernel.replace("return helper(a), b", "return b, helper(a)")
    hybrid = stitch(plan["entry"], [kernel, other])
    assert "t0, t1 = f0_triton_fused_operator(x0, x1)" in hybrid
    assert "t3 = f1_triton_fused_operator(t2, t0)" in hybrid
    namespace: dict = {}
    exec(compile(hybrid, "<hybrid>", "exec"), namespace)
    assert "f1_helper" in namespace
    # The same candidate at two places is emitted once and called from both.
    hybrid = stitch(plan["entry"], [kernel, kernel])
    assert "t3 = f0_triton_fused_operator(t2, t0)" in hybrid
    assert hybrid.count("# fragment ") == 1 and "f1_" not in hybrid


def test_the_hybrid_probe_runs_the_kept_lines_in_the_precision_modes_dtype(monkeypatch):
    # A kept line's dispatch can depend on the dtype (optimize/allowed.py): the probe's
    # floating inputs are the verifier's mode's.
    import torch

    from drtriton.search import hybrid
    from drtriton.verify.poison import DispatchRecord

    dtypes: set = set()

    class Spy(DispatchRecord):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            dtypes.update(a.dtype for a in args if isinstance(a, torch.Tensor))
            return super().__torch_dispatch__(func, types, args, kwargs)

    monkeypatch.setattr(hybrid, "DispatchRecord", Spy)
    cover = [{"start": 0, "end": 2, "fused": True}, {"start": 2, "end": 4, "fused": False}]
    plan = _core.plan_hybrid(TASK, cover)
    assert "log" in hybrid.kept_packets(TASK, plan, "cpu", "fp16")
    assert dtypes == {torch.float16}


def test_kept_lines_are_probed_in_the_layouts_the_hybrid_gives_them():
    # A kept reshape of a kept transpose copies (aten.clone): probed alone on contiguous zeros
    # it would only view, and the hybrid would be rejected for the clone it runs.  A fused
    # fragment's output is contiguous, so a reshape of it alone does not copy.
    from drtriton.search import hybrid

    task = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "def fused_operator(x0):\n"
        "    t0 = torch.relu(x0)\n"
        "    t1 = torch.transpose(t0, 0, 1)\n"
        "    t2 = torch.reshape(t1, [32])\n"
        "    t3 = torch.exp(t2)\n"
        "    return t3\n\n"
        "def get_inputs():\n    return [torch.randn(4, 8)]\n"
    )
    kept_transpose = [
        {"start": 0, "end": 1, "fused": True},
        {"start": 1, "end": 2, "fused": False},
        {"start": 2, "end": 3, "fused": False},
        {"start": 3, "end": 4, "fused": True},
    ]
    plan = _core.plan_hybrid(task, kept_transpose)
    assert "clone" in hybrid.kept_packets(task, plan, "cpu")
    fused_transpose = [
        {"start": 0, "end": 2, "fused": True},
        {"start": 2, "end": 3, "fused": False},
        {"start": 3, "end": 4, "fused": True},
    ]
    plan = _core.plan_hybrid(task, fused_transpose)
    assert "clone" not in hybrid.kept_packets(task, plan, "cpu")


# torch.cat([x0, relu(x1), x2], 1) as the frontend spells it (frontend/aten.py _cat), then exp.
CAT = (
    "import torch\nimport torch.nn.functional as F\n\n"
    "def fused_operator(x0, x1, x2):\n"
    "    t0 = torch.relu(x1)\n"
    "    t1 = F.pad(x0, [0, 0, 0, 4])\n"
    "    t2 = F.pad(t0, [0, 0, 2, 2])\n"
    "    t3 = torch.add(t1, t2)\n"
    "    t4 = F.pad(x2, [0, 0, 4, 0])\n"
    "    t5 = torch.add(t3, t4)\n"
    "    t6 = torch.exp(t5)\n"
    "    return t6\n\n"
    "def get_inputs():\n"
    "    return [torch.randn(3, 2, 5), torch.randn(3, 2, 5), torch.randn(3, 2, 5)]\n"
)


def test_a_kept_concatenation_is_one_cat_with_the_lines_values():
    """Left in PyTorch, the padded parts and their sum are one torch.cat line (the C++
    planner's padded_sums.h), which computes what those lines do and dispatches aten.cat."""
    import torch
    import torch.nn.functional as F

    from drtriton.search import hybrid

    kept = [{"start": i, "end": i + 1, "fused": False} for i in range(1, 6)]
    cover = [{"start": 0, "end": 1, "fused": True}, *kept, {"start": 6, "end": 7, "fused": True}]
    plan = _core.plan_hybrid(CAT, cover)
    lines = [s["torch_line"] for s in plan["segments"] if not s["fused"]]
    assert lines == ["t5 = torch.cat([x0, t0, x2], 1)"]
    assert "t5 = torch.cat([x0, t0, x2], 1)" in plan["entry"]
    packets = hybrid.kept_packets(CAT, plan, "cpu")
    assert "cat" in packets and "constant_pad_nd" not in packets and "add" not in packets
    values = {name: torch.randn(3, 2, 5) for name in ("x0", "x2")}
    values["t0"] = torch.relu(torch.randn(3, 2, 5))
    program = dict(values)
    for line in CAT.splitlines()[5:10]:  # t1 .. t5, the program's own lines
        exec(line.strip(), {"torch": torch, "F": F}, program)
    exec(lines[0], {"torch": torch, "F": F}, values)
    assert torch.equal(values["t5"], program["t5"])


# KernelBench L2 14's run: the weight's transpose feeds the product.
TRANSPOSED = (
    "import torch\nimport torch.nn.functional as F\n\n"
    "def fused_operator(x0, x1):\n"
    "    t0 = torch.transpose(x1, 0, 1)\n"
    "    t1 = torch.matmul(x0, t0)\n"
    "    t2 = torch.sum(t1, 1, True)\n"
    "    return t2\n\n"
    "def get_inputs():\n    return [torch.randn(4, 8), torch.randn(6, 8)]\n"
)


def test_no_fused_fragment_reads_a_view_pytorch_reorders():
    """Verified on a contiguous input, such a fragment would read the strided view in ModelNew;
    fragments that hold the transpose read the stored weight through it, and stay."""
    from drtriton.search.search import _fusable

    fragments = _core.fragments(TRANSPOSED, 5)
    kept = {(f["start"], f["end"]) for f in _fusable(TRANSPOSED, fragments)}
    assert kept == {(0, 1), (0, 2), (0, 3), (2, 3)}
    assert {(f["start"], f["end"]) for f in fragments} - kept == {(1, 2), (1, 3)}


def test_the_help_states_the_cores_whole_program_length() -> None:
    # --help runs without the core, so the CLI states the number itself: the core's must match.
    from drtriton.evaluate import cli as eval_cli
    from drtriton.optimize import cli as optimize_cli

    stated = f"at most {_core.whole_program_max_ops} operators is also tried whole"
    for module in (eval_cli, optimize_cli):
        text = " ".join(pathlib.Path(module.__file__).read_text().replace('"', "").split())
        assert stated in text, module.__name__

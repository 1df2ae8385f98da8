"""Calibrated bounds (search.lazy.Calibration): after a class of fragment has been measured,
its later bounds are scaled by how far the policy's kernels sat above theirs, so hopeless
fragments of later runs are not verified.  A fake judge stands in for the GPU verifier."""

from __future__ import annotations

import math
from collections.abc import Sequence

from drtriton import _core
from drtriton.search import lazy
from drtriton.search.search import SearchConfig, VerdictCache, _search_lazy

TASK = (
    "import torch\nimport torch.nn.functional as F\n\n"
    "def fused_operator(x0, x1):\n    t0 = F.conv2d(x0, x1)\n    t1 = torch.relu(t0)\n"
    "    return t1\n\ndef get_inputs():\n    return [torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3)]\n"
)


class OneCandidate:
    def candidates(self, task_source: str, k: int, amplified: Sequence[str] = ()) -> list[str]:
        return ["# " + task_source.splitlines()[3]]


def _slow_convs(asked: list[str]):
    """Convolutions run 20x above their bound (the teacher's on the H200), the rest 1.2x."""

    def judge(task: str, candidate: str) -> dict:
        asked.append(task)
        fragment = {"source": task, "bytes": _core.parse(task)[1]["bytes"]}
        slow = 20.0 if lazy.fragment_class(fragment) == "conv" else 1.2
        ms = slow * lazy.lower_bound_ms(fragment)
        return {"correct": True, "status": "correct", "time_ms": ms, "eager_ms": 1.0}

    return judge


def _search(calibration: lazy.Calibration, asked: list[str]) -> list[tuple[int, int, bool]]:
    fragments = list(_core.fragments(TASK, 5))
    op_costs = [0.05, 0.02]  # eager: the conv, the relu
    _, cover = _search_lazy(fragments, 2, op_costs, OneCandidate(), SearchConfig(device="cuda"),
                            VerdictCache(), _slow_convs(asked), calibration)  # fmt: skip
    return [(c["start"], c["end"], c["fused"]) for c in cover]


def test_fragment_classes() -> None:
    by_ops = {tuple(_core.parse(f["source"])[1]["ops"]): lazy.fragment_class(f)
              for f in _core.fragments(TASK, 5)}  # fmt: skip
    assert by_ops == {("conv2d",): "conv", ("relu",): "memory", ("conv2d", "relu"): "conv"}


def _class_of(task: str, ops: tuple[str, ...], precision: str = "fp32") -> str:
    fragment = next(f for f in _core.fragments(task, 5)
                    if tuple(_core.parse(f["source"])[1]["ops"]) == ops)  # fmt: skip
    return lazy.calibration_class(fragment, precision)


def test_calibration_classes_name_the_operator_and_what_bounds_it() -> None:
    """A conv2d of 64 to 128 channels (KernelBench L2 31's, compute-bound) is not priced by a
    conv3d of 3 channels (memory-bound), nor by a conv2d that is memory-bound."""

    def conv(line: str, inputs: str) -> str:
        return TASK.replace("t0 = F.conv2d(x0, x1)", line).replace(
            "[torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3)]", inputs
        )

    heavy = conv(
        "t0 = F.conv2d(x0, x1)", "[torch.randn(128, 64, 128, 128), torch.randn(128, 64, 3, 3)]"
    )
    light = conv(
        "t0 = F.conv2d(x0, x1)", "[torch.randn(128, 3, 128, 128), torch.randn(4, 3, 1, 1)]"
    )
    volume = conv(
        "t0 = F.conv3d(x0, x1)", "[torch.randn(16, 3, 16, 64, 64), torch.randn(16, 3, 3, 3, 3)]"
    )
    assert _class_of(heavy, ("conv2d", "relu"), "bf16") == "conv2d/flops/tma"
    assert _class_of(heavy, ("conv2d", "relu"), "fp32") == "conv2d/flops"  # no TMA kernel
    assert _class_of(light, ("conv2d", "relu"), "bf16") == "conv2d/bytes"  # 3 channels
    assert _class_of(volume, ("conv3d",), "bf16").startswith("conv3d/")
    assert _class_of(heavy, ("relu",), "bf16") == "memory"


def test_a_matrix_vector_product_is_not_priced_by_a_gemm() -> None:
    """The teacher's narrow path (no tl.dot) has a class of its own: on the H100 in bf16, a
    bytes-bound small-K GEMM's ratio kept KernelBench L1 4's matrix-vector product unverified."""

    def product(line: str, inputs: str) -> str:
        return (TASK.replace("t0 = F.conv2d(x0, x1)", line)
                .replace("[torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3)]", inputs))  # fmt: skip

    matvec = product("t0 = torch.matmul(x0, x1)", "[torch.randn(256, 4096), torch.randn(4096, 1)]")
    rowvec = product("t0 = torch.matmul(x0, x1)", "[torch.randn(2, 4096), torch.randn(4096, 512)]")
    small_k = product("t0 = torch.matmul(x0, x1)", "[torch.randn(4096, 32), torch.randn(32, 4096)]")
    linear = product("t0 = F.linear(x0, x1)", "[torch.randn(8, 64, 256), torch.randn(3, 256)]")
    assert _class_of(matvec, ("matmul", "relu"), "bf16") == "matmul/narrow"
    assert _class_of(rowvec, ("matmul",), "bf16") == "matmul/narrow"
    assert _class_of(small_k, ("matmul",), "bf16") == "matmul/bytes/tma"
    assert _class_of(small_k, ("matmul",), "fp32") == "matmul/bytes"
    assert _class_of(linear, ("linear", "relu"), "bf16") == "linear/narrow"
    assert _class_of(linear.replace("torch.randn(3, 256)", "torch.randn(64, 256)"),
                     ("linear",), "fp32") == "linear/bytes"  # fmt: skip


def test_a_measured_class_prunes_its_fragments_in_later_runs() -> None:
    calibration = lazy.Calibration()
    first: list[str] = []
    cover = _search(calibration, first)
    assert any("conv2d" in t for t in first)  # unknown efficiency: the optimistic bound wins
    assert cover == [(0, 1, False), (1, 2, True)]
    conv = next(k for k in calibration.ratios if k.startswith("conv2d/"))
    assert calibration.ratios[conv] >= 19.0 and math.isclose(calibration.ratios["memory"], 1.2)
    second: list[str] = []
    assert _search(calibration, second) == cover
    assert not any("conv2d" in t for t in second)  # 20x its bound cannot beat eager's 0.05 ms


def test_scale_never_shrinks_a_bound() -> None:
    calibration = lazy.Calibration()
    calibration.record("memory", 0.5, 1.0)  # faster than the bound: timing noise
    calibration.record("conv", math.inf, 1.0)  # no correct candidate: nothing learned
    assert calibration.scale("memory") == 1.0 and calibration.scale("conv") == 1.0


def test_a_shared_file_carries_the_ratios_to_other_optimizations(tmp_path) -> None:
    path = str(tmp_path / "calibration.json")
    conv = _class_of(TASK, ("conv2d",))
    first = lazy.Calibration(path=path)
    first.record(conv, 20.0, 1.0)
    later = lazy.Calibration(path=path)  # another problem's process, started afterwards
    later.refresh()
    assert later.scale(conv) == 20.0
    later.record(conv, 30.0, 1.0)  # worse: the file keeps the best
    first.record("memory", 2.0, 1.0)
    third = lazy.Calibration(path=path)
    third.refresh()
    assert third.ratios == {conv: 20.0, "memory": 2.0}
    asked: list[str] = []
    _search(third, asked)
    assert not any("conv2d" in t for t in asked)  # pruned by what the others measured


def test_a_missing_or_broken_file_is_no_calibration(tmp_path) -> None:
    broken = tmp_path / "calibration.json"
    broken.write_text("{not json")
    calibration = lazy.Calibration(path=str(broken))
    calibration.refresh()
    assert calibration.ratios == {}
    calibration.record("conv", 4.0, 1.0)  # rewrites it whole
    assert lazy.Calibration(path=str(broken)).scale("conv") == 1.0  # not refreshed yet
    fresh = lazy.Calibration(path=str(broken))
    fresh.refresh()
    assert fresh.scale("conv") == 4.0

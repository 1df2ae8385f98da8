"""verify-batch's scheduling: processes per device and GPU-memory admission (verify/batch.py)."""

from __future__ import annotations

from typing import Any

import pytest

from drtriton.evaluate import memory
from drtriton.verify.batch import pool_slots, schedule


def test_pool_slots_split_workers_over_gpus():
    assert pool_slots(6, 0) == {"cpu": 6}
    assert pool_slots(6, 1) == {"cuda:0": 6}
    assert pool_slots(7, 2) == {"cuda:0": 4, "cuda:1": 3}
    assert pool_slots(1, 2) == {"cuda:0": 1, "cuda:1": 1}  # every GPU gets a process


class Recorder:
    """A submit that finishes each record at once and notes what was held on its device."""

    def __init__(self, admission: memory.Admission) -> None:
        self.admission = admission
        self.held_at_start: list[int] = []
        self.order: list[str] = []

    def __call__(self, device: str, record: dict[str, Any], done: Any) -> None:
        self.held_at_start.append(sum(self.admission.held[device]))
        self.order.append(record["id"])
        done(record.get("raise") or f"{record['id']}\n")


def records(*needs: int) -> list[dict[str, Any]]:
    return [{"id": f"p{i}", "need": need} for i, need in enumerate(needs)]


def test_pairs_start_only_while_their_estimates_fit():
    admission = memory.Admission({"cuda:0": 100}, lambda r: r["need"])
    submit = Recorder(admission)
    lines = list(schedule(records(60, 60, 30, 30), {"cuda:0": 4}, admission, submit))
    assert sorted(lines) == ["p0\n", "p1\n", "p2\n", "p3\n"]
    # p0 alone (60), then p2 beside it (90); p1 and p3 wait although slots are free
    assert submit.order[:2] == ["p0", "p2"]
    assert max(submit.held_at_start) <= 100
    assert admission.held["cuda:0"] == []  # every estimate released


def test_an_idle_gpu_takes_a_pair_over_its_budget():
    admission = memory.Admission({"cuda:0": 100}, lambda r: r["need"])
    submit = Recorder(admission)
    assert list(schedule(records(500, 10), {"cuda:0": 2}, admission, submit)) == ["p0\n", "p1\n"]


def test_slots_bound_concurrency_without_a_budget():
    admission = memory.Admission({}, lambda r: r["need"])  # the CPU: no memory constraint
    submit = Recorder(admission)
    consumed, in_flight = 0, []
    original = submit.__call__

    def counting(device: str, record: dict[str, Any], done: Any) -> None:
        in_flight.append(len(submit.order) + 1 - consumed)
        original(device, record, done)

    for _line in schedule(records(1, 1, 1, 1, 1), {"cpu": 2}, admission, counting):
        consumed += 1
    assert consumed == 5
    assert max(in_flight) == 2


def test_a_pool_exception_is_raised():
    admission = memory.Admission({}, lambda r: 0)
    submit = Recorder(admission)
    recs = [{"id": "a", "raise": RuntimeError("sandbox cannot start")}]
    with pytest.raises(RuntimeError, match="sandbox"):
        list(schedule(recs, {"cpu": 1}, admission, submit))


def test_footprint_counts_the_timed_sets():
    # 1.75 GB of input and as much output, timed over four sets: KernelBench L1 34's case
    code = (
        "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
        "        return x * 2\n"
        "def get_inputs():\n    return [torch.randn(470, 1000, 1000)]\n"
        "def get_init_inputs():\n    return []\n"
    )
    data = 470 * 1000 * 1000 * 4
    estimate = memory.footprint(code, trials=5)
    sets = min(5, (8 << 30) // data)
    assert estimate == 2 * sets * data + memory.IO_COPIES * 2 * data
    assert estimate > memory.COPIES * data


def test_a_functional_task_has_a_footprint():
    # verify-batch's pairs are functional programs: read on meta like a KernelBench module
    code = (
        "import torch\n\ndef fused_operator(x0):\n    return torch.relu(x0)\n\n"
        "def get_inputs():\n    return [torch.randn(1024, 1024)]\n"
    )
    sizes = memory.problem_bytes(code)
    assert (sizes.data, sizes.outputs) == (4 << 20, 4 << 20)
    assert memory.footprint(code) > 0

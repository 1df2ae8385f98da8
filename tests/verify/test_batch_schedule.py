"""verify-batch's scheduling: processes per device and footprints of its pairs (verify/batch.py;
the admitted loop itself is tested in tests/evaluate/test_scheduler.py)."""

from __future__ import annotations

from drtriton.evaluate import memory
from drtriton.verify.batch import pool_slots


def test_pool_slots_split_workers_over_gpus():
    assert pool_slots(6, 0) == {"cpu": 6}
    assert pool_slots(6, 1) == {"cuda:0": 6}
    assert pool_slots(7, 2) == {"cuda:0": 4, "cuda:1": 3}
    assert pool_slots(1, 2) == {"cuda:0": 1, "cuda:1": 1}  # every GPU gets a process


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

"""GPU memory admission for the KernelBench evaluation (evaluate/memory.py)."""

from __future__ import annotations

from drtriton.evaluate.memory import (
    COPIES,
    IO_COPIES,
    Admission,
    data_bytes,
    footprint,
    problem_bytes,
)

BIG = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)

    def forward(self, x):
        return self.fc(x)

SCALE = torch.randn(4096, 4096)  # module-level tensors are shapes too

def get_inputs():
    return [torch.rand(1024, 1024, 256)]

def get_init_inputs():
    return [256]
"""


def test_bytes_are_read_on_the_meta_device() -> None:
    # 1 GB of input and a 256x256 linear: nothing of it is allocated to find out.
    params = (256 * 256 + 256) * 4
    assert data_bytes(BIG) == 1024 * 1024 * 256 * 4 + params
    # five timed sets of 1 GB and their clones outweigh COPIES x the data
    sizes = problem_bytes(BIG)
    assert footprint(BIG) == 2 * 5 * sizes.data + IO_COPIES * sizes.moved
    assert footprint(BIG) > COPIES * sizes.data
    assert footprint(BIG, trials=1) == 2 * sizes.data + IO_COPIES * sizes.moved


# A product whose output dwarfs its inputs (KernelBench L1 7's shape, smaller): 2 x 4096 x 64
# floats in, 4096 x 4096 out.
WIDE_OUTPUT = """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, a, b):
        return a @ b

def get_inputs():
    return [torch.randn(4096, 64), torch.randn(64, 4096)]

def get_init_inputs():
    return []
"""

# A forward that reads a value (data-dependent): no meta run, so no output bytes.
READS_A_VALUE = """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * float(x.sum())

def get_inputs():
    return [torch.randn(1000)]

def get_init_inputs():
    return []
"""


def test_outputs_are_read_on_the_meta_device_too() -> None:
    sizes = problem_bytes(BIG)
    assert sizes.outputs == 1024 * 1024 * 256 * 4
    assert sizes.moved == sizes.data + sizes.outputs
    wide = problem_bytes(WIDE_OUTPUT)
    assert (wide.data, wide.outputs) == (2 * 4096 * 64 * 4, 4096 * 4096 * 4)
    # The output term decides where the output dwarfs the inputs ...
    assert footprint(WIDE_OUTPUT) == 2 * 5 * wide.data + IO_COPIES * wide.moved
    assert footprint(WIDE_OUTPUT) > COPIES * wide.data
    # ... and no estimate is lower than the inputs-only one.
    assert footprint(BIG) >= COPIES * sizes.data


def test_a_forward_that_cannot_run_on_meta_counts_its_inputs_only() -> None:
    sizes = problem_bytes(READS_A_VALUE)
    assert (sizes.data, sizes.outputs) == (1000 * 4, 0)
    assert footprint(READS_A_VALUE, trials=1) == COPIES * 1000 * 4


def test_a_problem_that_cannot_be_built_counts_as_zero() -> None:
    assert data_bytes("def get_inputs():\n    return []\n") == 0
    assert data_bytes("this is not python") == 0


def _admission(need: dict[str, int], budget: int = 100) -> Admission:
    return Admission({"cuda:0": budget, "cuda:1": budget}, lambda p: need[p["name"]])


def test_problems_start_while_their_estimates_fit() -> None:
    need = {"a": 60, "b": 50, "c": 30}
    adm = _admission(need)
    queue = [{"name": n} for n in ("a", "b", "c")]
    assert adm.pick(queue, "cuda:0") == 0
    est_a = adm.start(queue.pop(0), "cuda:0")
    # b (50) does not fit beside a (60) within 100; c (30) does and goes first.
    assert adm.pick(queue, "cuda:0") == 1
    est_c = adm.start(queue.pop(1), "cuda:0")
    assert adm.pick(queue, "cuda:0") is None
    # The other GPU is idle: it takes b.
    assert adm.pick(queue, "cuda:1") == 0
    adm.finish("cuda:0", est_a)
    adm.finish("cuda:0", est_c)
    assert adm.held["cuda:0"] == []


def test_an_idle_gpu_takes_a_problem_larger_than_its_budget() -> None:
    adm = _admission({"huge": 500, "small": 1})
    queue = [{"name": "huge"}, {"name": "small"}]
    assert adm.pick(queue, "cuda:0") == 0
    adm.start(queue.pop(0), "cuda:0")
    assert adm.pick(queue, "cuda:0") is None  # nothing beside it


def test_no_budget_means_no_constraint() -> None:
    adm = Admission({}, lambda p: 10**15)
    queue = [{"name": "x"}, {"name": "y"}]
    adm.start(queue.pop(0), "cpu")
    assert adm.pick(queue, "cpu") == 0

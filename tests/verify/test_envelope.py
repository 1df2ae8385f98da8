"""The harness's float64 evaluation of a float32 task (envelope.py): when it is made, and that
it never touches the float32 reference."""

from __future__ import annotations

import torch

from drtriton.verify.envelope import IntegerAlternatives
from drtriton.verify.references import References
from drtriton.verify.task import load_task

FUNCTIONAL = """
import torch
import torch.nn.functional as F

def fused_operator(x0, x1):
    return F.group_norm(x0, 2, x1), torch.argmax(x0, 1)

def get_inputs():
    return [torch.randn(2, 4, 3), torch.randn(4)]
"""

RANDOM = """
import torch

def fused_operator(x0):
    return x0 + torch.rand_like(x0)

def get_inputs():
    return [torch.randn(8)]
"""

MODULE = """
import torch

class Model(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = torch.nn.Linear(n, n)

    def forward(self, x):
        return torch.softmax(self.linear(x), -1)

def get_inputs():
    return [torch.randn(3, 5)]

def get_init_inputs():
    return [5]
"""


def references(source: str, trials: int = 2) -> tuple[object, list]:
    task = load_task(source)
    sets = [task.make_inputs(i, 0) for i in range(trials)]
    reference = task.build_reference(torch.device("cpu"), 0)
    evaluate = References(reference, torch.device("cpu"))
    refs = [evaluate(inputs) for inputs in sets]
    return reference, refs


def test_float32_outputs_get_a_float64_evaluation() -> None:
    _, refs = references(FUNCTIONAL)
    for expected in refs:
        norm, index = expected.exact
        assert isinstance(norm, torch.Tensor) and norm.dtype == torch.float64
        assert (norm - expected.values[0].double()).abs().max() < 1e-4
        # Integer outputs: the float64 evaluations' own answers, not a tolerance.
        assert isinstance(index, IntegerAlternatives)
        assert all(torch.equal(v, expected.values[1]) for v in index.values)
        assert expected.values[0].dtype == torch.float32


def test_tasks_that_draw_random_numbers_get_no_envelope() -> None:
    _, refs = references(RANDOM)
    assert all(expected.exact is None for expected in refs)


def test_module_tasks_evaluate_a_float64_copy() -> None:
    model, refs = references(MODULE)
    assert all(p.dtype == torch.float32 for p in model.parameters())  # the original is untouched
    leaf = refs[0].exact[0]
    assert isinstance(leaf, torch.Tensor) and leaf.dtype == torch.float64
    assert (leaf - refs[0].values[0].double()).abs().max() < 1e-5

"""Task modules are importable by name, as torch.compile's baseline needs on the GPU."""

from __future__ import annotations

import sys

import torch

from drtriton.verify.task import load_task

TASK = """import torch

def fused_operator(x0):
    t0 = torch.relu(x0)
    return t0

def get_inputs():
    return [torch.randn(4, 8)]
"""


def test_task_module_is_registered_and_compiles() -> None:
    task = load_task(TASK)
    fn = task.module.fused_operator
    assert sys.modules[fn.__module__] is task.module
    x = torch.randn(4, 8)
    torch.testing.assert_close(torch.compile(fn)(x), torch.relu(x))


def test_distinct_tasks_get_distinct_modules() -> None:
    other = load_task(TASK.replace("relu", "tanh"))
    assert other.module.__name__ != load_task(TASK).module.__name__

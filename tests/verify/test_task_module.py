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


def test_a_task_may_define_triton_kernels_of_its_own() -> None:
    # Triton's JIT reads a kernel's text through inspect; text run through exec() is found in
    # linecache (before, loading failed: "@jit functions should be defined in a Python file").
    source = (
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef twice_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n"
        "\n\ndef fused_operator(x0):\n    return x0 * 2.0\n\n\n"
        "def get_inputs():\n    return [torch.randn(8)]\n"
    )
    task = load_task(source)
    assert "tl.program_id(0)" in task.module.twice_kernel.src

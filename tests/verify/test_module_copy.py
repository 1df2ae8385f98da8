"""The reference's copies in other dtypes (module_copy.py): a function kept as a module
attribute calls the copy's layers, as KernelBench L3 44's MLP lambda needs."""

from __future__ import annotations

import torch

from drtriton.verify.envelope import Float64Leaf
from drtriton.verify.module_copy import converted_copy
from drtriton.verify.precision import mode
from drtriton.verify.references import References
from drtriton.verify.task import load_task

# KernelBench L3 44's pattern, small: the MLP is a lambda over a ModuleDict.
LAMBDA_MLP = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.norm = nn.LayerNorm(n)
        self.mlp = nn.ModuleDict(dict(up=nn.Linear(n, 2 * n), down=nn.Linear(2 * n, n)))
        m = self.mlp
        self.mlpf = lambda x: m.down(torch.tanh(m.up(x)))

    def forward(self, x):
        return x + self.mlpf(self.norm(x))

def get_inputs():
    return [torch.randn(4, 8)]

def get_init_inputs():
    return [8]
"""


def _model(dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    task = load_task(LAMBDA_MLP)
    return task.build_reference(torch.device("cpu"), 0).to(dtype)


def test_a_kept_lambda_calls_the_copys_layers() -> None:
    original = _model(torch.bfloat16)
    wide = converted_copy(original, torch.float64)
    x = torch.randn(4, 8, dtype=torch.float64)
    assert wide(x).dtype == torch.float64  # the copy's layers, all float64
    assert all(p.dtype == torch.bfloat16 for p in original.parameters())  # untouched
    assert original(x.bfloat16()).dtype == torch.bfloat16  # its own lambda still its own
    assert wide.mlpf is not original.mlpf


def test_the_copy_computes_what_the_original_computes() -> None:
    original = _model()
    x = torch.randn(4, 8)
    torch.testing.assert_close(converted_copy(original, torch.float64)(x.double()).float(),
                               original(x), rtol=1e-5, atol=1e-5)  # fmt: skip


def test_a_closure_over_something_not_copied_keeps_it() -> None:
    scale = [3.0]  # a module-level object the deep copy never reached
    model = torch.nn.Linear(2, 2)
    model.scaled = lambda x: scale[0] * x
    copied = converted_copy(model, torch.float64)
    scale[0] = 5.0
    assert copied.scaled(torch.ones(1)).item() == 5.0


def test_the_float64_envelope_reaches_a_lambda_mlp() -> None:
    """Before module_copy, the float64 copy's lambda ran float32 layers on float64 values:
    the evaluation raised and the task lost its envelope."""
    task = load_task(LAMBDA_MLP)
    refs = References(task.build_reference(torch.device("cpu"), 0), torch.device("cpu"))
    leaf = refs(task.make_inputs(0, 0)).exact[0]
    assert isinstance(leaf, Float64Leaf) and leaf.value.dtype == torch.float64


def test_the_strict_reference_of_a_bf16_lambda_mlp_runs_in_float32() -> None:
    task = load_task(LAMBDA_MLP)
    bf16 = mode("bf16")
    reference = task.build_reference(torch.device("cpu"), 0, mode=bf16)
    refs = References(reference, torch.device("cpu"), mode=bf16)
    strict = refs.strict_references()
    assert strict is not None
    inputs = [x.float() for x in task.make_inputs(0, 0, mode=bf16)]
    assert strict(inputs).values[0].dtype == torch.float32

"""The verifier's options for hybrids (drtriton optimize): allow_torch, eval_mode,
compile_baseline.  A module task with a linear layer (left in PyTorch: ATen `addmm`) and
dropout (identity in eval mode only); the candidate computes the relu in Triton."""

from __future__ import annotations

import os

import pytest
import torch

from drtriton.verify import verify

os.environ.pop("TRITON_INTERPRET", None)  # the worker sets it; the harness does not need it

TASK = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return torch.relu(self.drop(self.fc(x)))

def get_inputs():
    return [torch.randn(4, 16)]

def get_init_inputs():
    return [16]
"""

HYBRID = """import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)

class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        h = F.linear(x, self.fc.weight, self.fc.bias)
        y = torch.empty_like(h)
        relu_kernel[(triton.cdiv(h.numel(), 64),)](h, y, h.numel(), BLOCK=64)
        return EXTRA(y)
"""

HONEST = HYBRID.replace("EXTRA(y)", "y")
SNEAKY = HYBRID.replace("EXTRA(y)", "torch.sigmoid(y) * 0 + y")  # torch computes outside the list


def test_allowed_op_is_accepted_and_recorded() -> None:
    verdict = verify(TASK, HONEST, allow_torch=("addmm",), eval_mode=True, trials=2)
    assert verdict.status == "correct", verdict.reason
    assert verdict.extra["allowed_torch"] == ["addmm"]


def test_same_hybrid_without_allow_torch_is_not_genuine() -> None:
    verdict = verify(TASK, HONEST, eval_mode=True, trials=2)
    assert verdict.status == "not_genuine"
    assert "addmm" in verdict.reason


def test_an_op_outside_the_list_is_still_not_genuine() -> None:
    verdict = verify(TASK, SNEAKY, allow_torch=("addmm",), eval_mode=True, trials=2)
    assert verdict.status == "not_genuine"
    assert "sigmoid" in verdict.reason or "mul" in verdict.reason


def test_training_mode_is_the_default() -> None:
    """Dropout is live in training mode (KernelBench's default), so the eval-mode hybrid
    no longer matches the reference."""
    verdict = verify(TASK, HONEST, allow_torch=("addmm",), trials=2)
    assert verdict.status == "wrong_answer", verdict.reason


def test_a_baseline_that_fails_to_compile_is_recorded_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """torch.compile failing is the baseline's problem, not the candidate's: its reason is kept
    (and not retried) for the task; the compiled task is cached per task, not its times."""
    from drtriton.verify.baselines import Baselines

    calls: list[int] = []

    def no_compile(*args: object, **kwargs: object) -> None:
        calls.append(1)
        raise AssertionError("torch.compile was called")

    monkeypatch.setattr(torch, "compile", no_compile)
    baselines = Baselines()
    for _ in range(2):
        compiled, error = baselines.compiled("task", torch.relu, [torch.randn(3)], "cpu", False)
        assert compiled is None and "torch.compile was called" in str(error)
    assert len(calls) == 1
    compiled, error = baselines.compiled("other", torch.relu, [torch.randn(3)], "cpu", False)
    assert len(calls) == 2

"""Recurrent models: an unrolled cell's repeated steps are searched once, and recurrent layers
stay whole.

On the CPU (Triton's interpreter), small shapes."""

from __future__ import annotations

import os
import re

import pytest

from drtriton import _core
from drtriton.frontend import from_module_source
from drtriton.optimize import OptimizeConfig, optimize_source

pytestmark = pytest.mark.skipif(not hasattr(_core, "codegen_variants"), reason="no teacher binding")
os.environ.pop("TRITON_INTERPRET", None)

# KernelBench L3 34's vanilla RNN cell at toy sizes, fed the same input every step, with an
# operator the catalog lacks (atan) on each step's output: the loop unrolls into one identical
# run per step (the cat as pads, linear, tanh, linear), which atan, a PyTorch call, ends; the
# outputs' stack is a run of its own.  (A per-step x[t] would make each run's select another
# program.)
CELL = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.i2h = nn.Linear(n_in + n_hidden, n_hidden)
        self.h2o = nn.Linear(n_hidden, n_out)

    def forward(self, x, h0):
        hidden, outputs = h0, []
        for _ in range(STEPS):
            hidden = torch.tanh(self.i2h(torch.cat((x, hidden), dim=1)))
            outputs.append(torch.atan(self.h2o(hidden)))
        return torch.stack(outputs, dim=0)

def get_inputs():
    return [torch.rand(2, 8), torch.rand(2, 4)]

def get_init_inputs():
    return [8, 4, 3]
"""

LSTM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n_in, n_hidden, layers):
        super().__init__()
        self.lstm = nn.LSTM(n_in, n_hidden, layers, batch_first=True)

    def forward(self, x, h0, c0):
        out, _ = self.lstm(x, (h0, c0))
        return torch.relu(out) * 2.0 + 1.0

def get_inputs():
    return [torch.rand(2, 5, 8), torch.rand(2, 2, 6), torch.rand(2, 2, 6)]

def get_init_inputs():
    return [8, 6, 2]
"""


def test_repeated_cell_is_searched_once_and_emitted_once() -> None:
    said: list[str] = []
    result = optimize_source(
        CELL.replace("STEPS", "4"), OptimizeConfig(max_ops=3, k=1), said.append
    )
    assert result.error is None, result.error
    assert result.verdict["status"] == "correct", result.verdict
    reused = [m for m in said if m.endswith("reused")]
    # The cat's x half (a pad of x, the same every step) is computed once, in step 1 (the
    # frontend merges identical lines), so steps 2 and 3 are one program; the last step's
    # hidden state is unused, so its run differs; the stack of the outputs is another.
    assert reused == ["search 3/5: the program of search 2, reused"]
    entries = re.findall(r"def (r\d+)_triton_fused_operator\(", result.model_new)
    assert len(entries) == 4  # step 1's, the repeated cell's, the last step's, the stack's
    assert result.model_new.count(f"= {entries[1]}_triton_fused_operator(") == 2


def test_lstm_stays_one_pytorch_call() -> None:
    frontend = from_module_source(LSTM)
    calls = [line.call.split("(")[0] for line in frontend.lines]
    assert calls.count("torch.ops.aten.lstm.input") == 1
    assert not any("sigmoid" in c for c in calls)  # not unrolled into gates


def test_lstm_hybrid_verifies_with_the_layer_in_pytorch() -> None:
    result = optimize_source(LSTM, OptimizeConfig(max_ops=3, k=1))
    assert result.error is None, result.error
    assert result.verdict["status"] == "correct", result.verdict
    assert "lstm" in result.verdict["allowed_torch"]
    assert [s["ops"] for s in result.segments if s["fused"]] == [["relu", "mul", "add"]]

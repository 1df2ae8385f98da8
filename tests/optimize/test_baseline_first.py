"""The final verification's torch.compile baseline, compiled before the search (optimize under a
deadline on a GPU) and kept by the Verifier that then judges ModelNew (Verifier.compile_baseline).
The CPU has no GPU: the compilation is replaced by a counting stand-in, and the GPU is an
Options whose on_cuda is true on the CPU device."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from drtriton import verify as verify_package
from drtriton.errors import UserError
from drtriton.optimize import OptimizeConfig, optimize_source
from drtriton.verify import Options, Verifier
from drtriton.verify import baselines as baselines_module
from drtriton.verify.precision import STRICT
from drtriton.verify.task import load_task

TASK = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return torch.relu(self.fc(x))

def get_inputs():
    return [torch.randn(4, 16)]

def get_init_inputs():
    return [16]
"""


class GpuLike(Options):
    """Options that take the GPU's path on the CPU device (no lock, no set_device there)."""

    @property
    def on_cuda(self) -> bool:
        return True


def test_nothing_is_compiled_where_no_verification_would_time_torch_compile() -> None:
    verifier = Verifier()
    assert verifier.compile_baseline(TASK, Options(device="cpu")) == 0.0
    assert verifier.compile_baseline(TASK, GpuLike(device="cpu", compile_baseline=False)) == 0.0
    assert verifier.compile_baseline(TASK, GpuLike(device="cpu", baselines=False)) == 0.0
    assert not verifier.baselines.has(load_task(TASK).source, "cpu", False, STRICT)


def test_the_baseline_is_compiled_once_and_kept_for_the_tasks_verifications(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled: list[tuple[Any, list[Any]]] = []

    def compile_stand_in(reference: Any, inputs: list[Any], device: str, mode: Any) -> Any:
        compiled.append((reference, inputs))
        return reference

    monkeypatch.setattr(baselines_module, "_compile", compile_stand_in)
    verifier = Verifier()
    opts = GpuLike(device="cpu", eval_mode=True)
    assert verifier.compile_baseline(TASK, opts) > 0.0
    assert verifier.compile_baseline(TASK, opts) == 0.0  # kept: not compiled again
    assert len(compiled) == 1
    reference, inputs = compiled[0]
    assert [tuple(x.shape) for x in inputs] == [(4, 16)]  # input set 0, as the timing draws it
    source = load_task(TASK).source
    assert verifier.baselines.has(source, "cpu", True, STRICT)
    # What a verification's timing asks for (measure.py) is the kept one.
    found, error = verifier.baselines.compiled(source, None, [], "cpu", True, STRICT)
    assert error is None and found is reference
    # Another mode of the same task is another program.
    assert not verifier.baselines.has(source, "cpu", False, STRICT)


class StopAtBaseline(Verifier):
    calls: ClassVar[list[str]] = []

    def compile_baseline(self, task_source: str, options: Options | None = None) -> float:
        StopAtBaseline.calls.append(getattr(options, "device", ""))
        raise UserError("stopped at the baseline")


def test_under_a_deadline_on_a_gpu_the_search_starts_after_the_baseline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(verify_package, "Verifier", StopAtBaseline)
    StopAtBaseline.calls = []
    said: list[str] = []
    config = OptimizeConfig(device="cuda", time_budget_s=100.0, mode="train")
    result = optimize_source(TASK, config, progress=said.append)
    assert StopAtBaseline.calls == ["cuda"]
    assert result.error == "stopped at the baseline"
    assert not any(line.startswith("search") for line in said), said

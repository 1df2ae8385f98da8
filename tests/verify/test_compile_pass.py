"""compile_pass: the candidate's first call with no device work (Triton compiles, nothing
launches; torch operators become allocations of their results' shapes)."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from drtriton.verify import compile_pass
from drtriton.verify.compile_pass import NoDeviceWork
from drtriton.verify.poison import LaunchCounter


class Recorder(torch.utils._python_dispatch.TorchDispatchMode):
    """Below NoDeviceWork: sees what actually ran on real (non-meta) tensors."""

    def __init__(self) -> None:
        super().__init__()
        self.real: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        leaves = torch.utils._pytree.tree_leaves((args, kwargs or {}))
        if any(isinstance(x, torch.Tensor) and x.device.type != "meta" for x in leaves):
            self.real.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def test_operators_become_allocations_of_their_results_shapes() -> None:
    x, w = torch.ones(2, 3), torch.ones(3, 4)
    out = torch.full((2, 4), 7.0)
    recorder = Recorder()
    with recorder, NoDeviceWork():
        y = torch.relu(x - 5.0)
        z = x @ w
        conv = F.conv2d(torch.ones(1, 3, 8, 8), torch.ones(5, 3, 3, 3), padding=1)
        inplace = x.mul_(9.0)
        written = torch.matmul(x, w, out=out)
        view = x.t()
    assert y.shape == (2, 3) and z.shape == (2, 4) and conv.shape == (1, 5, 8, 8)
    assert inplace is x and torch.equal(x, torch.ones(2, 3))  # the argument, untouched
    assert written is out and torch.equal(out, torch.full((2, 4), 7.0))
    assert view.shape == (3, 2) and view.data_ptr() == x.data_ptr()  # views stay views
    computed = {"relu", "sub", "mm", "convolution", "mul", "matmul", "fill"}
    assert not computed & set(recorder.real), recorder.real  # only empty allocations and views


class FakeJit:
    """The shape of JITFunction.run: what the launch counter wraps."""

    def __init__(self) -> None:
        self.calls: list[bool] = []

    def run(self, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> str:
        self.calls.append(warmup)
        return "compiled"


class FakeAutotuner:
    def __init__(self) -> None:
        self.warmed: list[dict[str, Any]] = []
        self.ran = 0

    def run(self, *args: Any, **kwargs: Any) -> None:
        self.ran += 1

    def warmup(self, *args: Any, **kwargs: Any) -> None:
        self.warmed.append(kwargs)


def test_a_launch_in_the_pass_compiles_only_and_is_not_counted() -> None:
    counter = LaunchCounter()
    cls = type("Jit", (FakeJit,), {})
    counter._wrap(cls, interpreted=False)
    kernel = cls()
    kernel.run(1, grid=(1,), warmup=False)
    assert counter.count == 1 and kernel.calls == [False]
    counter.compile_only = True
    kernel.run(1, grid=(1,), warmup=False)
    assert counter.count == 1 and kernel.calls == [False, True]  # warmup: compiled, not run


def test_an_autotuner_in_the_pass_compiles_its_configs_and_times_none() -> None:
    counter = LaunchCounter()
    cls = type("Tuner", (FakeAutotuner,), {})
    counter._wrap_autotuner(cls)
    tuner = cls()
    counter.compile_only = True
    assert tuner.run(1, grid=(1,), warmup=False) is None
    assert tuner.ran == 0 and tuner.warmed == [{"grid": (1,)}]
    counter.compile_only = False
    tuner.run(1, grid=(1,), warmup=False)
    assert tuner.ran == 1


def test_the_pass_reports_and_survives_what_it_cannot_run() -> None:
    counter = LaunchCounter()

    def reads_a_value(x: torch.Tensor) -> torch.Tensor:
        if x.sum().item() > 0:  # a host read of a value: no meta kernel can answer it
            return x
        return x

    report = compile_pass.run(reads_a_value, [torch.ones(3)], counter)
    assert not report["complete"] and report["reason"]
    assert counter.compile_only is False  # switched back off
    ok = compile_pass.run(lambda x: torch.relu(x), [torch.ones(3)], counter)
    assert ok["complete"] and ok["reason"] == ""


def test_inputs_for_the_pass_are_allocated_not_drawn() -> None:
    meta = [torch.empty(4, 5, device="meta").t(), 3]
    shaped = compile_pass.shaped_like(meta, "cpu")
    assert shaped[0].shape == (5, 4) and shaped[0].stride() == (1, 5) and shaped[1] == 3

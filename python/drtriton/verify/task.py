"""Tasks: load the trusted task source, draw fresh inputs and compute the reference.

This runs in the harness (parent) process only. Tasks are trusted-ish (they come from our own
synthesizer or from KernelBench); candidates are not, and never run here.

Inputs: input set i re-seeds torch with `seed + 7919 * i`, calls the task's `get_inputs()` (so
integer inputs such as indices keep their meaning and tensors keep their layout, strides
included), then re-draws floating-point tensors from one of several distributions in turn:
the task's own draw (twice, two seeds), uniform [0, 1), the task's draw scaled by 10 and by 0.01.
Scaling keeps the sign domain, so a task that needs positive inputs (log, sqrt) still gets them;
the magnitudes catch kernels that are right only near 1 (a missing max-subtraction in softmax,
an absolute error that hides in small values).
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import linecache
import os
import sys
import types
from collections.abc import Callable
from typing import Any

import torch

from drtriton.errors import UserError
from drtriton.verify.precision import STRICT, Mode, cast

FUNCTIONAL = "functional"
MODULE = "module"
ENTRY_POINTS = {FUNCTIONAL: "triton_fused_operator", MODULE: "ModelNew"}
DISTRIBUTIONS = ("task", "task", "uniform", "scaled_10", "scaled_0.01")


def task_kind(source: str) -> str:
    """ "functional" or "module", from the top-level names the task defines (no execution)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise UserError(f"the task does not parse: line {exc.lineno}: {exc.msg}") from exc
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    if {"fused_operator", "get_inputs"} <= names:
        return FUNCTIONAL
    if {"Model", "get_inputs", "get_init_inputs"} <= names:
        return MODULE
    raise UserError(
        "the task defines neither fused_operator + get_inputs (functional) nor "
        "Model + get_inputs + get_init_inputs (module)"
    )


@dataclasses.dataclass
class Task:
    kind: str
    source: str
    module: types.ModuleType

    @property
    def entry_point(self) -> str:
        return ENTRY_POINTS[self.kind]

    def init_inputs(self, mode: Mode = STRICT) -> list[Any]:
        """The constructor's arguments, floating tensors among them in the mode's dtype."""
        if self.kind != MODULE:
            return []
        return cast(list(self.module.get_init_inputs()), mode)

    def make_inputs(self, index: int, seed: int, device: torch.device | str | None = None,
                    mode: Mode = STRICT) -> list[Any]:  # fmt: skip
        """Input set `index`, drawn on `device` (default: the CPU).

        On a GPU the task's `get_inputs()` runs under that device as the default one, so its
        tensors are drawn there by the device's generator: a paper-preset input set of 10 GB
        takes milliseconds instead of a minute of CPU sampling and a file. The harness and the
        worker both call this with the same arguments and get the same values (same device,
        same seed); `fingerprint` checks that they did. In a mode that casts (bf16, fp16) the
        floating tensors are drawn in float32 and then cast, as KernelBench casts its inputs.
        """
        torch.manual_seed(seed + 7919 * index)
        target = torch.device(device) if device is not None else torch.device("cpu")
        with torch.device(target):
            inputs = list(self.module.get_inputs())
        inputs = [_onto(x, target) for x in inputs]  # tensors get_inputs() placed elsewhere
        dist = DISTRIBUTIONS[index % len(DISTRIBUTIONS)]
        with torch.no_grad():
            for x in inputs:
                if isinstance(x, torch.Tensor) and x.is_floating_point():
                    _redraw(x, dist)
            inputs = cast(inputs, mode)
        return [x.detach() if isinstance(x, torch.Tensor) else x for x in inputs]

    def build_reference(self, device: torch.device, init_seed: int, eval_mode: bool = False,
                        mode: Mode = STRICT) -> Callable[..., Any]:  # fmt: skip
        """The reference callable on `device` (for a module task: Model seeded with init_seed,
        in training mode as KernelBench runs it, or in eval mode when asked; built in float32
        and then cast to the mode's dtype, parameters and buffers, as KernelBench does)."""
        if self.kind == FUNCTIONAL:
            return self.module.fused_operator
        torch.manual_seed(init_seed)
        model = self.module.Model(*self.init_inputs(mode))
        model = model.eval().to(device) if eval_mode else model.to(device)
        return model.to(mode.torch_dtype()) if mode.casts else model


def _redraw(x: torch.Tensor, dist: str) -> None:
    if dist == "uniform":
        x.uniform_(0.0, 1.0)
    elif dist.startswith("scaled_"):
        x.mul_(float(dist.removeprefix("scaled_")))


def load_task(source: str, filename: str = "<task>") -> Task:
    kind = task_kind(source)
    # Registered in sys.modules under a name unique to the source: torch.compile (the GPU
    # baseline) resolves a function's globals through sys.modules[fn.__module__] and failed
    # with "No module named 'drtriton_task'" on the H200 without it.
    name = "drtriton_task_" + hashlib.sha256(source.encode()).hexdigest()[:16]
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    # A task may launch Triton kernels of its own (a model with a Triton op): Triton's JIT
    # reads a kernel's text through inspect, which finds text run through exec() in linecache.
    if not os.path.exists(filename):
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        code = compile(source, filename, "exec")
        exec(code, module.__dict__)  # trusted task code, harness side only
    except Exception as exc:
        raise UserError(f"the task failed to load: {type(exc).__name__}: {exc}") from exc
    return Task(kind=kind, source=source, module=module)


def import_file(path: str, name: str) -> types.ModuleType:
    """The trusted Python file at `path` as a module named `name`.  Code with Triton kernels
    must come from a file: on a GPU, Triton's JIT reads each kernel's source from its file, and
    text run through exec() fails there."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fingerprint(values: list[Any]) -> list[Any]:
    """A cheap summary of an input set (per tensor: its sum and norm, or nonzero count; other
    values as text), equal in two processes that drew the same set on the same device.

    Reductions in the tensor's own dtype: a float64 copy of a 7 GB input would need 14 GB more,
    and torch's reductions are deterministic for one shape on one device."""
    out: list[Any] = []
    with torch.no_grad():
        for v in values:
            if not isinstance(v, torch.Tensor):
                out.append(repr(v))
                continue
            real = torch.view_as_real(v) if v.is_complex() else v
            if real.is_floating_point():
                summary = [real.sum(), torch.linalg.vector_norm(real)]
            elif real.dtype == torch.bool:
                summary = [torch.count_nonzero(real)]
            else:
                summary = [real.sum(), torch.count_nonzero(real)]
            out.append([*(repr(x.item()) for x in summary), list(v.shape), str(v.dtype)])
    return out


def _onto(x: Any, device: torch.device) -> Any:
    if isinstance(x, torch.Tensor) and x.device.type != device.type:
        return to_device([x], device)[0]
    return x


def to_device(values: list[Any], device: torch.device) -> list[Any]:
    """Copies onto `device`, keeping strides (so strided inputs stay strided)."""
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            copy = torch.empty_strided(v.size(), v.stride(), dtype=v.dtype, device=device)
            copy.copy_(v)
            out.append(copy)
        else:
            out.append(v)
    return out

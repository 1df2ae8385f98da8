"""Does the functional program reproduce the module?  Same inputs, same parameters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from drtriton.frontend.export import load_module_task
from drtriton.frontend.lower import Input
from drtriton.frontend.result import FrontendResult


@dataclass
class Equivalence:
    ok: bool
    reason: str
    max_abs_error: float = 0.0


def _flat(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _flat(v)]
    return []


def _state(model: torch.nn.Module, result: FrontendResult, target: str | None) -> torch.Tensor:
    """A parameter, buffer or constant tensor by its dotted attribute path; a tensor the
    forward creates (torch.tensor(0.5)) is one export lifted into its constants."""
    assert target is not None, "a non-user input names its module attribute"
    if target in result.constants:
        return result.constants[target]
    value: Any = model
    for part in target.split("."):
        value = getattr(value, part)
    return value


def _argument(model: torch.nn.Module, inputs: list[Any], result: FrontendResult, inp: Input) -> Any:
    """The functional program's value for `inp`: a forward argument (x<position>), a Python
    number argument as its one-element float32 tensor (x<position>_t), or module state."""
    if inp.kind == "user":
        return inputs[int(inp.name[1:])]
    if inp.kind == "scalar":
        assert inp.target is not None, "a scalar input names its forward argument"
        return torch.tensor([float(inputs[int(inp.target[1:])])], dtype=torch.float32)
    state = _state(model, result, inp.target)
    return state.reshape(1) if inp.as_one_element else state


def run_functional(source: str, args: list[torch.Tensor]) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<functional>", "exec"), namespace)  # our own text
    return namespace["fused_operator"](*args)


def check_equivalence(
    code: str, result: FrontendResult, atol: float = 1e-4, rtol: float = 1e-4, seed: int = 0
) -> Equivalence:
    """Runs the KernelBench module and `result.source` on the module's example inputs with the
    module's own parameters and buffers; compares every output."""
    task = load_module_task(code, seed)
    args = [_argument(task.model, task.inputs, result, inp) for inp in result.inputs]
    with torch.no_grad():
        expected = _flat(task.model(*task.inputs))
        got = _flat(run_functional(result.source, args))
    if len(expected) != len(got):
        return Equivalence(False, f"{len(got)} outputs, the module has {len(expected)}")
    worst = 0.0
    for k, (e, g) in enumerate(zip(expected, got, strict=True)):
        if e.shape != g.shape or e.dtype != g.dtype:
            return Equivalence(
                False,
                f"output {k}: {tuple(g.shape)} {g.dtype}, expected {tuple(e.shape)} {e.dtype}",
            )
        if e.is_floating_point():
            worst = max(worst, float((e - g).abs().max()) if e.numel() else 0.0)
        if not torch.allclose(g, e, atol=atol, rtol=rtol, equal_nan=True):
            return Equivalence(False, f"output {k} differs (max abs error {worst:.3g})", worst)
    return Equivalence(True, "outputs match", worst)

"""KernelBench task → exported, decomposed ATen graph (eval mode, or training mode on request).

The task file is trusted (it is the user's own model), so it is exec'd in a fresh namespace.
Decomposition keeps every ATen operator the catalog has whole (aten.ATEN_TO_CATALOG's keys):
PyTorch would otherwise lower linear to addmm with a transposed weight, layer_norm to
mean/var arithmetic, and so on, which no longer reads as one catalog operator.
Recurrent layers (LSTM, GRU, RNN) are kept whole too, as opaque PyTorch calls: decomposed,
they unroll into one cell per time step and layer (KernelBench's L3 35 LSTM became 55,350 ATen
operators, and its search and export ran past the 240 s problem limit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from drtriton.errors import UserError
from drtriton.frontend.aten import kept_whole

_aten = torch.ops.aten
RECURRENT = [
    overload
    for packet in (_aten.lstm, _aten.gru, _aten.rnn_tanh, _aten.rnn_relu)
    for overload in (packet.input, packet.data)
]


@dataclass
class LoadedTask:
    model: torch.nn.Module
    inputs: list[Any]
    namespace: dict[str, Any]


def load_module_task(
    code: str, seed: int = 0, training: bool = False, inputs: bool = True
) -> LoadedTask:
    """Executes a KernelBench source and builds Model(*get_init_inputs()), in eval mode unless
    `training` (KernelBench's own evaluation never calls eval(); a deployment does).  With
    `inputs=False` get_inputs() is not called (`inputs` is then []): KernelBench's level-1
    inputs reach 1.6G elements, ~15 s of random numbers on the CPU, for a caller that only
    needs the model."""
    namespace: dict[str, Any] = {"__name__": "drtriton_task"}
    exec(compile(code, "<task>", "exec"), namespace)  # a trusted task file
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if name not in namespace:
            raise UserError(f"the task does not define {name!r}")
    torch.manual_seed(seed)
    model = namespace["Model"](*namespace["get_init_inputs"]()).train(training)
    if not inputs:
        return LoadedTask(model, [], namespace)
    torch.manual_seed(seed + 1)
    return LoadedTask(model, list(namespace["get_inputs"]()), namespace)


def decompositions() -> dict[Any, Any]:
    """torch.export's default table minus the operators the catalog keeps whole."""
    table = torch.export.default_decompositions()
    for op in [*kept_whole(), *RECURRENT]:
        table.pop(op, None)
    return table


def export_model(task: LoadedTask) -> torch.export.ExportedProgram:
    with torch.no_grad():
        exported = torch.export.export(task.model, tuple(task.inputs))
        return exported.run_decompositions(decompositions())

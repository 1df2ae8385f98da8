"""A reference model's copy in another dtype, for the evaluations beside the mode's own: the
float64 envelope (envelope.py) and the strict float32 reference of a bf16/fp16/tf32 task
(references.py).

`copy.deepcopy` copies a function by reference, so a function kept as a module attribute
still closes over the original's submodules. KernelBench L3 44 (MiniGPTBlock) keeps its MLP as
`self.mlpf = lambda x: m.dropout(m.c_proj(m.act(m.c_fc(x))))` over a ModuleDict `m`: its
float32 copy of a bf16 model ran the copy's layer norm and then the original's bf16 linear
("mat1 and mat2 must have the same dtype", on an H100, 2026-12-07), and the task was failed as
the reference's fault. Here such a function is rebuilt over the copied objects.
"""

from __future__ import annotations

import copy
import types
from typing import Any

import torch


def converted_copy(model: torch.nn.Module, dtype: torch.dtype) -> torch.nn.Module:
    """A deep copy of `model` with floating parameters and buffers in `dtype`, whose
    functions kept as attributes close over the copy (see the module docstring)."""
    memo: dict[int, Any] = {}
    clone = copy.deepcopy(model, memo)
    for module in clone.modules():
        for key, value in list(vars(module).items()):
            if isinstance(value, types.FunctionType) and value.__closure__:
                setattr(module, key, _over_copies(value, memo))
    return clone.to(dtype)


def _over_copies(fn: types.FunctionType, memo: dict[int, Any]) -> types.FunctionType:
    """`fn` with each captured object that the deep copy copied replaced by its copy (the
    memo maps the original's id to it); anything not copied is captured as it was."""
    cells = []
    for cell in fn.__closure__ or ():
        try:
            content = cell.cell_contents
        except ValueError:  # an empty cell (a name assigned after the closure was made)
            cells.append(cell)
            continue
        cells.append(types.CellType(memo.get(id(content), content)))
    rebuilt = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                                 tuple(cells))  # fmt: skip
    rebuilt.__kwdefaults__ = fn.__kwdefaults__
    rebuilt.__dict__.update(fn.__dict__)
    return rebuilt

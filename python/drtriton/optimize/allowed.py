"""The ATen operators a hybrid leaves in PyTorch, for the verifier's allow_torch.

Names are read off what actually dispatches: the program's lines run once on zero-filled
inputs (on the target device: F.batch_norm reaches cudnn_batch_norm on a GPU and
native_batch_norm on the CPU) under a recording dispatch mode that is switched on only for
the lines kept in PyTorch.  Opaque lines also contribute the name their
`torch.ops.aten.<name>.<overload>` spelling carries, in case their dispatch differs.

A matrix product's dispatch depends on more than shapes: F.linear reaches addmm, mm, bmm or
matmul by the rank, bias and strides of what it gets, and a value made by a Triton kernel is
laid out differently from the zeros probed here (KernelBench L3 32, a vision transformer, was
rejected on 2026-11-30 for aten.mm in a hybrid that keeps its linears in PyTorch). So a kept
product allows its whole family: the same computation under another entry point.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from drtriton.frontend import FrontendResult, Line
from drtriton.verify.poison import ALLOCATE_AND_VIEW, op_name


class _Record(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.add(op_name(func))
        return func(*args, **(kwargs or {}))


def spelled_name(line: Line) -> str | None:
    """'flip' from `torch.ops.aten.flip.default(...)`."""
    head = line.call.split("(")[0]
    parts = head.split(".")
    return parts[3] if head.startswith("torch.ops.aten.") and len(parts) >= 4 else None


PRODUCT_FAMILY = frozenset("mm addmm bmm baddbmm matmul linear mv addmv dot".split())


def _with_families(names: set[str]) -> set[str]:
    return names | PRODUCT_FAMILY if names & PRODUCT_FAMILY else names


def _zeros(shape: list[int], dtype: str, device: str) -> torch.Tensor:
    return torch.zeros(shape, dtype=getattr(torch, dtype), device=device)


def allowed_ops(frontend: FrontendResult, kept: set[str], device: str) -> tuple[str, ...]:
    """ATen overload packets dispatched by the lines whose results are in `kept`."""
    names = {n for line in frontend.lines if line.result in kept for n in [spelled_name(line)] if n}
    values: dict[str, Any] = {i.name: _zeros(i.shape, i.dtype, device) for i in frontend.inputs}
    record = _Record()
    with torch.no_grad():
        for line in frontend.lines:
            spelling = line.public or line.call
            mode = record if line.result in kept else contextlib.nullcontext()
            with mode:
                values[line.result] = eval(  # our own line, over our own values
                    spelling, {"torch": torch, "F": F}, values
                )
    return tuple(sorted(_with_families(names | record.seen) - ALLOCATE_AND_VIEW))

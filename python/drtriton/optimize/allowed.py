"""The ATen operators a hybrid leaves in PyTorch, for the verifier's allow_torch.

Names are read off what actually dispatches: the program's lines run once on zero-filled
inputs (on the target device: F.batch_norm reaches cudnn_batch_norm on a GPU and
native_batch_norm on the CPU) under a recording dispatch mode that is switched on only for
the lines kept in PyTorch.  Opaque lines also contribute the name their
`torch.ops.aten.<name>.<overload>` spelling carries, in case their dispatch differs.

A kept matrix product allows its whole family (poison.allowed_packets says why). The probe
runs on the GPU and holds its lock shared (gpu_lock.py: no GPU work outside a hold), on
floating inputs in the precision mode's dtype: a bf16 F.batch_norm dispatches
native_batch_norm on the H200 where a float32 one reaches cudnn_batch_norm (KernelBench L2 11
came back not_genuine in bf16 for the name the float32 probe had not seen).
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
import torch.nn.functional as F

from drtriton.frontend import FrontendResult, Line
from drtriton.verify import gpu_lock
from drtriton.verify.poison import DispatchRecord, allowed_packets
from drtriton.verify.precision import probe_zeros


def spelled_name(line: Line) -> str | None:
    """'flip' from `torch.ops.aten.flip.default(...)`."""
    head = line.call.split("(")[0]
    parts = head.split(".")
    return parts[3] if head.startswith("torch.ops.aten.") and len(parts) >= 4 else None


def allowed_ops(frontend: FrontendResult, kept: set[str], device: str,
                precision: str = "fp32") -> tuple[str, ...]:  # fmt: skip
    """ATen overload packets dispatched by the lines whose results are in `kept`, with the
    inputs of the verifier's `precision` mode."""
    names = {n for line in frontend.lines if line.result in kept for n in [spelled_name(line)] if n}
    record = DispatchRecord()
    with torch.no_grad(), gpu_lock.hold(device, gpu_lock.SHARED):  # the zeros' fill too
        zeros = probe_zeros([(i.shape, i.dtype) for i in frontend.inputs], device, precision)
        values: dict[str, Any] = {i.name: z for i, z in zip(frontend.inputs, zeros, strict=True)}
        for line in frontend.lines:
            spelling = line.public or line.call
            mode = record if line.result in kept else contextlib.nullcontext()
            with mode:
                values[line.result] = eval(  # our own line, over our own values
                    spelling, {"torch": torch, "F": F}, values
                )
    return allowed_packets(names | record.seen)

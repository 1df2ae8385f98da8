"""End-to-end check of a stitched hybrid, by the verifier.

The fragments inside a hybrid were each verified strictly; this checks the wiring between them.
A hybrid that keeps operators in PyTorch would be `not_genuine` under the verifier's default
rule (every torch compute call is poisoned), so it is verified with those operators allowed
(Options.allow_torch): the ATen overload packets its PyTorch lines dispatch, read off a probe
that runs each kept line once on zeros of its inputs' shapes (on the search's device, under the
GPU's shared lock). Every other operator keeps the strict rule, and the same five input sets,
float64 envelope, sandbox and timing as any candidate apply.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from drtriton import _core
from drtriton.verify import Verifier, gpu_lock
from drtriton.verify.poison import DispatchRecord, allowed_packets
from drtriton.verify.precision import probe_zeros


def kept_packets(task: str, plan: dict[str, Any], device: str,
                 precision: str = "fp32") -> tuple[str, ...]:  # fmt: skip
    """The ATen overload packets the PyTorch lines of `plan` (_core.plan_hybrid) dispatch, on
    inputs of the verifier's `precision` mode (optimize/allowed.py says why the dtype counts)."""
    facts = _core.parse(task)[1]
    record = DispatchRecord()
    with torch.no_grad(), gpu_lock.hold(device, gpu_lock.SHARED):
        for segment in plan["segments"]:
            if segment["fused"] or not segment.get("torch_line"):
                continue
            names = segment["inputs"]
            specs = [(facts["shapes"][n], facts["dtypes"].get(n, "float32")) for n in names]
            values = dict(zip(names, probe_zeros(specs, device, precision), strict=True))
            with record:
                exec(segment["torch_line"], {"torch": torch, "F": F}, values)  # our own line
    return allowed_packets(record.seen)


def check_hybrid(task: str, hybrid: str, plan: dict[str, Any], device: str,
                 verifier: Verifier | None = None, **options: Any) -> tuple[bool, str]:  # fmt: skip
    """(correct, why) of the verifier's verdict on `hybrid` against `task`; `options` are
    verifier Options fields (timeout, trials, runs)."""
    from drtriton.verify import verify

    allow = kept_packets(task, plan, device, options.get("precision", "fp32"))
    verdict = verify(task, hybrid, device=device, compile_baseline=False, allow_torch=allow,
                     verifier=verifier, **options)  # fmt: skip
    return verdict.correct, f"{verdict.status}: {verdict.reason}"

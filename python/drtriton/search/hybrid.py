"""End-to-end check of a stitched hybrid, by the verifier.

The fragments inside a hybrid were each verified strictly; this checks the wiring between them.
A hybrid that keeps operators in PyTorch would be `not_genuine` under the verifier's default
rule (every torch compute call is poisoned), so it is verified with those operators allowed
(Options.allow_torch): the ATen overload packets its PyTorch lines dispatch, read off a probe
that runs the hybrid's lines in order on zeros (on the search's device, under the GPU's shared
lock): kept lines in PyTorch, each fused fragment as contiguous zeros of its outputs' shapes
(its kernels write fresh contiguous tensors). The layouts follow the real call's, so a kept
reshape of a kept transpose dispatches the clone it will run (KernelBench L3 31 and 44 were
rejected on 2026-12-04 for aten.clone when every kept line was probed on contiguous zeros).
Every other operator keeps the strict rule, and the same five input sets, float64 envelope,
sandbox and timing as any candidate apply.
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
    segments = plan["segments"]
    last_use = {name: k for k, segment in enumerate(segments) for name in segment["inputs"]}
    record = DispatchRecord()
    values: dict[str, Any] = {}

    def zeros(names: list[str]) -> None:
        fresh = [n for n in names if n not in values]
        specs = [(facts["shapes"][n], facts["dtypes"].get(n, "float32")) for n in fresh]
        values.update(zip(fresh, probe_zeros(specs, device, precision), strict=True))

    with torch.no_grad(), gpu_lock.hold(device, gpu_lock.SHARED):
        for k, segment in enumerate(segments):
            zeros(segment["inputs"])  # the task's inputs (contiguous, as get_inputs makes them)
            if segment["fused"] or not segment.get("torch_line"):
                zeros(segment["outputs"])
            else:
                with record:
                    exec(segment["torch_line"], {"torch": torch, "F": F}, values)  # our own line
            for name in [n for n in values if last_use.get(n, -1) <= k]:
                del values[name]  # what no later line reads: the probe holds a few at a time
    return allowed_packets(record.seen)


def check_hybrid(task: str, hybrid: str, allow: tuple[str, ...], device: str,
                 verifier: Verifier | None = None, **options: Any) -> tuple[bool, str]:  # fmt: skip
    """(correct, why) of the verifier's verdict on `hybrid` against `task`, its plan's
    kept_packets `allow`ed; `options` are verifier Options fields (timeout, trials, runs)."""
    from drtriton.verify import verify

    verdict = verify(task, hybrid, device=device, compile_baseline=False, allow_torch=allow,
                     verifier=verifier, **options)  # fmt: skip
    return verdict.correct, f"{verdict.status}: {verdict.reason}"

"""Reference outputs of the task, computed in the harness (never in the candidate's process),
and loading the worker's outputs back for comparison."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

import torch

from drtriton.verify import compare as cmp
from drtriton.verify import envelope, gpu_lock
from drtriton.verify.channel import Rejected, WorkerChannel
from drtriton.verify.module_copy import converted_copy
from drtriton.verify.precision import STRICT, Mode, in_mode, widened
from drtriton.verify.task import fingerprint, to_device


def tensor_bytes(values: list[Any]) -> int:
    return sum(x.numel() * x.element_size() for x in values if isinstance(x, torch.Tensor))


def guard_task(fn: Callable[[], Any], mode: Mode = STRICT) -> Any:
    """`fn()` (trusted task code) in the mode's TF32 flags (fp32: none, precision.py says
    why); its failure is a UserError: the task, not the candidate, is at fault."""
    from drtriton.errors import UserError

    try:
        with in_mode(mode):
            return fn()
    except UserError:
        raise
    except Exception as exc:
        raise UserError(f"the task's reference failed: {type(exc).__name__}: {exc}") from exc


class References:
    """Reference outputs of input sets, one at a time, kept on the verification device (the
    comparison runs there), and the copy operators the task uses (seen on the first set).

    Float32 tasks are evaluated in float64 too (envelope.py): compare.py widens its bounds by the
    float32 reference's own error, where the task is ill-conditioned enough for it to matter.

    In a mode other than fp32 the reference runs in that mode (its dtype, its TF32 flags) and
    has no envelope of its own; each set gets instead a strict float32 evaluation of the same
    values, with its envelope, made only when the mode's reference rejects an output
    (compare.Expected.strict says why).
    """

    def __init__(self, reference: Callable[..., Any], device: torch.device,
                 envelope_max_gb: float = 2.0, mode: Mode = STRICT, *,
                 envelope_host_max_gb: float = 0.0) -> None:  # fmt: skip
        self.reference, self.device, self.mode = reference, device, mode
        self.envelope_max_gb = envelope_max_gb
        self.envelope_max_bytes = envelope_max_gb * (1 << 30)
        self.envelope_host_max_gb = envelope_host_max_gb
        # True: the float64 evaluation runs on the host (inputs above envelope_max_gb on a GPU)
        self.on_host = False
        self.seen: set[str] | None = None  # operators of the first evaluation
        self.reference64: Callable[..., Any] | None = None
        self._strict: References | None = None  # the strict float32 evaluation (other modes)

    @property
    def copies(self) -> set[str]:
        from drtriton.verify.poison import COPY

        return (self.seen or set()) & COPY

    def __call__(self, inputs: list[Any],
                 redraw: Callable[[], list[Any]] | None = None) -> cmp.Expected:  # fmt: skip
        """The reference of `inputs`. With `redraw` (draws the same set again), the float64
        evaluation is left pending (compare.judge makes it when it can matter) and the inputs
        need not be kept for it; without, it is made now."""
        from torch.utils._python_dispatch import TorchDispatchMode

        from drtriton.verify.poison import op_name

        first = self.seen is None
        seen: set[str] = set()

        class Record(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.add(op_name(func))
                return func(*args, **(kwargs or {}))

        args = to_device(inputs, self.device)  # a private copy: `inputs` stay pristine
        with torch.no_grad(), Record() if first else contextlib.nullcontext():
            out = guard_task(lambda a=args: self.reference(*a), self.mode)
        values = [x.detach() if isinstance(x, torch.Tensor) else x for x in cmp.flatten(out)]
        if self.mode != STRICT:
            if first:
                self.seen = seen
            del args, out
            return self._with_strict(values, inputs, redraw)
        if first:
            self.seen = seen
            deterministic = not seen & envelope.RANDOM
            where = self._envelope_place(tensor_bytes(args))
            if deterministic and where and envelope.wants_float64(values, args, self.reference):
                self.on_host = where == "host"
                self.reference64 = envelope.float64_model(self.reference, self.on_host)
        del args, out
        if self.reference64 is None:
            return offload(cmp.Expected(values))
        if redraw is None:
            return offload(cmp.Expected(values, self._float64(inputs, values)))
        expected = offload(cmp.Expected(values))
        drawn = fingerprint(inputs)

        def pending() -> list[Any] | None:
            again = redraw()
            if fingerprint(again) != drawn:  # a task whose inputs do not redraw the same
                return None  # no envelope: the float32 reference alone (stricter) decides
            return offload(cmp.Expected(expected.values,
                                        self._float64(again, expected.values))).exact  # fmt: skip

        expected.pending = pending
        return expected

    def _with_strict(self, values: list[Any], inputs: list[Any],
                     redraw: Callable[[], list[Any]] | None) -> cmp.Expected:  # fmt: skip
        """The mode's reference `values`, with the strict float32 evaluation of the same
        inputs to be made when needed (from a redraw, or from a copy of `inputs` kept now)."""
        expected = offload(cmp.Expected(values))
        if (self.seen or set()) & envelope.RANDOM:  # a second evaluation draws other numbers
            return expected
        kept = None if redraw is not None else to_device(inputs, self.device)
        drawn = fingerprint(inputs)

        def strict() -> cmp.Expected | None:
            again = redraw() if redraw is not None else kept
            if again is None or fingerprint(again) != drawn:
                return None  # inputs that do not redraw the same: the mode's reference decides
            references = self.strict_references()
            return None if references is None else references(widened(again))

        expected.strict = strict
        return expected

    def strict_references(self) -> References | None:
        """The strict float32 References of this task (made on first use): the reference
        with its parameters and buffers widened to float32 (a bf16 model's values, exactly),
        or the same reference for tf32, in the fp32 mode with its float64 envelope. None when
        the model cannot be copied (an unpicklable attribute): the mode's reference decides."""
        if self._strict is None:
            strict = self.reference
            if self.mode.casts and isinstance(strict, torch.nn.Module):
                try:
                    strict = converted_copy(strict, torch.float32)
                except Exception:
                    return None
            self._strict = References(strict, self.device, self.envelope_max_gb,
                                      envelope_host_max_gb=self.envelope_host_max_gb)  # fmt: skip
        return self._strict

    def _envelope_place(self, input_bytes: int) -> str | None:
        """Where the float64 evaluation runs: "device", "host" (inputs too large for the GPU's
        share, small enough for the host's) or None (no envelope)."""
        if input_bytes <= self.envelope_max_bytes:
            return "device"
        host_max = self.envelope_host_max_gb * (1 << 30)
        return "host" if self.device.type == "cuda" and input_bytes <= host_max else None

    def _float64(self, inputs: list[Any], values: list[Any]) -> list[Any] | None:
        assert self.reference64 is not None
        if self.on_host:  # the copies to the host are GPU work (the caller's hold covers it)
            host = to_device(inputs, torch.device("cpu"))
            with gpu_lock.released(str(self.device)):  # CPU work: timings need not wait for it
                return envelope.evaluate(self.reference64, host, values, cmp.flatten)
        # Float32 inputs are copied (to float64) by evaluate; anything else is copied here.
        private = [x if isinstance(x, torch.Tensor) and x.dtype == torch.float32
                   else to_device([x], self.device)[0] for x in inputs]  # fmt: skip
        return envelope.evaluate(self.reference64, private, values, cmp.flatten)


# Reference bytes per input set kept on the GPU; larger ones wait on the host (five sets of a
# 10 GB output and its float64 evaluation would not fit beside the inputs) and are moved back
# for their comparison, which runs on the device of the candidate's output.
REFERENCE_DEVICE_BYTES = 2 << 30


def offload(expected: cmp.Expected) -> cmp.Expected:
    exact_tensors = [t for x in expected.exact or [] if isinstance(x, envelope.Float64Leaf)
                     for t in (x.value, x.spread)]  # fmt: skip
    tensors = [x for x in expected.values if isinstance(x, torch.Tensor)] + exact_tensors
    if not tensors or not tensors[0].is_cuda:
        return expected
    if tensor_bytes(tensors) <= REFERENCE_DEVICE_BYTES:
        return expected

    def host(x: Any) -> Any:
        if isinstance(x, envelope.Float64Leaf):
            return x.to("cpu")
        return x.cpu() if isinstance(x, torch.Tensor) else x

    exact = None if expected.exact is None else [host(x) for x in expected.exact]
    return cmp.Expected([host(x) for x in expected.values], exact)


def fetch_output(worker: WorkerChannel, name: str) -> list[Any]:
    """The worker's kept output `name`: written to its file now (the worker's "save") and read
    onto the host. File work only, so the caller holds no GPU lock through it (onto() then
    moves it to the references' device under one)."""
    worker.request({"op": "save", "output": name})
    path = os.path.join(worker.workdir, name)
    with worker.harness_work():
        try:
            value = torch.load(path, weights_only=True, map_location="cpu")
        except Exception as exc:
            raise Rejected(
                {"status": "crashed", "reason": f"unreadable output file: {exc}"}
            ) from exc
    if not isinstance(value, list):
        raise Rejected({"status": "crashed", "reason": "malformed output file"})
    with contextlib.suppress(OSError):
        os.remove(path)
    return value


def onto(values: Any, device: torch.device) -> Any:
    """`values` (tensors in nested lists) copied onto `device`: GPU work, under a lock."""
    if isinstance(values, torch.Tensor):
        return values.to(device)
    if isinstance(values, list):
        return [onto(v, device) for v in values]
    return values

"""GPU memory admission for `drtriton eval kernelbench`: problems that share a GPU start only
while their estimated footprints fit in it.

Why: on 2026-11-30, with six or seven problems per H200, about a dozen of the 168 dev problems
failed or lost their only candidate for want of memory (an input set that could not be drawn,
a reference or a timed call out of memory). Level 1 holds inputs of up to 1.6G float32
elements (6.4 GB each), and one verification keeps several copies of them.

The estimate: the problem's inputs and parameters are built on the meta device (shapes and
dtypes only: nothing is allocated and no random number is drawn), and a running problem is
taken to hold COPIES times their bytes: the harness's inputs and the sandboxed worker's, the
reference's outputs and the candidate's, and the comparison's chunks. A GPU takes another
problem while the estimates of the problems on it stay within its budget (SHARE of its memory);
an idle GPU takes any problem, so one that alone exceeds the budget still runs, by itself.
A problem whose shapes cannot be read this way counts as zero (no constraint).

COPIES was 5 until the rerun of 2026-11-30's sixth session: with seven problems on an H200,
problems of 6-7 GB of inputs (L1 ReLU, GELU, ELU, Softmax, InstanceNorm) still lost their
candidates to out-of-memory errors. The error messages listed processes holding 29-37 GB each
while the largest inputs were 6-7 GB: 5 copies undercounted. 10 is a judgment from those
figures, not a measured peak.

Outputs count too: the model also runs on the meta device, and the estimate is the larger of
COPIES x (inputs + parameters) and IO_COPIES x (inputs + parameters + outputs). A problem whose
output dwarfs its inputs (KernelBench L1 7: 32768 x 64 times 64 x 32768, 17 MB in, a 4.3 GB
product) was estimated at 0.2 GB before, beside processes that hold several copies of that
product. For the problems of the note above (output as large as the input) both terms agree
(IO_COPIES = COPIES / 2), so no estimate is lower than before.

Timed input sets count too: the worker times its calls over up to `trials` input sets (as many
as fit in InputSets.TIMING_BYTES) and keeps a clone of each for the flush-and-restore, so a
mid-sized problem holds more than COPIES of its data. KernelBench L1 34 (instance norm, 1.75 GB
of input and as much output) timed over four sets: six verifications at once filled the H200's
139.6 GB (23 GB each; one worker alone held 13.1 GB) against an estimate of 17.5 GB each
(h200-2026-12-01-e). With 2 x the timed sets + 3 x (data + outputs), 24.5 GB, verify-batch ran
about four at once beside smaller kernels, and one of five still ran out of memory in the
worker's timing warm-ups (h200-2026-12-03-c): so the second term is now 2 x the timed sets +
IO_COPIES x (data + outputs), 31.5 GB there (three at once). For the 6-7 GB problems (one
timed set) it is 77 GB against 64 before: one at a time, as before.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

COPIES = 10
IO_COPIES = 5
SHARE = 0.85
ALONE = 1 << 62  # the estimate of a problem that must run by itself: more than any GPU


def _tensor_bytes(value: Any) -> int:
    import torch

    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(_tensor_bytes(v) for v in value)
    if isinstance(value, dict):
        return sum(_tensor_bytes(v) for v in value.values())
    return 0


@dataclass(frozen=True)
class ProblemBytes:
    """A KernelBench problem's tensor bytes, read on the meta device."""

    data: int = 0  # inputs and parameters (buffers too)
    outputs: int = 0  # what forward returns; 0 when the model does not run on meta

    @property
    def moved(self) -> int:
        """Inputs, parameters and outputs: what a verification draws, copies and compares."""
        return self.data + self.outputs


@functools.lru_cache(maxsize=512)
def problem_bytes(code: str) -> ProblemBytes:
    """The bytes of `code`'s inputs, parameters and outputs, with nothing allocated and no
    random number drawn (the model runs on meta tensors); zeros when the problem cannot be
    built there, outputs 0 when only its forward cannot run there. `code` is a KernelBench
    module task or a functional one (fused_operator + get_inputs: verify-batch's pairs)."""
    import torch

    try:
        # Trusted benchmark code; under the meta device even module-level tensors are shapes.
        with torch.device("meta"), contextlib.redirect_stdout(None):
            forward, inputs, state = _meta_task(code)
    except Exception:  # any failure: no estimate, the problem is admitted like before
        return ProblemBytes()
    data = _tensor_bytes(inputs) + _tensor_bytes(state)
    try:
        with torch.device("meta"), torch.no_grad(), contextlib.redirect_stdout(None):
            outputs = _tensor_bytes(forward(*inputs))
    except Exception:  # data-dependent code (a .item(), a nonzero) has no meta run
        outputs = 0
    return ProblemBytes(data, outputs)


def _meta_task(code: str) -> tuple[Callable[..., Any], list[Any], list[Any]]:
    """(forward, inputs, parameters and buffers) of a task, built under the caller's device."""
    from drtriton.verify.task import FUNCTIONAL, load_task, task_kind

    if task_kind(code) == FUNCTIONAL:
        module = load_task(code).module
        return module.fused_operator, list(module.get_inputs()), []
    from drtriton.frontend.export import load_module_task

    task = load_module_task(code)
    return task.model, task.inputs, [*task.model.parameters(), *task.model.buffers()]


def data_bytes(code: str) -> int:
    """Bytes of a KernelBench problem's inputs and parameters, read on the meta device; 0 when
    the problem cannot be built there."""
    return problem_bytes(code).data


def footprint(code: str, trials: int = 5) -> int:
    """Estimated GPU bytes one verification of `code`'s problem holds (module doc), with
    `trials` input sets (Options.trials); 0 when the problem cannot be read on meta."""
    from drtriton.verify.inputs import InputSets

    sizes = problem_bytes(code)
    timed_sets = max(1, min(trials, InputSets.TIMING_BYTES // max(sizes.data, 1)))
    return max(COPIES * sizes.data, 2 * timed_sets * sizes.data + IO_COPIES * sizes.moved)


def gpu_budgets(devices: Sequence[str], share: float = SHARE) -> dict[str, int]:
    """Bytes each CUDA device of `devices` may hold in estimates; none for the CPU."""
    import torch

    budgets: dict[str, int] = {}
    for device in set(devices):
        if device.startswith("cuda"):
            index = torch.device(device).index or 0
            budgets[device] = int(share * torch.cuda.get_device_properties(index).total_memory)
    return budgets


class Admission:
    """Which queued problem a free worker slot on `device` may start (see the module doc)."""

    def __init__(self, budgets: dict[str, int], need: Callable[[Any], int]) -> None:
        self.budgets = budgets
        self.need = need
        self.held: dict[str, list[int]] = {}  # device -> estimates of its running problems
        self._needs: dict[int, int] = {}  # id(problem) -> estimate, computed once

    def _estimate(self, problem: Any) -> int:
        key = id(problem)
        if key not in self._needs:
            self._needs[key] = self.need(problem)
        return self._needs[key]

    def alone(self, problem: Any) -> None:
        """From now on `problem` starts only on an idle device and nothing starts beside it;
        while it waits first in the queue, nothing starts before it (it is not starved)."""
        self._needs[id(problem)] = ALONE

    def pick(self, queue: Sequence[Any], device: str) -> int | None:
        """Index in `queue` of the first problem that fits on `device` now, or None."""
        budget = self.budgets.get(device)
        running = self.held.get(device, [])
        if budget is None or not running:
            return 0 if queue else None
        if queue and self._estimate(queue[0]) == ALONE:
            return None
        room = budget - sum(running)
        for i, problem in enumerate(queue):
            if self._estimate(problem) <= room:
                return i
        return None

    def start(self, problem: Any, device: str) -> int:
        estimate = self._estimate(problem) if device in self.budgets else 0
        self.held.setdefault(device, []).append(estimate)
        return estimate

    def finish(self, device: str, estimate: int) -> None:
        self.held[device].remove(estimate)

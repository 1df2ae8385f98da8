"""Eager PyTorch and torch.compile of the task: the baselines a candidate is timed against.

Both run in the harness (tasks are trusted, candidates are not), in the verification's precision
mode like the reference and the candidate's worker (precision.py): strict float32 by default, the
mode's dtype and TF32 flags otherwise (TF32 on exactly in tf32, where the candidate may use it
too), so that a speed-up compares two programs that meet the same tolerance and no speed-up comes
from a precision the baseline was denied. In fp32, eager with PyTorch's defaults (TF32 cuDNN
convolutions, what KernelBench's harness times) is timed beside them when the task has a
convolution or a matrix product (elsewhere TF32 changes nothing, and it equals eager); the other
modes have no such series (tf32 allows more than the defaults; bf16 and fp16 tensors have no TF32).

What is kept between verifications (one `Baselines` per harness Verifier): only the compiled
task, since compiling it again for every candidate would cost more than verifying the
candidate (RL verifies many candidates of one task). Times are not kept: every verification
times eager and torch.compile again, interleaved with its candidate (measure.py), so that the
noise of one timing window lands on both sides of the ratio.

torch.compile's first call compiles (Dynamo and Inductor: seconds to a minute of CPU) and then
runs (Inductor's runtime autotuning launches kernels). It holds the GPU's lock exclusively, and
torch's compile-start and compile-end callbacks release the hold while Dynamo compiles, so that
neither the compilation stalls other processes' work nor the launches overlap any: Inductor's
runtime autotuning times kernel configs and keeps the fastest (cached on disk), and a choice
timed beside other processes' kernels would be a draw, a slower baseline being as wrong as a
slower candidate (the candidate's own autotuned first call is held the same way: harness.py).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import torch

from drtriton.verify import gpu_lock
from drtriton.verify.precision import STRICT, Mode, in_mode, pytorch_defaults
from drtriton.verify.timing import clone

# ATen operators whose eager speed depends on TF32 (cuDNN convolutions, cuBLAS products).
TF32_SENSITIVE = frozenset(
    "convolution cudnn_convolution convolution_overrideable _convolution conv2d conv3d conv1d "
    "conv_transpose2d conv_transpose3d mm addmm bmm baddbmm matmul linear mv addmv dot".split()
)


def strict(call: Callable[..., Any]) -> Callable[..., Any]:
    """`call` under strict float32 (TF32 off), as every fp32 reference and candidate runs."""
    return in_mode_of(STRICT, call)


def in_mode_of(mode: Mode, call: Callable[..., Any]) -> Callable[..., Any]:
    """`call` under the mode's TF32 flags, as the mode's reference and candidate run."""

    def run(*args: Any) -> Any:
        with in_mode(mode):
            return call(*args)

    return run


def with_tf32_defaults(call: Callable[..., Any]) -> Callable[..., Any]:
    """`call` under PyTorch's default precision flags (TF32 cuDNN convolutions)."""

    def run(*args: Any) -> Any:
        with pytorch_defaults():
            return call(*args)

    return run


@contextlib.contextmanager
def _compile_callbacks(pause: Callable[[], None], resume: Callable[[], None]) -> Iterator[None]:
    """pause/resume around each Dynamo compilation, through torch's compile callbacks (when
    this torch has them; otherwise the hold is simply kept through the compilation)."""
    try:
        from torch._dynamo.callback import CallbackTrigger, callback_handler
    except ImportError:  # pragma: no cover - torch >= 2.6 has them
        yield
        return
    compiling = (CallbackTrigger.DYNAMO, CallbackTrigger.LAZY_BACKWARD)

    def start(args: Any) -> None:
        if getattr(args, "callback_trigger", None) in compiling:
            pause()

    def end(args: Any) -> None:
        if getattr(args, "callback_trigger", None) in compiling:
            resume()

    callback_handler.register_start_callback(start)
    callback_handler.register_end_callback(end)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # torch._dynamo.reset() clears them
            callback_handler.remove_start_callback(start)
            callback_handler.remove_end_callback(end)


class Baselines:
    """The compiled tasks of one harness process's verifications."""

    def __init__(self) -> None:
        # (task, device, eval mode, precision mode) -> the compiled callable, or why it failed
        # to compile. The mode is in the key: a bf16 model is another program (and the
        # compiled callable holds the reference it was made from).
        self._compiled: dict[tuple[str, str, bool, str], Callable[..., Any] | str] = {}

    def has(self, source: str, device: str, eval_mode: bool, mode: Mode = STRICT) -> bool:
        """Whether the task's compilation (or its failure) is kept here already."""
        return _key(source, device, eval_mode, mode) in self._compiled

    def compiled(self, source: str, reference: Callable[..., Any], inputs: list[Any],
                 device: str, eval_mode: bool,
                 mode: Mode = STRICT) -> tuple[Callable[..., Any] | None, str | None]:  # fmt: skip
        """torch.compile of the task, compiled on its first use here: (callable, None), or
        (None, why) when it does not compile (which is not the candidate's fault)."""
        key = _key(source, device, eval_mode, mode)
        if key not in self._compiled:
            self._compiled[key] = _compile(reference, inputs, device, mode)
        found = self._compiled[key]
        return (None, found) if isinstance(found, str) else (found, None)


def _key(source: str, device: str, eval_mode: bool, mode: Mode) -> tuple[str, str, bool, str]:
    return (hashlib.sha256(source.encode()).hexdigest(), device, eval_mode, mode.name)


def _compile(reference: Callable[..., Any], inputs: list[Any], device: str, mode: Mode) -> Any:
    try:
        compiled = torch.compile(reference)
        # Compiled under the mode's flags: Inductor reads allow_tf32 when it picks its GEMMs.
        with torch.no_grad(), in_mode(mode), gpu_lock.hold(device, gpu_lock.EXCLUSIVE):
            with gpu_lock.paused_while(device, _compile_callbacks):
                compiled(*clone(inputs))
        return compiled
    except Exception as exc:  # the baseline failing to compile is not the candidate's fault
        return f"{type(exc).__name__}: {exc}"[:500]


def needs_tf32_series(seen_ops: set[str]) -> bool:
    """Whether eager with PyTorch's defaults can differ from strict eager for this task."""
    return bool(seen_ops & TF32_SENSITIVE)

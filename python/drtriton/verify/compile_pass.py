"""The compile pass: the candidate's first call with no work on the GPU, so that Triton compiles
its kernels while the harness holds no lock.

Why: compiling a candidate's kernels takes seconds of CPU (on the H200, 1-8 s per fragment), and
the first call that compiles them also launches them. Held under the GPU's lock, those seconds
stall every other process's timing; unheld (as before), the launches that follow each compile
ran on the GPU while other processes timed, and a KernelBench run measured one-operator kernels
4-17x slower than eager (benchmarks/results/h200-2026-11-30-d) although alone they tie.

So the worker calls the candidate once more, first, on inputs that are allocated but not drawn,
with the device's work turned off:
- every `kernel[grid](...)` compiles and returns without launching (Triton's own warm-up path:
  `JITFunction.run(warmup=True)`; an autotuner compiles each of its configs and times none);
- every torch operator except views and empty allocations is replaced by an allocation of its
  result's shape: the operator runs on the meta device (shape inference only), and a fresh
  `empty_strided` of that shape stands for its result; an operator that writes into an argument
  (`copy_`, `out=`) returns that argument untouched.
What this pass returns is never looked at, and nothing in it is a verdict: an exception (an
operator with no meta implementation, a host read of a value) ends the pass, and the first
correctness call, which runs under the lock, compiles whatever is left. Kernels specialised on
values the pass did not see (an integer argument read from a tensor) compile there too.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

from drtriton.verify.poison import op_name

# Operators that do no work on the device: views, metadata and uninitialised allocations.
NO_DEVICE_WORK = frozenset(
    """
    empty empty_like empty_strided new_empty new_empty_strided
    view _unsafe_view _reshape_alias permute transpose t expand unsqueeze squeeze select slice
    as_strided alias detach split split_with_sizes unsafe_split unbind narrow diagonal
    view_as_real view_as_complex unfold chunk movedim lift_fresh
    sym_size sym_stride sym_numel sym_storage_offset is_same_size set_ resize_ resize_as_
    _has_compatible_shallow_copy_type
    """.split()
)


def _meta(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device="meta")
    if isinstance(x, torch.device):
        return torch.device("meta")
    return x


def _device_of(args: Any, kwargs: dict[str, Any]) -> torch.device:
    found: list[torch.device] = []

    def look(x: Any) -> Any:
        if isinstance(x, torch.Tensor) and x.device.type != "meta":
            found.append(x.device)
        return x

    tree_map(look, (args, kwargs))
    if "device" in kwargs and kwargs["device"] is not None:
        return torch.device(kwargs["device"])
    cuda = [d for d in found if d.type == "cuda"]
    return (cuda or found or [torch.device("cpu")])[0]


def _written_arguments(func: Any, args: Any, kwargs: dict[str, Any]) -> dict[int, Any]:
    """Return index -> the argument that return aliases and writes (in-place and out= ops)."""
    schema = func._schema
    named = dict(zip([a.name for a in schema.arguments], args, strict=False)) | kwargs
    aliased: dict[int, Any] = {}
    for i, ret in enumerate(schema.returns):
        info = ret.alias_info
        if info is None or not info.is_write:
            continue
        for arg in schema.arguments:
            if arg.alias_info is not None and arg.alias_info.before_set == info.before_set:
                aliased[i] = named.get(arg.name)
                break
    return aliased


class NoDeviceWork(TorchDispatchMode):
    """Torch operators as allocations of their results' shapes (see the module docstring)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if op_name(func) in NO_DEVICE_WORK:
            return func(*args, **kwargs)
        device = _device_of(args, kwargs)
        shaped = func(*tree_map(_meta, args), **tree_map(_meta, kwargs))
        written = _written_arguments(func, args, kwargs)
        if written:
            outs = list(shaped) if isinstance(shaped, (tuple, list)) else [shaped]
            outs = [written.get(i, o) for i, o in enumerate(outs)]
            shaped = type(shaped)(outs) if isinstance(shaped, (tuple, list)) else outs[0]

        def real(x: Any) -> Any:
            if isinstance(x, torch.Tensor) and x.device.type == "meta":
                return torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device=device)
            return x

        return tree_map(real, shaped)


def shaped_like(values: list[Any], device: str) -> list[Any]:
    """Uninitialised tensors on `device` with the shapes, strides and dtypes of `values`."""
    return [torch.empty_strided(v.size(), v.stride(), dtype=v.dtype, device=device)
            if isinstance(v, torch.Tensor) else v for v in values]  # fmt: skip


@contextlib.contextmanager
def no_device_work(launches: Any) -> Iterator[None]:
    """Within: Triton launches compile only (LaunchCounter.compile_only) and torch operators
    allocate only (NoDeviceWork)."""
    launches.compile_only = True
    try:
        with torch.no_grad(), NoDeviceWork():
            yield
    finally:
        launches.compile_only = False


def run(entry: Any, inputs: list[Any], launches: Any) -> dict[str, Any]:
    """The compile pass over `entry(*inputs)`: how long it took and whether it finished."""
    began = time.perf_counter()
    reason = ""
    try:
        with no_device_work(launches):
            entry(*inputs)
    except BaseException as exc:  # the pass judges nothing: the first real call will
        reason = f"{type(exc).__name__}: {exc}"[:300]
    return {"complete": not reason, "reason": reason,
            "seconds": round(time.perf_counter() - began, 3)}  # fmt: skip

"""Genuine kernel use: the poisoned-torch dispatch mode and the Triton launch counter.

Both run inside the candidate's worker, installed before the candidate is imported.

Poisoning (the paper's no-op monkey patch, done at the dispatcher). The paper replaces the task's
torch operators with no-ops and checks that the result survives. Patching Python names misses
aliases (`torch.ops.aten.relu`, `Tensor.__matmul__`, `torch._C._nn.linear`, an nn.Module that
calls F.conv2d inside), so here a TorchDispatchMode sees every ATen operator the candidate's call
runs, whatever spelling reached it. Operators fall in three classes:
- ALLOCATE_AND_VIEW: allocation, views, metadata. Always allowed and never poisoned: DESIGN.md
  lets torch "allocate and reshape". Triton's interpreter also needs them (it copies tensors to
  and from the host with empty/set_/copy_).
- COPY: copies and casts (clone, copy_, _to_copy). Allowed, unless the task itself uses them (a
  transpose-then-contiguous task must not be answered by `.contiguous()`): those are poisoned.
  Copies made while Triton's interpreter launches a kernel are always allowed: the interpreter
  moves every argument to the host and back with copy_, so on the CPU a task that uses copy_
  (instance_norm with running stats) would otherwise reject every candidate.  A copy cannot
  compute the task, and torch code inside a kernel body would not compile on a GPU anyway.
- everything else is compute: during a poisoned call its result is overwritten with random
  values (booleans flipped), and every call is recorded.
A hybrid (drtriton optimize) may name operators it deliberately leaves in PyTorch
(Options.allow_torch, ATen overload-packet names): those are neither poisoned nor recorded;
every other operator keeps the rule below, and the call must still launch a Triton kernel.
Verdict rule (strict, and stronger than the paper's): a call that runs any torch compute operator
is `not_genuine`, whether or not the output survived. The paper's survival test alone can be
gamed: a candidate that probes whether torch is poisoned (`torch.add(1, 1) != 2`) would take the
kernel path while watched and a faster torch path while timed. Under this rule the probe itself
is a compute operator, so it is caught; the timed calls run under the same mode (count only).

Launch counting: `JITFunction.run` and the interpreter's `InterpretedFunction.run` are wrapped
(class attributes, patched before the candidate loads), so every `kernel[grid](...)`, autotuned or
not, is counted. A call that launches no kernel is `not_genuine` (a decoy kernel: defined, never
launched, result from elsewhere).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

ALLOCATE_AND_VIEW = frozenset(
    """
    empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like new_zeros zero_
    ones ones_like new_ones full full_like new_full fill_ scalar_tensor lift_fresh arange
    view _unsafe_view _reshape_alias reshape permute transpose t expand unsqueeze squeeze select
    slice as_strided alias detach split split_with_sizes unsafe_split unbind narrow diagonal
    view_as_real view_as_complex unfold chunk movedim
    sym_size sym_stride sym_numel sym_storage_offset is_same_size set_ resize_ resize_as_
    _has_compatible_shallow_copy_type
    """.split()
)
COPY = frozenset(
    "clone copy_ _to_copy _copy_from _copy_from_and_resize lift_fresh_copy contiguous".split()
)


def op_name(func: Any) -> str:
    return func.overloadpacket.__name__


class DispatchRecord(TorchDispatchMode):
    """Records the overload packets that dispatch under it (what a hybrid keeps in PyTorch)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.add(op_name(func))
        return func(*args, **(kwargs or {}))


# A matrix product's dispatch depends on more than shapes: F.linear reaches addmm, mm, bmm or
# matmul by the rank, bias and strides of what it gets, and a value made by a Triton kernel is
# laid out differently from the zeros a probe runs on (KernelBench L3 32, a vision transformer,
# was rejected on 2026-11-30 for aten.mm in a hybrid that keeps its linears in PyTorch). So a
# kept product allows its whole family: the same computation under another entry point.
PRODUCT_FAMILY = frozenset("mm addmm bmm baddbmm matmul linear mv addmv dot".split())


def allowed_packets(seen: set[str]) -> tuple[str, ...]:
    """Options.allow_torch for a hybrid whose kept lines dispatched `seen`."""
    names = seen | PRODUCT_FAMILY if seen & PRODUCT_FAMILY else set(seen)
    return tuple(sorted(names - ALLOCATE_AND_VIEW))


class TorchWatch(TorchDispatchMode):
    """Records torch compute run under it; with `poison`, scribbles over their results."""

    def __init__(
        self,
        poisoned_copies: frozenset[str] = frozenset(),
        launches: LaunchCounter | None = None,
        allowed: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__()
        self.poison = True
        self.poisoned_copies = poisoned_copies
        self.allowed = allowed  # Options.allow_torch: what a hybrid leaves in PyTorch on purpose
        self.launches = launches
        self.hits: Counter[str] = Counter()

    def _allowed(self, name: str) -> bool:
        if name in ALLOCATE_AND_VIEW or name in self.allowed:
            return True
        if name not in COPY:
            return False
        interpreting = self.launches is not None and self.launches.interpreting > 0
        return interpreting or name not in self.poisoned_copies

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self._allowed(op_name(func)):
            return out
        self.hits[str(func)] += 1
        if self.poison:
            out = _scribble(out)
        return out


def _scribble(out: Any) -> Any:
    if isinstance(out, bool):
        return not out
    if isinstance(out, (int, float)):
        return out + 12345
    leaves, _ = tree_flatten(out)
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor) and leaf.numel():
            if leaf.is_floating_point() or leaf.is_complex():
                leaf.normal_(3.0, 7.0)
            elif leaf.dtype == torch.bool:
                leaf.logical_not_()
            else:
                leaf.random_(0, 100)
    return out


class LaunchCounter:
    """Counts Triton kernel launches (compiled and interpreted).

    With `compile_only` (the worker's compile pass, compile_pass.py) a launch compiles its
    kernel and returns without running it, and an autotuner compiles every config and times
    none; nothing is counted then."""

    def __init__(self) -> None:
        self.count = 0
        self.interpreting = 0  # depth of interpreter launches in progress (see TorchWatch)
        self.compile_only = False

    def install(self) -> None:
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction

        targets = [JITFunction]
        try:
            from triton.runtime.interpreter import InterpretedFunction

            targets.append(InterpretedFunction)
        except ImportError:  # pragma: no cover - every triton 3.x has it
            pass
        for cls in targets:
            self._wrap(cls, interpreted=cls is not JITFunction)
        self._wrap_autotuner(Autotuner)

    def _wrap(self, cls: type, interpreted: bool) -> None:
        original = cls.run
        counter = self

        def run(self, *args, grid, warmup, **kwargs):
            if counter.compile_only:
                return original(self, *args, grid=grid, warmup=True, **kwargs)
            if not warmup:
                counter.count += 1
            counter.interpreting += interpreted
            try:
                return original(self, *args, grid=grid, warmup=warmup, **kwargs)
            finally:
                counter.interpreting -= interpreted

        cls.run = run

    def _wrap_autotuner(self, cls: type) -> None:
        original = cls.run
        counter = self

        def run(self, *args, **kwargs):
            if counter.compile_only:  # compile every config; benchmarking them would launch
                self.warmup(*args, **{k: v for k, v in kwargs.items() if k != "warmup"})
                return None
            return original(self, *args, **kwargs)

        cls.run = run

"""The teacher: template Triton kernels for any catalog program, generated in C++.

    from drtriton.teach import emit, variants, unsupported_ops
    candidate = emit(task_source)              # one candidate (the heuristic configuration)
    candidates = variants(task_source, k=4)    # up to k distinct valid candidates
    unsupported_ops(task_source)               # [] when the generator covers the program
    emit(task_source, generic_shapes=True)     # sizes read at run time (below)
    generic_unsupported_ops(task_source)       # [] when generic_shapes applies

The generator (core/codegen) fuses elementwise producers into every kernel, elementwise
consumers into the kernel of the reduction, norm, contraction or pool that feeds them, and
emits one `@triton.jit` kernel per fused group plus the `triton_fused_operator` wrapper.
`drtriton teach PROGRAMS.jsonl --out PAIRS.jsonl` (cli.py) turns program records into
pair records for SFT.

`generic_shapes=True` emits a candidate for every shape of the task's rank and broadcast
pattern: the wrapper unpacks sizes (`x0_s0, x0_s1 = x0.shape`), allocates and sizes grids
from them, and kernels take them as arguments, so the text of one operator chain is the
same at every size (a model copies names instead of doing arithmetic on sizes); output
lengths of convolutions and pools are wrapper lines of torch's formula with the call's own
numbers.  Programs with 2^31-element tensors keep the specialized candidate;
`generic_unsupported_ops` says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drtriton.errors import UserError


def _core() -> Any:
    from drtriton import _core

    return _core


def emit(
    source: str,
    variant: int = 0,
    fuse_epilogue: bool = True,
    generic_shapes: bool = False,
    column_stats: bool = False,
) -> str:
    """The candidate text for a functional task; UserError when it cannot be emitted.
    `column_stats`: training batch norms take their statistics from the contractions' tiles
    (core/codegen/codegen.h CodegenOptions::column_stats; `variants` tries it too)."""
    ok, payload, line = _core().codegen_emit(
        source, variant, fuse_epilogue, generic_shapes, column_stats
    )
    if not ok:
        where = f"line {line}: " if line else ""
        raise UserError(f"{where}{payload}")
    return payload


def variants(
    source: str, k: int, generic_shapes: bool = False, amplified: Sequence[str] = ()
) -> list[str]:
    """Up to `k` distinct candidates (variant 0 first); [] when the task is unsupported.
    `amplified`: output names whose rounding an operator outside the task magnifies: the
    contractions reaching them take the full-precision split (core/codegen/amplify.h)."""
    try:
        return list(_core().codegen_variants(source, k, generic_shapes, list(amplified)))
    except ValueError as exc:
        raise UserError(str(exc)) from exc


def unsupported_ops(source: str) -> list[str]:
    """Operators (or configurations, e.g. 'instance_norm(use_input_stats=False)') of the
    task that the generator cannot emit yet."""
    try:
        return list(_core().codegen_unsupported(source))
    except ValueError as exc:
        raise UserError(str(exc)) from exc


def generic_unsupported_ops(source: str) -> list[str]:
    """Why `generic_shapes=True` falls back to the specialized candidate for the task
    (such as '2^31 elements'); [] when the generic mode applies."""
    try:
        return list(_core().codegen_generic_unsupported(source))
    except ValueError as exc:
        raise UserError(str(exc)) from exc


__all__ = ["emit", "generic_unsupported_ops", "unsupported_ops", "variants"]

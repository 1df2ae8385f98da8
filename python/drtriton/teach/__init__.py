"""The teacher: template Triton kernels for any catalog program, generated in C++.

    from drtriton.teach import emit, variants, unsupported_ops
    candidate = emit(task_source)              # one candidate (the heuristic configuration)
    candidates = variants(task_source, k=4)    # up to k distinct valid candidates
    unsupported_ops(task_source)               # [] when the generator covers the program

The generator (core/codegen) fuses elementwise producers into every kernel, elementwise
consumers into the kernel of the reduction, norm, contraction or pool that feeds them, and
emits one `@triton.jit` kernel per fused group plus the `triton_fused_operator` wrapper.
`drtriton teach PROGRAMS.jsonl --out PAIRS.jsonl` (cli.py) turns program records into
pair records for SFT.
"""

from __future__ import annotations

from typing import Any

from drtriton.errors import UserError


def _core() -> Any:
    from drtriton import _core

    return _core


def emit(source: str, variant: int = 0, fuse_epilogue: bool = True) -> str:
    """The candidate text for a functional task; UserError when it cannot be emitted."""
    ok, payload, line = _core().codegen_emit(source, variant, fuse_epilogue)
    if not ok:
        where = f"line {line}: " if line else ""
        raise UserError(f"{where}{payload}")
    return payload


def variants(source: str, k: int) -> list[str]:
    """Up to `k` distinct candidates (variant 0 first); [] when the task is unsupported."""
    try:
        return list(_core().codegen_variants(source, k))
    except ValueError as exc:
        raise UserError(str(exc)) from exc


def unsupported_ops(source: str) -> list[str]:
    """Operators (or configurations, e.g. 'instance_norm(use_input_stats=False)') of the
    task that the generator cannot emit yet."""
    try:
        return list(_core().codegen_unsupported(source))
    except ValueError as exc:
        raise UserError(str(exc)) from exc


__all__ = ["emit", "unsupported_ops", "variants"]

"""Output comparison: shape, dtype and values against the reference.

Values pass only if both tests pass:
1. elementwise: |out - ref| <= atol + rtol * |ref| on finite entries; NaN and +-inf at exactly the
   reference's positions.
2. norm: ||out - ref||_2 <= 10 * rtol * ||ref||_2 + (atol / 100) * sqrt(n).
   The elementwise test alone lets trivially small outputs through (KernelBench issue 165: a
   softmax over 16,384 values has entries near 6e-5 < atol, so all zeros pass an allclose). The
   norm test scales with the output: zeros give ||out - ref|| = ||ref|| and fail, while an honest
   fp32 kernel's rounding error (about 1e-6 relative) passes with two orders of margin. The small
   absolute term lets a reference that is exactly zero accept rounding noise of 1e-6 per element.

Default tolerances: atol = rtol = 1e-4 for fp32/fp64 (DESIGN.md), 1e-2 for fp16/bf16; both are
configurable and then apply to every dtype. Integer and bool outputs must match exactly.
"""

from __future__ import annotations

import math
from typing import Any

import torch

DEFAULT_TOLERANCE = {
    torch.float64: 1e-4,
    torch.float32: 1e-4,
    torch.float16: 1e-2,
    torch.bfloat16: 1e-2,
}


def flatten(value: Any) -> list[Any]:
    """A result as a flat list of tensors and scalars (tuples and lists are walked in order)."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


def compare(out: list[Any], ref: list[Any], atol: float | None, rtol: float | None) -> str | None:
    """None when `out` matches `ref`; otherwise the first difference, in words."""
    if len(out) != len(ref):
        return f"returned {len(out)} values, expected {len(ref)}"
    for i, (o, r) in enumerate(zip(out, ref, strict=False)):
        where = f"output {i}" if len(ref) > 1 else "output"
        problem = _compare_one(o, r, atol, rtol)
        if problem:
            return f"{where}: {problem}"
    return None


def _compare_one(o: Any, r: Any, atol: float | None, rtol: float | None) -> str | None:
    if not isinstance(r, torch.Tensor):
        if isinstance(o, torch.Tensor):
            return f"returned a tensor, expected {type(r).__name__} {r!r}"
        if isinstance(r, float) and isinstance(o, (int, float)):
            ok = math.isclose(o, r, rel_tol=rtol or 1e-4, abs_tol=atol or 1e-4)
            return None if ok else f"got {o!r}, expected {r!r}"
        return None if o == r and type(o) is type(r) else f"got {o!r}, expected {r!r}"
    if type(o) is not torch.Tensor:
        return f"returned {type(o).__name__}, expected a tensor"
    if o.shape != r.shape:
        return f"shape {tuple(o.shape)}, expected {tuple(r.shape)}"
    if o.dtype != r.dtype:
        return f"dtype {o.dtype}, expected {r.dtype}"
    o, r = o.detach().cpu(), r.detach().cpu()
    if not r.is_floating_point() and not r.is_complex():
        bad = (o != r).sum().item()
        return None if bad == 0 else f"{bad} of {r.numel()} elements differ (exact match required)"
    tol = DEFAULT_TOLERANCE.get(r.dtype, 1e-4)
    atol = tol if atol is None else atol
    rtol = tol if rtol is None else rtol
    o64, r64 = (
        o.to(torch.complex128 if r.is_complex() else torch.float64),
        r.to(torch.complex128 if r.is_complex() else torch.float64),
    )
    problem = _special_values(o64, r64)
    if problem:
        return problem
    finite = torch.isfinite(r64)
    of, rf = o64[finite], r64[finite]
    diff = (of - rf).abs()
    bound = atol + rtol * rf.abs()
    outside = diff > bound
    if outside.any():
        idx = int(torch.argmax(diff - bound))
        flat = torch.nonzero(finite.reshape(-1)).reshape(-1)[idx].item()
        pos = tuple(int(p) for p in _unravel(flat, r.shape))
        return (
            f"{int(outside.sum())} of {r.numel()} elements outside atol={atol:g} rtol={rtol:g}; "
            f"worst at {pos}: got {o64.reshape(-1)[flat].item():.6g}, "
            f"expected {r64.reshape(-1)[flat].item():.6g}"
        )
    err = torch.linalg.vector_norm(of - rf).item()
    scale = torch.linalg.vector_norm(rf).item()
    limit = 10 * rtol * scale + (atol / 100) * math.sqrt(max(rf.numel(), 1))
    if err > limit:
        return (
            f"relative L2 error {err / max(scale, 1e-300):.3g} is too large (||out-ref|| = "
            f"{err:.3g} > {limit:.3g}): the output is small where the reference is not"
        )
    return None


def _special_values(o: torch.Tensor, r: torch.Tensor) -> str | None:
    if not torch.equal(torch.isnan(o), torch.isnan(r)):
        n = int((torch.isnan(o) != torch.isnan(r)).sum())
        return f"NaN at {n} positions where the reference differs"
    for sign, name in ((1, "+inf"), (-1, "-inf")):
        if r.is_complex():
            continue
        oi, ri = o == sign * math.inf, r == sign * math.inf
        if not torch.equal(oi, ri):
            return f"{name} at {int((oi != ri).sum())} positions where the reference differs"
    return None


def _unravel(flat: int, shape: torch.Size) -> list[int]:
    pos = []
    for size in reversed(shape):
        pos.append(flat % size)
        flat //= size
    return pos[::-1]

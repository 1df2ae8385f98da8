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

The reference's own rounding error (float32 outputs with a float64 reference, envelope.py).
A float32 reference is itself only one float32 evaluation. Where the task is ill-conditioned for
its inputs (normalizing a group whose variance is rounding noise, a difference of nearly equal
values) that evaluation is noise, and an honest kernel that rounds differently is exactly as right
as the reference, yet both tests above reject it: the norm test's small absolute term is the
first to. So the harness also evaluates the task in float64 (ref64; envelope.py): inputs, and a
module's parameters, cast up, the inputs moved by one float32 rounding; in the harness process,
never the candidate's. Then, elementwise,
   e = max(|ref32 - ref64|, spread)      (the reference's own error, and how far ref64 moves
                                          when the inputs move by another rounding)
   |out - ref64|   <= atol + rtol * |ref64| + ENVELOPE * max(e, rms(e))             (elementwise)
   ||out - ref64|| <= 10 * rtol * ||ref64|| + (atol / 100) * sqrt(n) + ENVELOPE * ||e||  (norm)
Rationale: ref64 is an exact answer for inputs float32 cannot tell from the given ones, which is
what an honest float32 kernel computes at best. ref32's distance to it is what float32 rounding
did to the reference, and an honest kernel's error is another draw of the same process, so of
e's size; ENVELOPE allows a different summation order and out's own rounding. (The move of the
inputs matters where torch's kernel is exact by luck: a constant group normalizes to exactly 0
with Welford's mean, not with sum / n.) The ratio of two such draws at one element is
heavy-tailed, so the elementwise envelope is at least the rms of e over the output, and e is at
least the spread of two float64 answers (inputs moved two ways, envelope.Float64Leaf): at an
isolated ill-conditioned element ref32 may by chance sit within a sliver of ref64 (program 83's
near-tie softmax rows, where torch's own bmm in another order failed without it).
With ENVELOPE >= 1 + 10 * rtol every output that passes against ref32 alone also passes here
(triangle inequality), so the rule only ever accepts more, and only where float32 itself is
unreliable: for a well-conditioned task e is about 1e-7 relative and the bounds are unchanged
(zeros for a softmax over 16,384 values still fail: e is ~1e-11 there, the entries ~6e-5).
NaN and inf positions are still those of ref32 (float32 overflow is the task's own behaviour),
except where ref64 lies within 1e-3 of float32's largest value: there inf or the largest finite
values are both right, since the order of operations decides on which side of the threshold a
value rounds (a cumulative product crossing float32's range), and except where ref32 is NaN or
inf but ref64 is finite: float32 made that special value (a product that overflows before a
later 0 gives inf * 0 = NaN; torch's CUDA cumprod scans in float32, its CPU one multiplies in
float64), so a finite output is judged against ref64 there, and ref32's special value passes
too.
Integer and bool outputs computed from floats (argmax, comparisons) must match ref32 or ref64 at
every element: where the two differ, float32 rounding decides a near-tie and each is a right
answer; where they agree (almost everywhere) ref32 alone is the answer. There is no envelope
when the float64 evaluation failed or differs in structure (envelope.py falls back to ref32
alone), for tasks that draw random numbers (two evaluations differ by more than rounding), for
tasks whose inputs exceed Options.envelope_host_max_gb (16 GB by default; above
Options.envelope_max_gb, 2 GB, the float64 evaluation runs on the host instead of the GPU, where
its copies would not fit beside the other verifications), and for outputs that are not float32.

Default tolerances: atol = rtol = 1e-4 for fp32/fp64 (DESIGN.md), 1e-2 for fp16/bf16; both are
configurable and then apply to every dtype. Integer and bool outputs must match exactly.

Precision modes other than fp32 (precision.py): the mode's tolerance applies to every output
(Options.tolerances), the mode's reference has no envelope of its own, and an output it rejects
is judged once more against the strict float32 evaluation of the same values with that
evaluation's float64 envelope (`Expected.strict`, `_judge_strict` says why this widens nothing).
Where that rejects it too, it passes only if it is no less exact than the mode's reference
itself, which then is outside the tolerance too (`_less_exact_than_baseline`; the verdict says so,
and a rejection says which of its bounds failed).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from drtriton.verify.envelope import Float64Leaf, IntegerAlternatives
from drtriton.verify.precision import MODES

# Per output dtype, for the fp32 mode (a task's own half outputs); precision.MODES holds the
# values, so each tolerance has one default.
DEFAULT_TOLERANCE = {
    torch.float64: MODES["fp32"].tolerance,
    torch.float32: MODES["fp32"].tolerance,
    torch.float16: MODES["fp16"].tolerance,
    torch.bfloat16: MODES["bf16"].tolerance,
}


@dataclass
class Expected:
    """One input set's reference: the float32-or-other leaves, and their float64 evaluation."""

    values: list[Any]
    exact: list[Any] | None = None  # per leaf: ref64, IntegerAlternatives or None; None: none
    # The float64 evaluation, not made yet (references.py): `judge` makes it the first time the
    # float32 reference alone rejects an output.
    pending: Callable[[], list[Any] | None] | None = None
    # Modes other than fp32 (references.py): the task in strict float32 on the same values
    # (half inputs and parameters widened exactly), with its own float64 envelope. Made when
    # the mode's reference rejects an output; kept in `strict_values` once made (None: none).
    strict: Callable[[], Expected | None] | None = None
    strict_values: Expected | None = None
    # Set when `judge` accepted an output only as no less exact than the mode's own
    # reference (_less_exact_than_baseline): the verdict says so (harness.py).
    by_baseline_error: bool = False


def flatten(value: Any) -> list[Any]:
    """A result as a flat list of tensors and scalars (tuples and lists are walked in order)."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


# The multiple of the reference's own error allowed on top of the tolerances (module docstring).
# Measured on 400 near-constant and exactly constant group norms (groups of 15 to 120 entries,
# magnitudes 1e-3 to 10) answered by a two-pass sum / n float32 kernel: 8 rejected 10 (constant
# groups, where sum / n is several roundings off), 16 none.
ENVELOPE = 16.0


def judge(out: list[Any], expected: Expected, atol: float | None,
          rtol: float | None) -> str | None:  # fmt: skip
    """compare() against `expected`; its pending float64 evaluation is made only when the
    float32 reference alone rejects `out`. The envelope only ever accepts more (module
    docstring), so an output that passes without it passes with it: the verdict is the one an
    evaluation made up front would give, and the float64 work (seconds per input set for a
    convolution on the H200, inside a GPU-lock hold every timing waits for) is done only for
    the outputs it can change the verdict of."""
    problem = compare(out, expected.values, atol, rtol, expected.exact)
    if problem is not None and (expected.strict is not None or expected.strict_values):
        return _judge_strict(out, expected, atol, rtol, problem)
    if problem is None or expected.pending is None:
        return problem
    pending, expected.pending = expected.pending, None
    expected.exact = pending()
    if expected.exact is None:
        return problem
    return compare(out, expected.values, atol, rtol, expected.exact)


def _judge_strict(out: list[Any], expected: Expected, atol: float | None, rtol: float | None,
                  problem: str) -> str | None:  # fmt: skip
    """A mode other than fp32: `out`, rejected against the mode's reference (`problem`), may
    still match the strict float32 evaluation of the same values (with its float64 envelope)
    at the mode's tolerance. That reference is the more exact answer for the same inputs, so
    this accepts only outputs at least as accurate as the mode allows: the tolerance is the
    mode's, never wider, and the envelope is float32's own rounding (an envelope measured on
    a bf16 or TF32 reference would be 16 times that precision's error, and admit coarser
    arithmetic than the baseline was given). Shapes and dtypes are still the mode's: a float32
    output where the task's output is bf16 is rejected (`problem`)."""
    if expected.strict is not None:
        make, expected.strict = expected.strict, None
        expected.strict_values = make()
    alternative = expected.strict_values
    if alternative is None or _structure(out) != _structure(expected.values):
        return problem
    if judge(_widened(out), alternative, atol, rtol) is None:
        return None
    less_exact = _less_exact_than_baseline(out, expected, alternative, atol, rtol)
    if less_exact is None:
        expected.by_baseline_error = True
        return None
    # Both rules' answers: the mode's per-element check alone reads like a faulty kernel where
    # the output is only less exact than eager (KernelBench L2 4 in tf32, 2026-12-07: a
    # truncating TF32 kernel, its error norm 2.7 times cuDNN's).
    return f"{problem}; {less_exact}"


# How much farther than the mode's own reference an output may lie from the exact answer, in
# L2 norm, where that reference is itself outside the tolerance (_less_exact_than_baseline).
# Measured on the CPU (KernelBench L2 52 at batch 4, conv + mish + training batch norm in bf16,
# where eager bf16 is 0.11 off the float64 answer and fails the strict evaluation at 22,426 of
# 460,800 elements): torch.compile's bf16 output 0.63 of eager's error norm (it fails 6,872
# elements against the strict evaluation, 25,333 against eager); the activation rounded to 7,
# 5, 4, 3 significant bits instead of bf16's 8: 1.16, 3.83, 7.48, 14.2 of eager's. With both
# bounds (seeds 0-2): torch.compile and the activation kept in float32 pass, 7 bits passes,
# 6, 5 and 4 bits fail.
BASELINE_ERROR_RATIO = 1.5
# Contiguous elements over which the mode reference's error sets the local noise level: the
# elements a task makes ill-conditioned come in runs (a channel's plane, a group, a row).
NOISE_BLOCK = 1024


def _less_exact_than_baseline(out: list[Any], expected: Expected, strict_ref: Expected,
                              atol: float | None, rtol: float | None) -> str | None:  # fmt: skip
    """A mode other than fp32, where both the mode's reference and the strict evaluation reject
    `out`: None where `out` is no less exact than the mode's own reference (eager PyTorch in
    the mode, the baseline it is timed against), else which bound it fails (one clause for the
    verdict). In a task that is ill-conditioned in that
    precision (a batch norm over channels whose spread is near bf16's rounding) eager itself
    fails the strict evaluation, and torch.compile, or any kernel that rounds differently,
    fails both: a rule the baseline cannot meet. Against the exact answer x (the strict
    evaluation's float64 one, or its float32 values) with e = |mode reference - x|, per
    floating leaf:
      |out - x| <= atol + rtol * |x| + ENVELOPE * max(e, rms of e over its NOISE_BLOCK)
      ||out - x|| <= BASELINE_ERROR_RATIO * ||e|| + (atol / 100) * sqrt(n)
    The first lets an element be as noisy as eager is around it (two draws of one rounding
    process differ by heavy-tailed ratios, so the local rms, not e alone), never where eager
    is exact; the second keeps the whole no less exact than eager: coarser arithmetic than
    the mode's grows the error norm with it (two bits coarser than bf16: 3.8 times eager's).
    Special values must sit where x has them; other leaves must match the mode's reference."""
    values = strict_ref.values
    exacts = strict_ref.exact if strict_ref.exact is not None else [None] * len(values)
    targets = [x.value if isinstance(x, Float64Leaf) else v
               for x, v in zip(exacts, values, strict=True)]  # fmt: skip
    mine, baseline = _widened(out), _widened(expected.values)
    for o, m, x, own in zip(mine, baseline, targets, expected.values, strict=True):
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()):
            if compare([o], [m], atol, rtol) is not None:
                return "a leaf that is not floating differs from the mode's reference"
            continue
        tol = DEFAULT_TOLERANCE.get(own.dtype, 1e-4)  # the mode's leaf, as _compare_one reads it
        a, r = (tol if atol is None else atol), (tol if rtol is None else rtol)
        why = _less_exact_leaf(o, m, x, a, r)
        if why is not None:
            return why
    return None


def _less_exact_leaf(o: torch.Tensor, m: torch.Tensor, x: torch.Tensor, atol: float,
                     rtol: float) -> str | None:  # fmt: skip
    """_less_exact_than_baseline's two bounds for one floating leaf, in float64 pieces: None
    where both hold, else which one fails."""
    device = o.device if o.is_cuda else x.device
    o, m, x = (t.detach().reshape(-1) for t in (o, m, x))
    err_sq = own_sq = 0.0
    finite_n = 0
    for start in range(0, x.numel(), CHUNK):  # CHUNK is a multiple of NOISE_BLOCK
        end = min(start + CHUNK, x.numel())
        o64, m64, x64 = (t[start:end].to(device, torch.float64) for t in (o, m, x))
        finite = torch.isfinite(x64)
        if not torch.equal(torch.isfinite(o64), finite) or not torch.equal(
            o64[~finite].nan_to_num(), x64[~finite].nan_to_num()
        ):
            return "infinities or NaN where the float64 answer has other values"
        d = torch.where(finite, (o64 - x64).abs(), 0.0)
        e = torch.where(finite, (m64 - x64).abs(), 0.0)
        pad = (-e.numel()) % NOISE_BLOCK
        blocks = F.pad(e, (0, pad)).reshape(-1, NOISE_BLOCK)
        local = blocks.pow(2).mean(dim=1).sqrt().repeat_interleave(NOISE_BLOCK)[: e.numel()]
        bound = atol + rtol * x64.abs() + ENVELOPE * torch.maximum(e, local)
        if bool((d > bound).any()):  # d is 0 where x is special, and never above a NaN bound
            return (f"elements farther from the float64 answer than {ENVELOPE:g} times the "
                    "mode reference's local error")  # fmt: skip
        err_sq += float(d.pow(2).sum())
        own_sq += float(e.pow(2).sum())
        finite_n += int(finite.sum())
    limit = BASELINE_ERROR_RATIO * math.sqrt(own_sq) + (atol / 100) * math.sqrt(max(finite_n, 1))
    if math.sqrt(err_sq) <= limit:
        return None
    ratio = f"{math.sqrt(err_sq / own_sq):.2f} times" if own_sq > 0 else "above"
    return (f"error norm against the float64 answer {ratio} the mode reference's (at most "
            f"{BASELINE_ERROR_RATIO:g} times, plus atol / 100 per element)")  # fmt: skip


def _structure(values: list[Any]) -> list[Any]:
    """What the strict comparison must not change: each leaf's type, shape and dtype."""
    return [(type(v).__name__, tuple(v.shape), v.dtype) if isinstance(v, torch.Tensor)
            else type(v).__name__ for v in values]  # fmt: skip


def _widened(values: list[Any]) -> list[Any]:
    """Half-precision leaves as float32 (exact), to compare with the strict reference."""
    half = (torch.float16, torch.bfloat16)
    return [v.float() if isinstance(v, torch.Tensor) and v.dtype in half else v for v in values]


def compare(
    out: list[Any],
    ref: list[Any],
    atol: float | None,
    rtol: float | None,
    exact: list[Any] | None = None,
) -> str | None:
    """None when `out` matches `ref`; otherwise the first difference, in words.

    `exact`: the float64 evaluation of the same reference (envelope.evaluate: per leaf a float64
    tensor, IntegerAlternatives, or None where there is none); float32 leaves are then judged
    against it with the envelope of the module docstring.
    """
    if len(out) != len(ref):
        return f"returned {len(out)} values, expected {len(ref)}"
    exacts = exact if exact is not None and len(exact) == len(ref) else [None] * len(ref)
    for i, (o, r, x) in enumerate(zip(out, ref, exacts, strict=True)):
        where = f"output {i}" if len(ref) > 1 else "output"
        problem = _compare_one(o, r, atol, rtol, x)
        if problem:
            return f"{where}: {problem}"
    return None


def _compare_one(
    o: Any, r: Any, atol: float | None, rtol: float | None, exact: Any = None
) -> str | None:
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
    # On the GPU when either is there (a GPU compares a 10 GB output in milliseconds; the
    # harness keeps large references on the host).
    device = o.device if o.is_cuda else r.device
    o, r = o.detach().to(device), r.detach().to(device)
    if not r.is_floating_point() and not r.is_complex():
        wrong = o != r
        if isinstance(exact, IntegerAlternatives):  # near-ties that float32 rounding decides
            for alternative in exact.values:
                if alternative.shape == r.shape and alternative.dtype == r.dtype:
                    wrong &= o != alternative.to(r.device)
        bad = int(wrong.sum())
        return None if bad == 0 else f"{bad} of {r.numel()} elements differ (exact match required)"
    tol = DEFAULT_TOLERANCE.get(r.dtype, 1e-4)
    atol = tol if atol is None else atol
    rtol = tol if rtol is None else rtol
    usable = r.dtype == torch.float32 and isinstance(exact, Float64Leaf)
    chunks = _Chunks(o, r, exact if usable and exact.value.shape == r.shape else None)
    problem = chunks.scan()
    if problem:
        return problem
    # The rms term: an honest kernel's rounding error is another draw of the reference's, and
    # the ratio of two such draws at one element is heavy-tailed (Cauchy-like); the error level
    # over the whole output is the stable estimate of how noisy any element may be.
    own_norm = math.sqrt(chunks.own_sq)
    rms = chunks.rms()
    outside, worst, err_sq, scale_sq = 0, None, 0.0, 0.0
    for part in chunks:
        of, rf = part.of, part.rf
        diff = (of - rf).abs()
        excess = diff - part.bound(rms, atol, rtol)
        outside += int((excess > 0).sum())
        if excess.numel() and (worst is None or float(excess.max()) > worst[0]):
            idx = int(torch.argmax(excess))
            worst = (float(excess[idx]), part.flat_index(idx), of[idx].item(), rf[idx].item())
        err_sq += float(torch.sum(diff**2))
        scale_sq += float(torch.sum(rf.abs() ** 2))
    if outside:
        _, flat, got, expected = worst
        pos = tuple(int(p) for p in _unravel(flat, r.shape))
        ref32 = r.reshape(-1)[flat].item()
        noise = f" (float32 reference {ref32:.6g})" if own_norm > 0 else ""
        return (
            f"{outside} of {r.numel()} elements outside atol={atol:g} rtol={rtol:g}; "
            f"worst at {pos}: got {got:.6g}, expected {expected:.6g}{noise}"
        )
    err, scale = math.sqrt(err_sq), math.sqrt(scale_sq)
    limit = 10 * rtol * scale + (atol / 100) * math.sqrt(max(chunks.finite, 1))
    limit += ENVELOPE * own_norm
    if err > limit:
        relative = f"{err / scale:.3g}" if scale > 0 else "inf (the reference is zero)"
        return (
            f"relative L2 error {relative} is too large (||out-ref|| = "
            f"{err:.3g} > {limit:.3g}): the output is small where the reference is not"
        )
    return None


def worst_ratio(out: torch.Tensor, ref: torch.Tensor, exact: Float64Leaf, atol: float = 1e-4,
                rtol: float = 1e-4) -> tuple[int, float]:  # fmt: skip
    """How near the elementwise test's bound a float32 output lies (a figure for benchmarks;
    compare() gives the verdict): the elements past it, and the largest |out - target| / bound
    (above 1 fails), with `exact` the leaf's float64 evaluation."""
    chunks = _Chunks(out, ref, exact)
    chunks.scan()
    rms = chunks.rms()
    past, worst = 0, 0.0
    for part in chunks:
        ratio = (part.of - part.rf).abs() / part.bound(rms, atol, rtol)
        past += int((ratio > 1).sum())
        if ratio.numel():
            worst = max(worst, float(ratio.max()))
    return past, worst


# Elements compared at a time: the float64 copies of a 1.6-billion-element output (a KernelBench
# level-1 activation) took over 100 GB of GPU memory in one piece.
CHUNK = 1 << 26


@dataclass
class _Part:
    """One chunk's finite entries: output, target (ref64 or ref32), the reference's own error,
    and where they sit in the flattened output."""

    of: torch.Tensor
    rf: torch.Tensor
    own: torch.Tensor
    start: int
    positions: torch.Tensor  # indices within the chunk of its finite entries

    def flat_index(self, i: int) -> int:
        return self.start + int(self.positions[i])

    def bound(self, rms: float, atol: float, rtol: float) -> torch.Tensor:
        """The elementwise test's bound on |out - target| (module docstring)."""
        return atol + rtol * self.rf.abs() + ENVELOPE * torch.clamp(self.own, min=rms)


class _Chunks:
    """The float comparison's inputs, flattened and walked in CHUNK-element pieces in float64."""

    def __init__(self, o: torch.Tensor, r: torch.Tensor, exact: Float64Leaf | None) -> None:
        self.o, self.r = o.reshape(-1), r.reshape(-1)
        self.exact = exact.value.reshape(-1) if exact is not None else None
        self.spread = exact.spread.reshape(-1) if exact is not None else None
        self.wide = torch.complex128 if r.is_complex() else torch.float64
        self.own_sq, self.finite = 0.0, 0

    def _pieces(self) -> Any:
        for start in range(0, self.r.numel(), CHUNK):
            end = min(start + CHUNK, self.r.numel())
            o64 = self.o[start:end].to(self.wide)
            r64 = self.r[start:end].to(self.wide)
            x = spread = None
            if self.exact is not None and self.spread is not None:
                x = self.exact[start:end].to(r64.device)
                spread = self.spread[start:end].to(r64.device, torch.float64)
                o64, r64 = _at_overflow(o64, r64, x)
                r64 = _arbitrated(o64, r64, x)
            yield start, o64, r64, x, spread

    def rms(self) -> float:
        """The reference's own error, root mean square over the finite entries (after scan)."""
        return math.sqrt(self.own_sq) / math.sqrt(max(self.finite, 1))

    def scan(self) -> str | None:
        """The first pass: a NaN/inf position mismatch (summed over chunks), or None; it also
        totals what the second pass (iteration) needs: own_sq, the squared norm of the
        reference's own error, and the count of finite reference entries."""
        counts: dict[tuple[str, str], int] = {}
        for _, o64, r64, x, spread in self._pieces():
            for name, n in _special_counts(o64, r64).items():
                counts[name] = counts.get(name, 0) + n
            finite = torch.isfinite(r64)
            _, own = _target(r64, finite, x, spread)
            self.own_sq += float(torch.sum(own**2))
            self.finite += int(finite.sum())
        for name, n in counts.items():
            if n:
                return _special_message(name, n)
        return None

    def __iter__(self) -> Any:
        for start, o64, r64, x, spread in self._pieces():
            finite = torch.isfinite(r64)
            target, own = _target(r64, finite, x, spread)
            positions = torch.nonzero(finite).reshape(-1)
            yield _Part(o64[finite], target[finite], own, start, positions)


def _target(
    r64: torch.Tensor, finite: torch.Tensor, exact: Any, spread: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """What finite entries are compared with, and the reference's own error on them.

    Without a usable float64 evaluation: ref32 itself, with no error. With one: ref64 where it
    is finite (elsewhere ref32 again), and max(|ref32 - ref64|, spread) there.
    """
    usable = (
        isinstance(exact, torch.Tensor)
        and exact.dtype == torch.float64
        and exact.shape == r64.shape
        and not exact.is_complex()
    )
    if not usable:
        return r64, torch.zeros(int(finite.sum()), dtype=torch.float64, device=r64.device)
    x = exact.detach().to(r64.device)
    target = torch.where(finite & torch.isfinite(x), x, r64)
    own = (r64 - target).abs()
    if spread is not None:
        own = torch.maximum(own, spread.to(own.device))
    return target, own[finite]


# Float32's overflow threshold: finite values round to inf from here on.
FLOAT32_OVERFLOW = float(torch.finfo(torch.float32).max)
# How close (relative) the float64 evaluation must be to it for inf-or-finite to be a rounding
# decision: a cumulative product of 5,000 values in [0, 10) crosses float32's range within ~70
# steps, and where it crosses depends on the order of the multiplications.
OVERFLOW_MARGIN = 1e-3


def _at_overflow(
    o: torch.Tensor, r: torch.Tensor, exact: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Where the float64 evaluation sits at float32's overflow threshold, an output of +-inf
    and one of the largest finite values are both right: both sides become the same value."""
    edge = (exact.abs() - FLOAT32_OVERFLOW).abs() <= OVERFLOW_MARGIN * FLOAT32_OVERFLOW
    edge &= torch.isinf(o) != torch.isinf(r)
    if not edge.any():
        return o, r
    same = torch.sign(exact) * FLOAT32_OVERFLOW
    return torch.where(edge, same, o), torch.where(edge, same, r)


def _arbitrated(o: torch.Tensor, r: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
    """The reference with ref64 in place of ref32 where ref32 is NaN or inf, ref64 is within
    float32's range (beyond it, inf is float32's right answer) and the output is finite: there
    the output is compared with ref64, like any finite entry."""
    if exact.dtype != torch.float64 or exact.shape != r.shape or exact.is_complex():
        return r
    representable = exact.abs() <= FLOAT32_OVERFLOW  # False for NaN and inf too
    resolved = ~torch.isfinite(r) & representable & torch.isfinite(o)
    return torch.where(resolved, exact, r) if resolved.any() else r


def _special_counts(o: torch.Tensor, r: torch.Tensor) -> dict[str, int]:
    """Positions where NaN, +inf or -inf differ between output and reference, keyed by the
    value and the side that has it (("NaN", "output"): the output has a NaN the reference has
    not). Which side it is tells a candidate's bug from a reference's overflow."""
    pairs = [("NaN", torch.isnan(o), torch.isnan(r))]
    if not r.is_complex():
        pairs += [(name, o == sign * math.inf, r == sign * math.inf)
                  for sign, name in ((1, "+inf"), (-1, "-inf"))]  # fmt: skip
    counts = {}
    for name, in_out, in_ref in pairs:
        counts[(name, "output")] = int((in_out & ~in_ref).sum())
        counts[(name, "reference")] = int((in_ref & ~in_out).sum())
    return counts


def _special_message(key: tuple[str, str], n: int) -> str:
    name, side = key
    if side == "output":
        return f"{name} at {n} positions where the reference has none"
    return f"no {name} at {n} positions where the reference has {name}"


def _unravel(flat: int, shape: torch.Size) -> list[int]:
    pos = []
    for size in reversed(shape):
        pos.append(flat % size)
        flat //= size
    return pos[::-1]

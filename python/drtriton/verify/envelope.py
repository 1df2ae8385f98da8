"""The float64 evaluation of a float32 task: how far the float32 reference is from exact.

compare.py's module docstring states the rule that uses it and why. Here: evaluate the task once
more per input set in float64 (ref64), with every float32 input, and for a module task a deep
copy of the model with float32 parameters and buffers, cast to float64, and the inputs each moved
by one float32 rounding (relative 2**-24, random sign, a fixed seed so verdicts are
reproducible). ref64 is then an exact answer for inputs that float32 cannot tell from the given
ones, which is all a float32 kernel computes (a backward-stable one is exact for inputs within a
few roundings). The move matters where torch's float32 kernel happens to be exact: a constant
group normalizes to exactly 0 with Welford's mean (so ref32 == the unmoved float64 value) but not
with sum / n, while one rounding of the inputs shows that the output there is noise times
1 / sqrt(eps). For a well-conditioned task the move changes ref64 by ~1e-7 relative.
A second evaluation, the inputs moved with other signs, gives the spread of such answers
(Float64Leaf): where one output element is ill-conditioned (a near-tie in a softmax over large
logits), ref32 may land within a sliver of ref64 by chance, and the spread keeps the envelope
at the element's real sensitivity to one rounding of the inputs.
Runs in the harness process only, like every reference evaluation; the candidate never sees
the result.

Falls back to the float32 reference alone (None) when the float64 evaluation is unusable: it
raises (an operator without a float64 kernel on this device), its outputs differ in structure, or
the task draws random numbers (two evaluations would differ by more than rounding, and the
envelope would swallow any answer). Integer and bool leaves get the float64 evaluation's values
(IntegerAlternatives); other leaves that are not float32 in the reference get None.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from drtriton.verify.module_copy import converted_copy

# Operators whose results depend on the random generator: a task that runs any of them has no
# reproducible reference, so its float64 evaluation says nothing about rounding.
RANDOM = frozenset(
    """
    rand rand_like randn randn_like randint randint_like randperm bernoulli bernoulli_ normal
    normal_ uniform_ exponential_ geometric_ log_normal_ cauchy_ random_ multinomial
    native_dropout dropout rrelu_with_noise poisson
    """.split()
)


def wants_float64(ref_outputs: list[Any], inputs: list[Any], model: Any) -> bool:
    """True when some output is float32 and nothing floating in the task is narrower/wider."""
    if not any(isinstance(x, torch.Tensor) and x.dtype == torch.float32 for x in ref_outputs):
        return False
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    if isinstance(model, torch.nn.Module):
        tensors += list(model.parameters()) + list(model.buffers())
    return all(t.dtype == torch.float32 for t in tensors if t.is_floating_point())


def float64_model(reference: Callable[..., Any], host: bool = False) -> Callable[..., Any] | None:
    """The reference to evaluate in float64: a float64 deep copy of a module (on the host with
    `host`), or the function (which runs where its inputs are)."""
    if not isinstance(reference, torch.nn.Module):
        return reference
    try:
        model = converted_copy(reference, torch.float64)
    except Exception:  # an unpicklable attribute: no float64 evaluation, no envelope
        return None
    return model.cpu() if host else model


# One float32 rounding, relative: how far each input is moved for the float64 evaluation.
ROUNDING = 2.0**-24


@dataclass
class IntegerAlternatives:
    """An integer or bool output computed from floats (argmax, a comparison): the values the
    float64 evaluation gives. Where float32 rounding decides a near-tie they differ from ref32,
    and the candidate may give either; elsewhere they equal ref32 and change nothing."""

    values: list[torch.Tensor]


@dataclass
class Float64Leaf:
    """A float32 leaf's float64 evaluation. `value`: for the inputs moved one way (ref64, the
    answer outputs are compared with); `spread`: how far from it the answer for a second move
    (other random signs) lies, in float32, 0 where either is not finite. Inputs that float32
    cannot tell apart have answers this far apart, so an output may be (compare.py). One move
    alone understates that where ref32's own rounding happens to cancel the move's effect: on
    paper-preset program 83 (bmm -> mul -> softmax over logits of ~1e4), 64 of its 538
    batches, scaled_10 inputs, three seeds, the rule with `value` alone rejected torch's own
    float32 bmm with K reversed or cut in four (2 of 3 seeds, up to 4.1 times the bound) and
    the logits rounded once from an exact bmm (1 of 3, 1.03 times); with the spread too, all
    passed at 0.64 of the bound or less, and bf16x6's emulated split at 0.24."""

    value: torch.Tensor
    spread: torch.Tensor

    @staticmethod
    def alone(value: torch.Tensor) -> Float64Leaf:
        """One evaluation, no second move (spread 0): the stricter rule."""
        return Float64Leaf(value, _spread(value, None))

    def to(self, device: torch.device | str) -> Float64Leaf:
        return Float64Leaf(self.value.to(device), self.spread.to(device))


# The second evaluation's moves are drawn from seeds this far from the first's.
SECOND_MOVE = 1 << 20


def evaluate(
    reference: Callable[..., Any], inputs: list[Any], ref32: list[Any], flatten: Callable
) -> list[Float64Leaf | IntegerAlternatives | None] | None:
    """Per leaf of `ref32`: its float64 evaluation (None where unusable); None when the
    evaluation failed. Two evaluations, each with the inputs moved once (Float64Leaf); if the
    second fails where the first did not (out of memory), the spread is 0, the stricter rule."""
    first = _evaluated(reference, inputs, 0, flatten)
    if first is None or len(first) != len(ref32):
        return None
    second = _evaluated(reference, inputs, SECOND_MOVE, flatten)
    if second is not None and len(second) != len(first):
        second = None
    try:
        return _leaves(first, second, ref32)
    except (torch.OutOfMemoryError, MemoryError):  # the spreads beside both evaluations
        second = None  # let its outputs go before the stricter rule's zero spreads
        return _leaves(first, None, ref32)


def _leaves(first: list[Any], second: list[Any] | None,
            ref32: list[Any]) -> list[Float64Leaf | IntegerAlternatives | None]:  # fmt: skip
    leaves: list[Float64Leaf | IntegerAlternatives | None] = []
    for i, (x, r) in enumerate(zip(first, ref32, strict=True)):
        other = second[i] if second is not None else None
        if _same_integer_kind(x, r):
            same = _same_integer_kind(other, r)
            leaves.append(IntegerAlternatives([x] + ([other] if same else [])))
        elif _float64_of(x, r):
            leaves.append(Float64Leaf(x, _spread(x, other if _float64_of(other, r) else None)))
        else:
            leaves.append(None)
    return leaves


def _evaluated(reference: Callable[..., Any], inputs: list[Any], first_seed: int,
               flatten: Callable) -> list[Any] | None:  # fmt: skip
    try:
        with torch.no_grad():
            moved = [_moved(x, first_seed + i) for i, x in enumerate(inputs)]
            return [x.detach() if isinstance(x, torch.Tensor) else x
                    for x in flatten(reference(*moved))]  # fmt: skip
    except Exception:
        return None


def _float64_of(x: Any, r: Any) -> bool:
    return (
        isinstance(x, torch.Tensor)
        and isinstance(r, torch.Tensor)
        and r.dtype == torch.float32
        and x.dtype == torch.float64
        and x.shape == r.shape
    )


# Elements whose spread is computed at a time: the float64 temporaries of a whole
# billion-element output would not fit beside the two evaluations.
SPREAD_CHUNK = 1 << 24


def _spread(x: torch.Tensor, other: torch.Tensor | None) -> torch.Tensor:
    spread = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
    if other is None:
        return spread
    flat, a, b = spread.view(-1), x.reshape(-1), other.reshape(-1)
    for start in range(0, flat.numel(), SPREAD_CHUNK):
        xa, xb = a[start : start + SPREAD_CHUNK], b[start : start + SPREAD_CHUNK]
        both = torch.isfinite(xa) & torch.isfinite(xb)
        flat[start : start + SPREAD_CHUNK] = torch.where(both, (xb - xa).abs(), 0.0)
    return spread


def _same_integer_kind(x: Any, r: Any) -> bool:
    return (
        isinstance(x, torch.Tensor)
        and isinstance(r, torch.Tensor)
        and not r.is_floating_point()
        and not r.is_complex()
        and x.dtype == r.dtype
        and x.shape == r.shape
    )


def _moved(x: Any, seed: int) -> Any:
    """A float64 copy of a float32 tensor with every entry moved by one rounding, up or down."""
    up = _up(x)
    if up is x:
        return x
    # Drawn on the tensor's own device: a paper-preset input has billions of entries.
    generator = torch.Generator(device=up.device).manual_seed(seed)
    flip = torch.randint(0, 2, up.shape, generator=generator, device=up.device, dtype=torch.int8)
    return up.mul_(torch.where(flip.bool(), 1.0 + ROUNDING, 1.0 - ROUNDING).to(torch.float64))


def _up(x: Any) -> Any:
    """A float64 copy of a float32 tensor (strides kept, so strided inputs stay strided)."""
    if not isinstance(x, torch.Tensor) or x.dtype != torch.float32:
        return x
    copy64 = torch.empty_strided(x.size(), x.stride(), dtype=torch.float64, device=x.device)
    with contextlib.suppress(RuntimeError):  # overlapping strides (expand): a dense copy then
        copy64.copy_(x)
        return copy64
    return x.to(torch.float64)

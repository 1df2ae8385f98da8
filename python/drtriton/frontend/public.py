"""Public PyTorch spellings of opaque ATen calls, for code that users and the verifier read.

The frontend's opaque lines call `torch.ops.aten.<op>.<overload>` (exact, and what the
equivalence check runs).  A generated ModelNew cannot: the verifier's static rules ban
`torch.ops` and private names (both hide torch compute from its checks).  Most ATen overloads
have a public function `torch.<op>` or a Tensor method with the same positional arguments;
the few private ones the frontend leaves opaque in practice (slicing, casts, batch norm in
training mode) have an equivalent public spelling below.  None where there is none: the
optimizer then reports the operator instead of writing a file the verifier rejects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

Literal = Callable[[Any], str]


def _slice(args: list[Any], lit: Literal) -> str:
    """aten.slice.Tensor(self, dim=0, start=None, end=None, step=1) as a subscript."""
    self, dim, start, end, step = (args + [0, None, None, 1][len(args) - 1 :])[:5]
    bounds = f"{'' if start is None else lit(start)}:{'' if end is None else lit(end)}"
    bounds += "" if step == 1 else f":{lit(step)}"
    return f"{lit(self)}[{':, ' * dim}{bounds}]"


def _batch_norm(args: list[Any], lit: Literal) -> str:
    """(F.batch_norm(...),): element 0 is the normalised input, as in ATen's tuple; the
    running statistics are updated in place (the module's own buffers, as nn.BatchNorm does)."""
    x, weight, bias, mean, var = args[:5]
    rest = ", ".join(lit(a) for a in args[5:])
    call = f"F.batch_norm({lit(x)}, {lit(mean)}, {lit(var)}, {lit(weight)}, {lit(bias)}"
    if len(args) == 7:  # the no_training overload: (…, momentum, eps)
        return f"({call}, False, {rest}),)"
    return f"({call}, {rest}),)"


def _nll_loss_forward(args: list[Any], lit: Literal) -> str | None:
    """(F.nll_loss(...), None): element 0 is the loss, as in ATen's (output, total_weight);
    the total weight is for the backward, which a forward program never reads (cross_entropy
    with class weights, or of one sample, exports to this call and reads element 0 alone)."""
    if len(args) != 5 or args[3] not in (0, 1, 2):
        return None
    x, target, weight, reduction, ignore_index = args
    how = ("none", "mean", "sum")[reduction]
    return (
        f"(F.nll_loss({lit(x)}, {lit(target)}, weight={lit(weight)}, "
        f"ignore_index={lit(ignore_index)}, reduction={how!r}), None)"
    )


def _to_copy(args: list[Any], kwargs: dict[str, Any], lit: Literal) -> str | None:
    if set(kwargs) - {"dtype", "device", "layout", "memory_format"}:
        return None
    keep = {k: v for k, v in kwargs.items() if k in ("dtype", "device") and v is not None}
    inner = ", ".join(f"{k}={lit(v)}" for k, v in keep.items())
    return f"{lit(args[0])}.to({inner}, copy=True)"


def _softmax(function: str) -> Callable[[list[Any], Literal], str | None]:
    def spell(args: list[Any], lit: Literal) -> str | None:
        if len(args) > 2 and args[2]:
            return None  # half_to_float
        return f"torch.{function}({lit(args[0])}, {lit(args[1])})"

    return spell


_POSITIONAL: dict[str, Callable[[list[Any], Literal], str | None]] = {
    "slice": _slice,
    "_native_batch_norm_legit_functional": _batch_norm,
    "_native_batch_norm_legit_no_training": _batch_norm,
    "_unsafe_view": lambda a, lit: f"torch.reshape({lit(a[0])}, {lit(a[1])})",
    # aten.alias (export's stand-in for a view that changes nothing, e.g. `x + 0` folded or a
    # returned input) has no torch.alias; a same-shape view of the tensor means the same.
    "alias": lambda a, lit: f"{lit(a[0])}.view_as({lit(a[0])})",
    "_softmax": _softmax("softmax"),
    "_log_softmax": _softmax("log_softmax"),
    "nll_loss_forward": _nll_loss_forward,
}


def _attention(args: list[Any], kwargs: dict[str, Any], lit: Literal) -> str:
    """aten.scaled_dot_product_attention: the same arguments as F.scaled_dot_product_attention
    (scale and enable_gqa keyword-only in both); torch has no top-level function of the name."""
    rendered = [lit(a) for a in args] + [f"{k}={lit(v)}" for k, v in kwargs.items()]
    return f"F.scaled_dot_product_attention({', '.join(rendered)})"


def public_call(target: Any, args: list[Any], kwargs: dict[str, Any], lit: Literal) -> str | None:
    """`target(*args, **kwargs)` (an ATen OpOverload) in public PyTorch, or None."""
    name = target._schema.name.split("::")[-1]
    if name == "_to_copy":
        return _to_copy(args, kwargs, lit)
    if name == "scaled_dot_product_attention":
        return _attention(args, kwargs, lit)
    if name in _POSITIONAL:
        return None if kwargs else _POSITIONAL[name](list(args), lit)
    if name.startswith("_"):
        return None
    rendered = [lit(a) for a in args] + [f"{k}={lit(v)}" for k, v in kwargs.items()]
    if callable(getattr(torch, name, None)):
        return f"torch.{name}({', '.join(rendered)})"
    if args and callable(getattr(torch.Tensor, name, None)):
        return f"{rendered[0]}.{name}({', '.join(rendered[1:])})"
    return None

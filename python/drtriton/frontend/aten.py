"""The ATen → catalog table: one entry per ATen overload the frontend maps.

Each entry turns the ATen call's arguments (bound by schema name) into catalog calls: a list
of (catalog operator, {catalog parameter: value}) applied in sequence; a value `Ref(k)` is the
result of step k (`PREVIOUS`: the step before), and the last step's result is the node's.
An entry returns None where the
call has no catalog equivalent (a scalar operand, an unsupported flag); the node then stays
an opaque PyTorch call.  Values are normalised to the catalog's types here (one-element dim
lists become ints; a reduction over several dims becomes one reduction per dim, innermost
first, which is exact for sum/mean/amax/amin over equal-sized groups).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from drtriton.catalog import op as catalog_op

aten = torch.ops.aten


@dataclass(frozen=True)
class Ref:
    """The result of step `index` of the same entry (negative: counted back from the step that
    reads it, so Ref(-1) is the step before)."""

    index: int


PREVIOUS = Ref(-1)
Step = tuple[str, dict[str, Any]]
Entry = Callable[[dict[str, Any]], "list[Step] | None"]


def _is_tensor(value: Any) -> bool:
    return isinstance(value, torch.fx.Node)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _one(op: str, **params: Any) -> list[Step]:
    return [(op, params)]


def _binary(op: str) -> Entry:
    def entry(a: dict[str, Any]) -> list[Step] | None:
        # A Python number operand (x * 2.0) becomes a one-element constant input (lower.py).
        tensors = [_is_tensor(a["self"]), _is_tensor(a["other"])]
        numbers = [_is_number(a["self"]), _is_number(a["other"])]
        if not any(tensors) or not all(t or n for t, n in zip(tensors, numbers, strict=True)):
            return None
        if a.get("alpha", 1) != 1:
            return None
        if a.get("rounding_mode") is not None:
            return None
        zero_d = [_is_zero_d(v) for v in (a["self"], a["other"])]
        if any(zero_d) and all(z or n for z, n in zip(zero_d, numbers, strict=True)):
            return _zero_d_binary(op, a["self"], a["other"])
        if zero_d[0] and tensors[1]:  # a 0-d first operand with a tensor: norm(x) * y
            return [_one_element_view(a["self"]), (op, {"input": PREVIOUS, "other": a["other"]})]
        return _one(op, input=a["self"], other=a["other"])

    return entry


def _is_bool_tensor(value: Any) -> bool:
    val = value.meta.get("val") if _is_tensor(value) else None
    return isinstance(val, torch.Tensor) and val.dtype is torch.bool


def _mul(a: dict[str, Any]) -> list[Step] | None:
    """x * mask with a bool mask (a masked cumsum's operand): the mask promotes to 0/1, so the
    product is x where the mask holds and x * 0 elsewhere (NaN for an infinite x, -0.0 for a
    negative one, as PyTorch's product); otherwise as any binary operator."""
    masks = [_is_bool_tensor(a["self"]), _is_bool_tensor(a["other"])]
    if masks.count(True) != 1:
        return _binary("mul")(a)
    mask, x = (a["self"], a["other"]) if masks[0] else (a["other"], a["self"])
    if not _is_tensor(x):
        return None
    return [
        ("mul", {"input": x, "other": 0.0}),
        ("where", {"condition": mask, "input": x, "other": PREVIOUS}),
    ]


def _scalar_tensor(a: dict[str, Any]) -> list[Step] | None:
    """torch.scalar_tensor(v) (cosine_similarity's eps): a 0-d float32 constant."""
    if not _is_number(a["s"]) or a.get("dtype") not in (None, torch.float32):
        return None
    return [("broadcast_to", {"input": float(a["s"]), "size": [1]}),
            ("reshape", {"input": PREVIOUS, "shape": []})]  # fmt: skip


def _clamp_tensor(a: dict[str, Any]) -> list[Step] | None:
    """clamp(x, min, max) with tensor bounds: maximum(x, min), then minimum(., max); a 0-d bound
    is read through a one-element view (the catalog's elementwise operators take rank 1 up).
    NaN in x stays NaN, as in torch.clamp."""
    if not _is_tensor(a["self"]):
        return None
    steps: list[Step] = []
    current: Any = a["self"]
    for op, bound in (("maximum", a.get("min")), ("minimum", a.get("max"))):
        if bound is None:
            continue
        if not (_is_tensor(bound) or _is_number(bound)):
            return None
        if _is_zero_d(bound):
            steps.append(("reshape", {"input": bound, "shape": [1]}))
            bound = Ref(len(steps) - 1)
        steps.append((op, {"input": current, "other": bound}))
        current = Ref(len(steps) - 1)
    return steps or None


def _is_zero_d(value: Any) -> bool:
    """A 0-d tensor node (not a Python-number argument's placeholder, whose value is a float:
    scalars.py)."""
    val = value.meta.get("val") if _is_tensor(value) else None
    return isinstance(val, torch.Tensor) and val.dim() == 0


def _one_element_view(value: Any) -> Step:
    """A 0-d tensor as the one-element tensor the catalog's elementwise operators take (their
    first input has rank 1 and up; [1] broadcasts as 0-d does)."""
    return ("reshape", {"input": value, "shape": [1]})


def _zero_d_binary(op: str, a: Any, b: Any) -> list[Step]:
    """op of 0-d tensors and numbers (a loss's total / n): in the one-element views, then back
    to 0-d."""
    steps: list[Step] = []
    operands = []
    for value in (a, b):
        if _is_tensor(value):
            steps.append(_one_element_view(value))
            value = Ref(len(steps) - 1)
        operands.append(value)
    steps.append((op, {"input": operands[0], "other": operands[1]}))
    steps.append(("reshape", {"input": PREVIOUS, "shape": []}))
    return steps


def _elementwise(op: str, source: Any, **attrs: Any) -> list[Step]:
    """A one-input elementwise `op` of `source`; of a 0-d tensor in its one-element view, then
    back to 0-d (the catalog's elementwise operators take rank 1 and up).  Why: sqrt(mean(x *
    x)) over every dim, an RMS returned as a scalar, left its sqrt to PyTorch as an opaque
    aten.sqrt call."""
    if not _is_zero_d(source):
        return _one(op, input=source, **attrs)
    return [
        _one_element_view(source),
        (op, {"input": PREVIOUS, **attrs}),
        ("reshape", {"input": PREVIOUS, "shape": []}),
    ]


def _unary(op: str, **renames: str) -> Entry:
    """`renames`: catalog parameter ← ATen argument, for the attributes."""

    def entry(a: dict[str, Any]) -> list[Step]:
        return _elementwise(op, a["self"], **{p: a[arg] for p, arg in renames.items()})

    return entry


def _elu(a: dict[str, Any]) -> list[Step] | None:
    if a["scale"] != 1 or a["input_scale"] != 1:
        return None
    return _elementwise("elu", a["self"], alpha=a["alpha"])


def _dims(dim: Any, rank: int) -> list[int] | None:
    """Normalised dims, innermost first; None for a reduction over everything."""
    if dim is None or (isinstance(dim, list | tuple) and len(dim) == 0):
        return None
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({d % rank for d in dims}, reverse=True)


def _reduce_over(op: str, source: Any, dims: list[int], keep: bool) -> list[Step]:
    """`op` over each of `dims` in turn, the first reading `source`: innermost first, so the
    remaining dims keep their numbers when keepdim is False."""
    return [
        (op, {"input": source if k == 0 else PREVIOUS, "dim": d, "keepdim": keep})
        for k, d in enumerate(dims)
    ]


def _reduction(op: str, chainable: bool = True) -> Entry:
    def entry(a: dict[str, Any]) -> list[Step] | None:
        if a.get("dtype") not in (None, a["self"].meta["val"].dtype):
            return None  # a cast: the catalog's reductions keep the input's dtype
        rank = len(a["self"].meta["val"].shape)
        dims = _dims(a.get("dim"), rank)
        if dims is None:
            dims = list(range(rank - 1, -1, -1)) if chainable else None
        if dims is None or (len(dims) > 1 and not chainable):
            return None
        return _reduce_over(op, a["self"], dims, bool(a.get("keepdim", False)))

    return entry


def _zero_d_last(whole: bool) -> list[Step]:
    """A statistic over every dim is 0-d, which the catalog's sqrt, and its binary operators
    with a number, do not take: it is computed with the dims kept ([1] * rank) and its one
    element reshaped to 0-d last (torch.norm(x) or x.var() returned, or divided into x)."""
    return [("reshape", {"input": PREVIOUS, "shape": []})] if whole else []


def _variance(root: bool) -> Entry:
    """var (std when `root`) over dims with a correction: the mean kept over the dims, the
    squared deviations summed, divided by n - correction (two passes over the data, as exact
    as torch's Welford to float32 rounding); n - correction <= 0 divides by 0 as torch does."""

    def entry(a: dict[str, Any]) -> list[Step] | None:
        shape = _shape(a["self"])
        dims = _dims(a.get("dim"), len(shape)) or list(range(len(shape) - 1, -1, -1))
        correction = 1 if a.get("correction") is None else a["correction"]
        if not shape or not _is_number(correction):
            return None
        n = math.prod(shape[d] for d in dims)
        keep = bool(a.get("keepdim", False))
        whole = len(dims) == len(shape) and not keep  # 0-d: see _zero_d_last
        steps = _reduce_over("mean", a["self"], dims, True)
        steps.append(("sub", {"input": a["self"], "other": PREVIOUS}))
        steps.append(("mul", {"input": PREVIOUS, "other": PREVIOUS}))
        steps += _reduce_over("sum", PREVIOUS, dims, keep or whole)
        steps.append(("div", {"input": PREVIOUS, "other": float(max(n - correction, 0))}))
        if root:
            steps.append(("sqrt", {"input": PREVIOUS}))
        return steps + _zero_d_last(whole)

    return entry


def _rowwise(op: str) -> Entry:
    def entry(a: dict[str, Any]) -> list[Step] | None:
        # A dtype that is the input's own changes nothing (cross_entropy's log_softmax).
        if a.get("dtype") not in (None, a["self"].meta["val"].dtype) or a.get("half_to_float"):
            return None
        return _one(op, input=a["self"], dim=a["dim"])

    return entry


def _transpose(a: dict[str, Any]) -> list[Step]:
    return _one("transpose", input=a["self"], dim0=a["dim0"], dim1=a["dim1"])


def _t(a: dict[str, Any]) -> list[Step] | None:
    if len(a["self"].meta["val"].shape) != 2:
        return None
    return _one("transpose", input=a["self"], dim0=0, dim1=1)


def _permute(a: dict[str, Any]) -> list[Step] | None:
    return [_permute_step(a["self"], list(a["dims"]))]


def _permute_step(source: Any, dims: list[int]) -> Step:
    """A permutation that swaps exactly two dims is a transpose (the synthesizer's operator,
    so the program reads as the paper's) where transpose takes the rank; any other is a
    permute (rank-6 window partitions of Swin models swap two dims too)."""
    dims = [d % len(dims) for d in dims]
    moved = [i for i, d in enumerate(dims) if d != i]
    if len(moved) != 2 or len(dims) > catalog_op("transpose")["max_rank"]:
        return ("permute", {"input": source, "dims": dims})
    return ("transpose", {"input": source, "dim0": moved[0], "dim1": moved[1]})


def _shape(node: Any) -> list[int]:
    return list(node.meta["val"].shape)


def _upsample_nearest(a: dict[str, Any]) -> list[Step] | None:
    """Nearest upsampling (F.interpolate(mode='nearest'), nn.Upsample) by whole factors: output
    element i of a spatial dim is input element i // s, which is each element repeated s times,
    a broadcast between two reshapes (index arithmetic in the kernel that reads it). Other
    ratios stay a PyTorch call (their source index is floor(i * in / out))."""
    x, size, scales = a["input"], a.get("output_size"), a.get("scale_factors")
    shape = _shape(x)
    if len(shape) < 3:
        return None
    if size is not None:
        out = shape[:2] + list(size)
    elif scales is not None and len(scales) == len(shape) - 2:
        out = shape[:2] + [math.floor(i * s) for i, s in zip(shape[2:], scales, strict=True)]
    else:
        return None
    if len(out) != len(shape):
        return None
    factors = [o // i if i and o % i == 0 else 0 for i, o in zip(shape[2:], out[2:], strict=True)]
    if not all(factors) or all(f == 1 for f in factors):
        return None
    # One spatial dim at a time: the view with a unit dim after it is one rank above the
    # input (a 3-D volume's three at once would be rank 8, past the IR's shapes).
    steps: list[Step] = []
    current = list(shape)
    for d, f in enumerate(factors, start=2):
        if f > 1:
            _grow_dim(steps, x, current, d, f, inner=True)
    return steps


def _grow_dim(steps: list[Step], source: Any, current: list[int], d: int, factor: int,
              inner: bool) -> None:  # fmt: skip
    """Appends the steps that make dim `d` of `current` (updated) `factor` times longer: a unit
    dim after it (`inner`: each element repeated, nearest upsampling) or before it (the whole
    dim tiled, repeat) broadcast to `factor`, between two reshapes. The first step reads
    `source` when `steps` is empty, else the last step."""
    at = d + 1 if inner else d
    unit = [*current[:at], 1, *current[at:]]
    grown = [*current[:at], factor, *current[at:]]
    steps.append(("reshape", {"input": PREVIOUS if steps else source, "shape": unit}))
    steps.append(("broadcast_to", {"input": PREVIOUS, "size": grown}))
    current[d] *= factor
    steps.append(("reshape", {"input": PREVIOUS, "shape": list(current)}))


def _reshape_to(shape: Callable[[dict[str, Any]], list[int] | None]) -> Entry:
    """A view that keeps the element order: one reshape to the shape `shape` computes."""

    def entry(a: dict[str, Any]) -> list[Step] | None:
        out = shape(a)
        return None if out is None else _one("reshape", input=a["self"], shape=out)

    return entry


def _unsqueeze_shape(a: dict[str, Any]) -> list[int]:
    shape = _shape(a["self"])
    shape.insert(a["dim"] % (len(shape) + 1), 1)
    return shape


def _squeeze_shape(a: dict[str, Any]) -> list[int]:
    shape = _shape(a["self"])
    dims = a.get("dim", a.get("dims"))
    if dims is None:
        dims = range(len(shape))
    dims = {d % len(shape) for d in ([dims] if isinstance(dims, int) else dims)}
    return [n for k, n in enumerate(shape) if not (k in dims and n == 1)]


def _flatten_shape(a: dict[str, Any]) -> list[int]:
    shape = _shape(a["self"])
    if not shape:
        return [1]
    start, end = a["start_dim"] % len(shape), a["end_dim"] % len(shape)
    return [*shape[:start], -1, *shape[end + 1 :]]


def _slice(a: dict[str, Any]) -> list[Step] | None:
    """x[..., start:end:step] (ATen clamps end to the size, as Python does): a narrow, and for
    a step above 1 every step-th element of it (_windows of one element)."""
    shape = _shape(a["self"])
    dim = a["dim"] % len(shape)
    size = shape[dim]
    start = 0 if a["start"] is None else a["start"]
    end = size if a["end"] is None else a["end"]
    start, end = (min(max(v + size if v < 0 else v, 0), size) for v in (start, end))
    step = a["step"]
    narrow = ("narrow", {"input": a["self"], "dim": dim, "start": start, "length": end - start})
    if step == 1:
        return [narrow]
    if step < 1 or end <= start:
        return None
    shape[dim] = end - start
    whole = start == 0 and end == size
    return [
        *([] if whole else [narrow]),
        *_windows(a["self"] if whole else PREVIOUS, shape, dim, step, 1),
    ]


def _windows(source: Any, shape: list[int], dim: int, step: int, size: int) -> list[Step]:
    """Windows of `size` elements starting every `step` (size <= step) along `dim` of `source`
    (of `shape`), as layout steps: zero-pad the dim to whole steps, split it into (windows,
    step), keep the first `size` of each (size 1: select them, dropping the dim).  The
    padding lies past every window's end, so no result element reads it."""
    n = shape[dim]
    count = (n - size) // step + 1
    steps: list[Step] = []
    if count * step != n:
        extra = count * step - n
        if extra > 0:
            pad = [0, 0] * (len(shape) - 1 - dim) + [0, extra]
            steps.append(("pad", {"input": source, "pad": pad, "value": 0.0}))
        else:
            steps.append(
                ("narrow", {"input": source, "dim": dim, "start": 0, "length": count * step})
            )
        source = PREVIOUS
    split = [*shape[:dim], count, step, *shape[dim + 1 :]]
    steps.append(("reshape", {"input": source, "shape": split}))
    if size == 1:
        steps.append(("select", {"input": PREVIOUS, "dim": dim + 1, "index": 0}))
    elif size < step:
        steps.append(("narrow", {"input": PREVIOUS, "dim": dim + 1, "start": 0, "length": size}))
    return steps


def _unfold(a: dict[str, Any]) -> list[Step] | None:
    """x.unfold(dim, size, step): windows of `size` every `step` along dim, the window index
    in place of dim and the window's elements as a new last dim.  Windows that do not overlap
    (size <= step: image patches, ViT's) are layout steps; overlapping ones stay PyTorch."""
    shape = _shape(a["self"])
    if not shape:
        return None
    dim, size, step = a["dimension"] % len(shape), a["size"], a["step"]
    if not 1 <= size <= min(step, shape[dim]):
        return None
    steps = _windows(a["self"], shape, dim, step, size)
    if size == 1:  # a window of one: the element itself, then a trailing dim of 1
        out = [*shape[:dim], (shape[dim] - 1) // step + 1, *shape[dim + 1 :], 1]
        return [*steps, ("reshape", {"input": PREVIOUS, "shape": out})]
    rank = len(shape) + 1  # the window's elements at dim + 1, moved to the end
    order = [*range(dim + 1), *range(dim + 2, rank), dim + 1]
    if order == list(range(rank)):  # unfold of the last dim: the window is last already
        return steps
    return [*steps, _permute_step(PREVIOUS, order)]


def _pad(a: dict[str, Any]) -> list[Step] | None:
    mode = a.get("mode", "constant")
    if mode in ("reflect", "replicate"):
        return _edge_pad(a["self"], list(a["pad"]), mode)
    if mode != "constant":
        return None
    value = a.get("value")
    return _one("pad", input=a["self"], pad=list(a["pad"]), value=0.0 if value is None else value)


def _edge_padding(mode: str) -> Entry:
    return lambda a: _edge_pad(a["self"], list(a["padding"]), mode)


def _edge_pad(source: Any, pad: list[int], mode: str) -> list[Step] | None:
    """Reflect or replicate padding (F.pad's pad list: the last dim's left and right first),
    one dim after another, each a cat of three parts (zero-padded and summed, as _cat): the
    left edge, the tensor, the right edge (_edge_part).  A negative pad (a crop) stays a
    PyTorch call."""
    shape = _shape(source)
    if len(pad) % 2 or len(pad) // 2 > len(shape) or any(p < 0 for p in pad):
        return None
    steps: list[Step] = []
    current: Any = source
    for i in range(len(pad) // 2):
        d, left, right = len(shape) - 1 - i, pad[2 * i], pad[2 * i + 1]
        n = shape[d]
        if mode == "reflect" and max(left, right) >= n:
            return None  # torch's own error: a reflection past the opposite border
        if left == right == 0:
            continue
        keep, grown = [0, 0] * i, n + left + right
        parts = []
        for size, right_side in ((left, False), (right, True)):
            if size:
                steps += _edge_part(current, shape, d, size, right_side, mode)
                at = n + left if right_side else 0
                steps.append(("pad", {"input": PREVIOUS, "value": 0.0,
                                      "pad": [*keep, at, grown - at - size]}))  # fmt: skip
                parts.append(Ref(len(steps) - 1))
        steps.append(("pad", {"input": current, "pad": [*keep, left, right], "value": 0.0}))
        for part in parts:
            steps.append(("add", {"input": part, "other": PREVIOUS}))
        current = Ref(len(steps) - 1)
        shape = [*shape[:d], grown, *shape[d + 1 :]]
    return steps or None


def _edge_part(
    current: Any, shape: list[int], d: int, size: int, right_side: bool, mode: str
) -> list[Step]:
    """The `size` elements padded beside one border of dim `d`: for reflect, the elements next
    to the border element, flipped; for replicate, the border element broadcast."""
    n = shape[d]
    if mode == "reflect":
        start = n - 1 - size if right_side else 1
        return [
            ("narrow", {"input": current, "dim": d, "start": start, "length": size}),
            ("flip", {"input": PREVIOUS, "dims": [d]}),
        ]
    wide = [*shape[:d], size, *shape[d + 1 :]]
    return [
        ("narrow", {"input": current, "dim": d, "start": n - 1 if right_side else 0, "length": 1}),
        ("broadcast_to", {"input": PREVIOUS, "size": wide}),
    ]


_ZEROS = {"zeros", "zeros_like", "new_zeros"}
_FULL = {"full", "full_like", "new_full"}


def _is_zeros(node: Any) -> bool:
    """A tensor of zeros made in forward (torch.zeros_like(x)): a cat part that adds nothing."""
    if not _is_tensor(node) or not isinstance(node.target, torch._ops.OpOverload):
        return False
    name = node.target._schema.name.split("::")[-1]
    if name in _ZEROS:
        return True
    return name in _FULL and bind(node).get("fill_value") == 0


def _cat(a: dict[str, Any]) -> list[Step] | None:
    """cat as a sum of its parts, each zero-padded to the full size along `dim`; parts made
    of zeros are the padding already and add nothing."""
    parts = list(a["tensors"])
    if not all(_is_tensor(t) for t in parts) or len(parts) < 2:
        return None
    rank = len(_shape(parts[0]))
    dim = a["dim"] % rank
    sizes = [_shape(t)[dim] for t in parts]
    steps: list[Step] = []
    total = None  # the step holding the sum so far
    for k, part in enumerate(parts):
        if _is_zeros(part):
            continue
        before, after = sum(sizes[:k]), sum(sizes[k + 1 :])
        pad = [0, 0] * (rank - 1 - dim) + [before, after]
        steps.append(("pad", {"input": part, "pad": pad, "value": 0.0}))
        if total is not None:
            steps.append(("add", {"input": Ref(total), "other": PREVIOUS}))
        total = len(steps) - 1
    return steps or None


def _roll(a: dict[str, Any]) -> list[Step] | None:
    """torch.roll by k along a dim of size n: the last k elements, then the first n - k, as a
    cat of two narrows (zero-padded parts and their sum, as _cat); one dim after another.
    A flattened roll (no dims) stays a PyTorch call."""
    shifts, dims, source = list(a["shifts"]), list(a.get("dims") or []), a["self"]
    shape = _shape(source)
    if not dims or len(dims) != len(shifts):
        return None
    steps: list[Step] = []
    current: Any = source
    for shift, dim in zip(shifts, dims, strict=True):
        d, n = dim % len(shape), shape[dim % len(shape)]
        k = shift % n if n else 0
        if k == 0:
            continue
        keep = [0, 0] * (len(shape) - 1 - d)
        steps.append(("narrow", {"input": current, "dim": d, "start": n - k, "length": k}))
        steps.append(("pad", {"input": PREVIOUS, "pad": [*keep, 0, n - k], "value": 0.0}))
        tail = Ref(len(steps) - 1)
        steps.append(("narrow", {"input": current, "dim": d, "start": 0, "length": n - k}))
        steps.append(("pad", {"input": PREVIOUS, "pad": [*keep, k, 0], "value": 0.0}))
        steps.append(("add", {"input": tail, "other": PREVIOUS}))
        current = Ref(len(steps) - 1)
    return steps or None


def _repeat(a: dict[str, Any]) -> list[Step] | None:
    """x.repeat(r...): the tensor tiled r times along each dim (leading repeats add dims), each
    dim in turn a broadcast of a new outer dim between two reshapes (one rank above)."""
    repeats, shape = list(a["repeats"]), _shape(a["self"])
    if len(repeats) < len(shape) or any(r < 1 for r in repeats):
        return None
    current = [1] * (len(repeats) - len(shape)) + shape
    steps: list[Step] = []
    if len(current) != len(shape):
        steps.append(("reshape", {"input": a["self"], "shape": list(current)}))
    for d, r in enumerate(repeats):
        if r > 1:
            _grow_dim(steps, a["self"], current, d, r, inner=False)
    return steps or None


def _embedding(a: dict[str, Any]) -> list[Step] | None:
    """F.embedding / nn.Embedding: a row of the 2-d weight per index (padding_idx only
    changes gradients)."""
    if len(_shape(a["weight"])) != 2:
        return None
    return _one("embedding", input=a["indices"], weight=a["weight"])


def _rows_picked(source: Any, dim: int, index: Any) -> list[Step] | None:
    """source's slices along `dim` picked by int64 `index` (any shape): the dim moved to the
    front, the rest flattened into one row each, an embedding, and the result laid out as
    index.shape with the other dims where dim was (x[idx], index_select)."""
    shape, index_shape = _shape(source), _shape(index)
    if not shape or not index_shape:
        return None
    dim %= len(shape)
    others = [shape[d] for d in range(len(shape)) if d != dim]
    order = [dim, *(d for d in range(len(shape)) if d != dim)]
    steps: list[Step] = []
    current: Any = source
    if order != list(range(len(shape))):
        steps.append(("permute", {"input": current, "dims": order}))
        current = PREVIOUS
    rows = [shape[dim], math.prod(others)]
    if [shape[d] for d in order] != rows:
        steps.append(("reshape", {"input": current, "shape": rows}))
        current = PREVIOUS
    steps.append(("embedding", {"input": index, "weight": current}))
    picked = [*index_shape, *others]
    if [*index_shape, rows[1]] != picked:
        steps.append(("reshape", {"input": PREVIOUS, "shape": picked}))
    if dim:  # index's dims back where dim was
        k = len(index_shape)
        back = [*range(k, k + dim), *range(k), *range(k + dim, len(picked))]
        steps.append(("permute", {"input": PREVIOUS, "dims": back}))
    return steps


def _index_select(a: dict[str, Any]) -> list[Step] | None:
    if len(_shape(a["index"])) != 1:
        return None
    return _rows_picked(a["self"], a["dim"], a["index"])


def _index(a: dict[str, Any]) -> list[Step] | None:
    """x[idx], x[:, idx], ...: one int64 index tensor on any dim, the dims before it None (full
    slices) and those after it absent. One advanced index keeps its place: the result is
    x.shape[:d] + idx.shape + x.shape[d + 1:], as _rows_picked lays it out. Bool masks and
    several index tensors stay PyTorch calls."""
    indices = list(a["indices"])
    while indices and indices[-1] is None:
        indices.pop()
    if not indices or any(i is not None for i in indices[:-1]):
        return None
    index = indices[-1]
    if not _is_tensor(index) or _is_bool_tensor(index):
        return None
    return _rows_picked(a["self"], len(indices) - 1, index)


def _rsub(a: dict[str, Any]) -> list[Step] | None:
    """other - self (1 - x), with a Python number `other`."""
    if a.get("alpha", 1) != 1 or not _is_number(a["other"]) or not _is_tensor(a["self"]):
        return None
    return _one("sub", input=a["other"], other=a["self"])


def _vector_norm(a: dict[str, Any]) -> list[Step] | None:
    """ord 2: sqrt(sum(x * x)); ord 1: sum(|x|), each sum one reduction per dim."""
    if a.get("dtype") is not None or a["ord"] not in (1, 2):
        return None
    rank = len(_shape(a["self"]))
    dims = _dims(a.get("dim"), rank) or list(range(rank - 1, -1, -1))
    keep = bool(a.get("keepdim", False))
    whole = len(dims) == rank and not keep  # 0-d: see _zero_d_last
    first = (
        ("mul", {"input": a["self"], "other": a["self"]})
        if a["ord"] == 2
        else ("abs", {"input": a["self"]})
    )
    sums = [("sum", {"input": PREVIOUS, "dim": d, "keepdim": keep or whole}) for d in dims]
    root = [("sqrt", {"input": PREVIOUS})] if a["ord"] == 2 else []
    return [first, *sums, *root, *_zero_d_last(whole)]


def _isnan(a: dict[str, Any]) -> list[Step]:
    """isnan(x) is x != x: IEEE's one value unequal to itself."""
    return _one("ne", input=a["self"], other=a["self"])


def _any(a: dict[str, Any]) -> list[Step] | None:
    """any(mask, dim) of a bool mask: the largest of where(mask, 1.0, 0.0) along each dim
    (innermost first, as _reduction), then != 0.0: a bool result again."""
    rank = len(_shape(a["self"]))
    dims = _dims(a.get("dim"), rank)
    if dims is None or not _is_bool_tensor(a["self"]):
        return None
    maxima = _reduce_over("amax", PREVIOUS, dims, bool(a.get("keepdim", False)))
    ones = ("where", {"condition": a["self"], "input": 1.0, "other": 0.0})
    return [ones, *maxima, _as_bool(PREVIOUS)]


def _full_like(a: dict[str, Any]) -> list[Step] | None:
    """full_like(x, v) of a float32 x (zeros_like and ones_like decompose to it): the constant
    v broadcast to x's shape; other dtypes stay PyTorch (the IR computes float32)."""
    dtype = a.get("dtype")
    if a["self"].meta["val"].dtype != torch.float32 or dtype not in (None, torch.float32):
        return None
    value = a["fill_value"]
    if not _is_number(value) or not _shape(a["self"]):
        return None
    return _one("broadcast_to", input=value, size=_shape(a["self"]))


def _full(a: dict[str, Any]) -> list[Step] | None:
    """torch.full(size, v) made in forward: the constant broadcast to `size`; a bool one
    (torch.ones(T, T, dtype=bool), a mask's start) as the float 0/1 constant != 0."""
    size, value, dtype = list(a["size"]), a["fill_value"], a.get("dtype")
    if not isinstance(value, int | float):
        return None
    if not size:  # 0-d (logsigmoid's min(0, x)): one element, which broadcasts alike
        if dtype not in (None, torch.float32):
            return None
        return _one("broadcast_to", input=float(value), size=[1])
    if dtype is torch.bool:
        return [("broadcast_to", {"input": float(bool(value)), "size": size}), _as_bool(PREVIOUS)]
    # No dtype: PyTorch's from the value (an int is int64, which the IR does not compute).
    if dtype is not torch.float32 and not (dtype is None and isinstance(value, float)):
        return None
    return _one("broadcast_to", input=value, size=size)


def _as_bool(source: Any) -> Step:
    """A float 0/1 tensor back to the bool mask it holds."""
    return ("ne", {"input": source, "other": 0.0})


def _triangle(op: str) -> Entry:
    """triu/tril; of a bool mask (causal masks made with dtype=bool) through its float 0/1
    copy, as the catalog's triangles take float32 (the zeroed part reads false)."""

    def entry(a: dict[str, Any]) -> list[Step]:
        if not _is_bool_tensor(a["self"]):
            return _one(op, input=a["self"], diagonal=a["diagonal"])
        ones = ("where", {"condition": a["self"], "input": 1.0, "other": 0.0})
        return [ones, (op, {"input": PREVIOUS, "diagonal": a["diagonal"]}), _as_bool(PREVIOUS)]

    return entry


def _where(a: dict[str, Any]) -> list[Step] | None:
    """torch.where(condition, self, other): a number branch becomes a constant (lower.py)."""
    if not _is_tensor(a["condition"]):
        return None
    return _one("where", condition=a["condition"], input=a["self"], other=a["other"])


def _masked_fill(a: dict[str, Any]) -> list[Step] | None:
    """x.masked_fill(mask, value) = where(mask, value, x); value a number or a 0-d constant."""
    if not (_is_tensor(a["mask"]) and _is_tensor(a["self"])):
        return None
    return _one("where", condition=a["mask"], input=a["value"], other=a["self"])


# nll_loss_forward's reduction argument (ATen's Reduction enum) as F.nll_loss spells it.
_LOSS_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _nll_loss(a: dict[str, Any]) -> list[Step] | None:
    """nll_loss_forward(self, target, weight, reduction, ignore_index): element 0 of its
    (output, total_weight) tuple; cross_entropy exports to it after _log_softmax.  (N, C)
    scores and int64 class targets only; class weights stay PyTorch."""
    if a["weight"] is not None or len(_shape(a["self"])) != 2:
        return None
    if a["target"].meta["val"].dtype != torch.int64:
        return None
    return _one(
        "nll_loss",
        input=a["self"],
        target=a["target"],
        ignore_index=a["ignore_index"],
        reduction=_LOSS_REDUCTIONS[a["reduction"]],
    )


def _string_padding(a: dict[str, Any]) -> list[int] | None:
    """'valid' → zeros; 'same' → the symmetric padding that keeps the size (stride 1),
    or None where PyTorch would pad one side more (an even dilated kernel)."""
    spatial = len(a["weight"].meta["val"].shape) - 2
    if a["padding"] == "valid":
        return [0] * spatial
    kernel = list(a["weight"].meta["val"].shape[2:])
    dilation = list(a["dilation"]) * (spatial if len(a["dilation"]) == 1 else 1)
    total = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
    if any(t % 2 for t in total):
        return None
    return [t // 2 for t in total]


def _conv_padding(a: dict[str, Any]) -> Any:
    return _string_padding(a) if isinstance(a["padding"], str) else a["padding"]


def _conv(rank_op: str) -> Entry:
    mapped = _same_names(rank_op, padding=_conv_padding)
    return lambda a: None if _conv_padding(a) is None else mapped(a)


def _conv_transpose(rank_op: str) -> Entry:
    return _same_names(rank_op)


def _convolution(a: dict[str, Any]) -> list[Step] | None:
    spatial = len(a["input"].meta["val"].shape) - 2
    if spatial not in (1, 2, 3):
        return None
    if a["transposed"]:
        return _conv_transpose(f"conv_transpose{spatial}d")(a)
    return _conv(f"conv{spatial}d")(a)


def _batch_norm_eval(a: dict[str, Any]) -> list[Step]:
    return _same_names("batch_norm", training=lambda _: False)(a)


def _batch_norm(a: dict[str, Any]) -> list[Step] | None:
    if a["training"]:
        return _batch_norm_train(a)
    if not _is_tensor(a["running_mean"]):
        return None
    return _batch_norm_eval(a)


def _batch_norm_train(a: dict[str, Any]) -> list[Step] | None:
    """Batch statistics (a module in training mode: KernelBench's evaluation).  The running
    statistics pass through when the overload has them (the no_stats one has none)."""
    if not a.get("training", True):
        return None
    return _same_names(
        "batch_norm_train",
        running_mean=lambda a: a.get("running_mean"),
        running_var=lambda a: a.get("running_var"),
        training=lambda _: True,
        cudnn_enabled=lambda _: True,
    )(a)


def _layer_norm(a: dict[str, Any]) -> list[Step]:
    return _same_names("layer_norm", normalized_shape=lambda a: list(a["normalized_shape"]))(a)


def _same_names(op: str, **adjusted: Callable[[dict[str, Any]], Any]) -> Entry:
    """For ATen overloads whose arguments carry the catalog's parameter names (group_norm,
    instance_norm, linear, pooling): pass every catalog parameter through by name.  The
    catalog's `input` is ATen's `self` where the overload calls it so; `adjusted` computes the
    parameters whose ATen value needs translating."""
    names = [p["name"] for p in catalog_op(op)["params"]]

    def value(a: dict[str, Any], name: str) -> Any:
        if name in adjusted:
            return adjusted[name](a)
        return a["self" if name == "input" and "input" not in a else name]

    return lambda a: _one(op, **{name: value(a, name) for name in names})


def _stride(a: dict[str, Any]) -> Any:
    return a["stride"] or None  # ATen's [] means "the kernel size", the catalog's None


def _max_pool(op: str) -> Entry:
    return _same_names(op, stride=_stride)


def _avg_pool(op: str) -> Entry:
    mapped = _same_names(op, stride=_stride)
    return lambda a: None if a.get("divisor_override") is not None else mapped(a)


def _adaptive_max(n: int) -> Entry:
    """adaptive_max_pool{n}d where every output size divides its input size: output cell i of
    a dim covers input [i * s, (i + 1) * s) with s = in / out, which is max_pool{n}d with kernel
    and stride s (a global max pool is the case out = 1). Other sizes, whose cells overlap,
    stay a PyTorch call."""

    def entry(a: dict[str, Any]) -> list[Step] | None:
        spatial, out = _shape(a["self"])[-n:], list(a["output_size"])
        if len(out) != n or any(o <= 0 or i % o for i, o in zip(spatial, out, strict=True)):
            return None
        window = [i // o for i, o in zip(spatial, out, strict=True)]
        return _one(f"max_pool{n}d", input=a["self"], kernel_size=window, stride=window,
                    padding=[0] * n, dilation=[1] * n, ceil_mode=False)  # fmt: skip

    return entry


def _adaptive_avg(op: str) -> Entry:
    return lambda a: _one(op, input=a["self"], output_size=list(a["output_size"]))


def _matmul(op: str, other: str) -> Entry:
    return lambda a: _one(op, input=a["self"], **{"other" if op == "matmul" else "mat2": a[other]})


def _addmm(a: dict[str, Any]) -> list[Step] | None:
    """addmm(input, mat1, mat2, beta, alpha) = beta * input + alpha * (mat1 @ mat2) (torch.addmm
    written in a model; nn.Linear exports as linear): the product, each scale where it is not
    1, then the sum. beta = 0 ignores input, NaN included, as torch does."""
    beta, alpha = a.get("beta", 1), a.get("alpha", 1)
    if not (_is_number(beta) and _is_number(alpha)) or not _is_tensor(a["self"]):
        return None
    steps: list[Step] = [("matmul", {"input": a["mat1"], "other": a["mat2"]})]
    if alpha != 1:
        steps.append(("mul", {"input": PREVIOUS, "other": float(alpha)}))
    if beta == 0:
        return steps
    product = Ref(len(steps) - 1)
    bias: Any = a["self"]
    if beta != 1:
        steps.append(("mul", {"input": bias, "other": float(beta)}))
        bias = PREVIOUS
    steps.append(("add", {"input": product, "other": bias}))
    return steps


def _clamp(a: dict[str, Any]) -> list[Step] | None:
    if _is_tensor(a.get("min")) or _is_tensor(a.get("max")):
        return None
    return _elementwise("clamp", a["self"], min=a["min"], max=a["max"])


def _pow(a: dict[str, Any]) -> list[Step] | None:
    if _is_tensor(a["exponent"]):
        return None
    return _elementwise("pow", a["self"], exponent=a["exponent"])


_UNARY = [
    "relu",
    "sigmoid",
    "tanh",
    "exp",
    "log",
    "abs",
    "sqrt",
    "neg",
    "selu",
    "hardsigmoid",
    "hardswish",
    "mish",
    "silu",
    "reciprocal",
    "rsqrt",
    "sign",
    "sin",
    "cos",
    "erf",
    "log2",
    "exp2",
    "floor",
    "ceil",
    "trunc",
    "round",
    "log1p",
    "expm1",
]

# Comparisons: bool results, read by where (masked_fill) or returned as PyTorch returns them.
_COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge"]

ATEN_TO_CATALOG: dict[Any, Entry] = {
    aten.add.Tensor: _binary("add"),
    aten.add.Scalar: _binary("add"),
    aten.sub.Tensor: _binary("sub"),
    aten.sub.Scalar: _binary("sub"),
    aten.mul.Tensor: _mul,
    aten.mul.Scalar: _binary("mul"),
    aten.div.Scalar: _binary("div"),
    aten.div.Tensor: _binary("div"),
    aten.div.Tensor_mode: _binary("div"),
    aten.maximum.default: _binary("maximum"),
    aten.minimum.default: _binary("minimum"),
    **{
        getattr(getattr(aten, name), form): _binary(name)
        for name in _COMPARISONS
        for form in ("Tensor", "Scalar")
    },
    aten.where.self: _where,
    aten.where.ScalarSelf: _where,
    aten.where.ScalarOther: _where,
    aten.masked_fill.Scalar: _masked_fill,
    aten.masked_fill.Tensor: _masked_fill,
    aten.isnan.default: _isnan,
    aten.logical_not.default: _unary("logical_not"),
    aten.bitwise_not.default: _unary("logical_not"),  # of a bool tensor; lower.py checks
    aten.any.dim: _any,
    aten.any.dims: _any,
    aten.full_like.default: _full_like,
    aten.unfold.default: _unfold,
    aten.pow.Tensor_Scalar: _pow,
    aten.clamp.default: _clamp,
    aten.clamp.Tensor: _clamp_tensor,
    aten.scalar_tensor.default: _scalar_tensor,
    **{getattr(aten, name).default: _unary(name) for name in _UNARY},
    aten.leaky_relu.default: _unary("leaky_relu", negative_slope="negative_slope"),
    aten.gelu.default: _unary("gelu", approximate="approximate"),
    aten.elu.default: _elu,
    aten.hardtanh.default: _unary("hardtanh", min_val="min_val", max_val="max_val"),
    aten.softplus.default: _unary("softplus", beta="beta", threshold="threshold"),
    aten.sum.dim_IntList: _reduction("sum"),
    aten.var.correction: _variance(root=False),
    aten.std.correction: _variance(root=True),
    aten.sum.default: _reduction("sum"),
    aten.mean.dim: _reduction("mean"),
    aten.mean.default: _reduction("mean"),
    aten.amax.default: _reduction("amax"),
    aten.amin.default: _reduction("amin"),
    aten.prod.dim_int: _reduction("prod"),
    aten.prod.default: _reduction("prod"),  # each dim in turn, innermost first
    aten.max.default: _reduction("amax"),  # torch.max(x): over every dim, one at a time
    aten.min.default: _reduction("amin"),
    aten.max.dim: _reduction("amax", chainable=False),  # values only: see TUPLE_RESULT
    aten.min.dim: _reduction("amin", chainable=False),
    aten.argmax.default: _reduction("argmax", chainable=False),
    aten.argmin.default: _reduction("argmin", chainable=False),
    aten.logsumexp.default: _reduction("logsumexp", chainable=False),
    aten.softmax.int: _rowwise("softmax"),
    aten._softmax.default: _rowwise("softmax"),
    aten.log_softmax.int: _rowwise("log_softmax"),
    aten._log_softmax.default: _rowwise("log_softmax"),
    aten.nll_loss_forward.default: _nll_loss,
    aten.cumsum.default: _rowwise("cumsum"),
    aten.cumprod.default: _rowwise("cumprod"),
    aten.matmul.default: _matmul("matmul", "other"),
    aten.mm.default: _matmul("matmul", "mat2"),
    aten.roll.default: _roll,
    aten.repeat.default: _repeat,
    **{getattr(aten, f"upsample_nearest{n}d").vec: _upsample_nearest for n in (1, 2, 3)},
    aten.addmm.default: _addmm,
    aten.bmm.default: _matmul("bmm", "mat2"),
    aten.linear.default: _same_names("linear"),
    aten.transpose.int: _transpose,
    aten.t.default: _t,
    aten.permute.default: _permute,
    aten.view.default: _reshape_to(lambda a: list(a["size"])),
    aten._unsafe_view.default: _reshape_to(lambda a: list(a["size"])),
    aten.reshape.default: _reshape_to(lambda a: list(a["shape"])),
    aten.unsqueeze.default: _reshape_to(_unsqueeze_shape),
    aten.squeeze.default: _reshape_to(_squeeze_shape),
    aten.squeeze.dim: _reshape_to(_squeeze_shape),
    aten.squeeze.dims: _reshape_to(_squeeze_shape),
    aten.flatten.using_ints: _reshape_to(_flatten_shape),
    aten.slice.Tensor: _slice,
    aten.select.int: lambda a: _one("select", input=a["self"], dim=a["dim"], index=a["index"]),
    aten.flip.default: lambda a: _one("flip", input=a["self"], dims=list(a["dims"])),
    aten.expand.default: lambda a: _one("broadcast_to", input=a["self"], size=list(a["size"])),
    aten.clamp_min.default: lambda a: _clamp({"self": a["self"], "min": a["min"], "max": None}),
    aten.clamp_max.default: lambda a: _clamp({"self": a["self"], "min": None, "max": a["max"]}),
    aten.triu.default: _triangle("triu"),
    aten.tril.default: _triangle("tril"),
    aten.full.default: _full,
    aten.constant_pad_nd.default: _pad,
    aten.embedding.default: _embedding,
    aten.index_select.default: _index_select,
    aten.index.Tensor: _index,
    **{
        getattr(aten, f"{kind}_pad{n}d").default: _edge_padding(mode)
        for kind, mode in (("reflection", "reflect"), ("replication", "replicate"))
        for n in (1, 2, 3)
    },
    aten.pad.default: _pad,
    aten.cat.default: _cat,
    aten.rsub.Scalar: _rsub,
    aten.linalg_vector_norm.default: _vector_norm,
    aten.batch_norm.default: _batch_norm,
    aten._native_batch_norm_legit_no_training.default: _batch_norm_eval,
    aten._native_batch_norm_legit_functional.default: _batch_norm_train,
    aten._native_batch_norm_legit.default: _batch_norm_train,
    aten._native_batch_norm_legit.no_stats: _batch_norm_train,
    aten.layer_norm.default: _layer_norm,
    aten.group_norm.default: _same_names("group_norm"),
    aten.instance_norm.default: _same_names("instance_norm"),
    aten.conv1d.default: _conv("conv1d"),
    aten.conv2d.default: _conv("conv2d"),
    aten.conv3d.default: _conv("conv3d"),
    aten.conv1d.padding: _conv("conv1d"),
    aten.conv2d.padding: _conv("conv2d"),
    aten.conv3d.padding: _conv("conv3d"),
    aten.convolution.default: _convolution,
    aten.conv_transpose1d.default: _conv_transpose("conv_transpose1d"),
    aten.conv_transpose2d.input: _conv_transpose("conv_transpose2d"),
    aten.conv_transpose3d.input: _conv_transpose("conv_transpose3d"),
    aten.max_pool1d.default: _max_pool("max_pool1d"),
    aten.max_pool2d.default: _max_pool("max_pool2d"),
    aten.max_pool3d.default: _max_pool("max_pool3d"),
    aten.max_pool2d_with_indices.default: _max_pool("max_pool2d"),
    aten.max_pool3d_with_indices.default: _max_pool("max_pool3d"),
    **{getattr(aten, f"adaptive_max_pool{n}d").default: _adaptive_max(n) for n in (2, 3)},
    aten.avg_pool1d.default: _avg_pool("avg_pool1d"),
    aten.avg_pool2d.default: _avg_pool("avg_pool2d"),
    aten.avg_pool3d.default: _avg_pool("avg_pool3d"),
    aten.adaptive_avg_pool1d.default: _adaptive_avg("adaptive_avg_pool1d"),
    aten.adaptive_avg_pool2d.default: _adaptive_avg("adaptive_avg_pool2d"),
    aten.adaptive_avg_pool3d.default: _adaptive_avg("adaptive_avg_pool3d"),
    aten._adaptive_avg_pool2d.default: _adaptive_avg("adaptive_avg_pool2d"),
    aten._adaptive_avg_pool3d.default: _adaptive_avg("adaptive_avg_pool3d"),
}

# ATen operators whose tuple result maps through element 0 (the others are unused state).
TUPLE_RESULT = {
    aten.nll_loss_forward.default,
    aten.max.dim,
    aten.min.dim,
    aten._native_batch_norm_legit_no_training.default,
    aten._native_batch_norm_legit_functional.default,
    aten._native_batch_norm_legit.default,
    aten._native_batch_norm_legit.no_stats,
    aten.max_pool2d_with_indices.default,
    aten.max_pool3d_with_indices.default,
    aten.adaptive_max_pool2d.default,
    aten.adaptive_max_pool3d.default,
}


# ATen operators that cut a tensor into views along one dim (torch.split, chunk, unbind): each
# element of the result that the graph reads (getitem) maps on its own (lower.py).
SPLIT_VIEWS = {
    aten.split.Tensor,
    aten.split_with_sizes.default,
    aten.chunk.default,
    aten.unbind.int,
}


def split_parts(node: torch.fx.Node) -> list[list[Step]] | None:
    """The steps of each element of a SPLIT_VIEWS result, in order: a narrow of the input
    (unbind: a select) at the offset the elements before it take, their lengths read from
    export's own result shapes; None for a form this does not know."""
    try:
        a = bind(node)
        results = node.meta["val"]
        rank = len(_shape(a["self"]))
        dim = a.get("dim", 0) % rank
    except (KeyError, TypeError, AttributeError, ZeroDivisionError):
        return None
    if not isinstance(results, list | tuple):
        return None
    if node.target is aten.unbind.int:
        return [_one("select", input=a["self"], dim=dim, index=i) for i in range(len(results))]
    parts, start = [], 0
    for result in results:
        length = int(result.shape[dim])
        parts.append(_one("narrow", input=a["self"], dim=dim, start=start, length=length))
        start += length
    return parts


def kept_whole() -> list[Any]:
    """Overloads the decomposition must keep whole: every key of the table (those that are
    not in the default decomposition table are simply absent from it)."""
    return list(ATEN_TO_CATALOG)


def _lerp_number_weight(start: torch.Tensor, end: torch.Tensor, weight: float) -> torch.Tensor:
    # PyTorch's own two-sided formula (ATen's lerp kernel): exact at weight 0 and at 1.
    # torch's decomposition makes the weight a 0-d tensor and picks the side with where
    # on it, which nothing in the catalog takes.
    if abs(weight) < 0.5:
        return start + (end - start) * weight
    return end - (end - start) * (1.0 - weight)


def _var_mean(
    x: torch.Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    # Two kept-whole reductions (var.correction, mean.dim), each of which maps.
    variance = aten.var.correction(x, dim, correction=correction, keepdim=keepdim)
    return variance, aten.mean.dim(x, dim, keepdim)


def _rrelu_eval(
    x: torch.Tensor,
    noise: torch.Tensor,
    lower: float = 0.125,
    upper: float = 1.0 / 3.0,
    training: bool = False,
    generator: Any = None,
) -> Any:
    # In eval mode RReLU is a leaky ReLU with the middle slope; training draws random slopes,
    # which stays a PyTorch call.
    if training:
        return NotImplemented  # torch's dispatcher then runs the operator itself
    return aten.leaky_relu.default(x, (lower + upper) / 2), noise


def own_decompositions() -> dict[Any, Callable[..., Any]]:
    """Decompositions into operators this table maps, for ATen calls whose default lowering
    (or none) leaves something the catalog cannot take."""
    return {
        aten.lerp.Scalar: _lerp_number_weight,
        aten.var_mean.correction: _var_mean,
        aten.rrelu_with_noise_functional.default: _rrelu_eval,
    }


def bind(node: torch.fx.Node) -> dict[str, Any]:
    """The call's arguments by ATen schema name, defaults filled in."""
    bound: dict[str, Any] = {}
    for i, arg in enumerate(node.target._schema.arguments):
        if i < len(node.args):
            bound[arg.name] = node.args[i]
        elif arg.name in node.kwargs:
            bound[arg.name] = node.kwargs[arg.name]
        elif arg.has_default_value():
            bound[arg.name] = arg.default_value
    return bound


def to_catalog(node: torch.fx.Node) -> list[Step] | None:
    entry = ATEN_TO_CATALOG.get(node.target)
    if entry is None:
        return None
    try:
        return entry(bind(node))
    except (KeyError, TypeError, AttributeError):
        return None  # an argument form the entry does not know: keep it in PyTorch

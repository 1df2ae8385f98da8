"""A ModelNew for any batch size: the teacher's generic kernels, verified at several batches.

The search picks and verifies kernels for the example inputs' shapes. Where every fused
fragment it chose can also be emitted in the teacher's generic mode (drtriton.teach,
`generic_shapes=True`: the wrapper reads sizes from `x.shape` and the kernels take them as
arguments), the same cover is assembled from those kernels instead, and ModelNew serves every
batch size that the checks below cover.

Which dims vary (the rule): the batch, i.e. dim 0 of every tensor argument whose dim 0 equals
that of the first tensor argument, all together. That is what a user changes between calls,
and it is the dim torch.export makes dynamic for `Dim("batch")` on those arguments. Other
dims (channels, features, sequence length) stay as in the example: their sizes shape the
parameters or the kernels' own configuration.

How it is checked (every step must pass, else ModelNew keeps the example-shape kernels):
1. An example batch of 1 is structure, not a size: the generic kernels treat unit dims as
   broadcast (core/codegen/sizes.h), so nothing varies.
2. The model is exported again at batch 2b+1 (`resized_task`: the example's own get_inputs,
   drawn again and concatenated along dim 0), and ModelNew is assembled from that export
   with the same cover. Its verified text must equal the example's, character for character:
   no size is then baked into a kernel, a forward line or a constant. torch.export
   specializes sizes 0 and 1, so one other size >= 2 stands for all of them.
3. The one text is verified by the strict verifier (drtriton.verify, in its sandboxed
   worker) at the example batch b, at 2b+1 and at 1. Sizes 2 and up are served when b and
   2b+1 pass; batch 1 also when its own verification passes.
4. Up to the batch at which some value of the program would reach 2^31 elements (the
   kernels' offsets are 32-bit), from each value's size at b and at 2b+1.
5. On a GPU, unless the user keeps slower kernels, the generic ModelNew must beat eager at
   the example batch, as the searched kernels were chosen to (they were timed; these were not).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from drtriton import _core
from drtriton.errors import UserError
from drtriton.frontend import FrontendResult, from_module_source
from drtriton.optimize import assemble
from drtriton.optimize.serving import Serving
from drtriton.search.stitch import stitch
from drtriton.verify.dropin import verified_part

# (task code, ModelNew text, its batch) -> the verifier's JSON verdict (pipeline's).
Judge = Callable[[str, str, int], dict[str, Any]]
INT32_ELEMENTS = 2**31 - 1  # the kernels index with 32-bit offsets


@dataclass
class Batch:
    """The batch dim that varies: the argument positions it is dim 0 of, the example's size."""

    positions: list[int]
    example: int

    @property
    def other(self) -> int:
        """The second size of the text check: odd, and no power of two, so masks matter."""
        return 2 * self.example + 1


@dataclass
class Generic:
    """What the generic attempt produced: ModelNew and its example-batch verdict, or why not."""

    model_new: str | None = None
    verdict: dict[str, Any] | None = None
    serving: Serving | None = None
    checks: list[dict[str, Any]] = field(default_factory=list)  # {"batch", "status", "reason"}
    why: str = ""


def batch_of(frontend: FrontendResult) -> Batch | None:
    """The batch dim by the rule in the module docstring; None without a tensor argument."""
    names = assemble.signature(frontend)
    shapes = {i.name: i.shape for i in frontend.inputs if i.kind == "user"}
    tensors = [(k, shapes[n]) for k, n in enumerate(names) if shapes.get(n)]
    if not tensors:
        return None
    example = tensors[0][1][0]
    return Batch([k for k, shape in tensors if shape[0] == example], example)


def resized_task(code: str, batch: Batch, size: int) -> str:
    """The user's file with get_inputs() returning batch `size`: the example's own draws
    (same distributions, dtypes and other dims), repeated along dim 0 and cut to `size`."""
    draws = -(-size // batch.example)
    return (
        code.rstrip()
        + f"""


# drtriton optimize: the example inputs at batch {size} (optimize/generic.py)
_drtriton_example_inputs = get_inputs


def get_inputs():
    import torch as _drtriton_torch

    draws = [list(_drtriton_example_inputs()) for _ in range({draws})]
    inputs = draws[0]
    for k in {batch.positions!r}:
        inputs[k] = _drtriton_torch.cat([d[k] for d in draws])[:{size}]
    return inputs
"""
    )


def _generic_kernel(source: str, chosen: str | None, k: int) -> str | None:
    """The teacher's generic candidate for a fragment, in the configuration of the chosen
    (specialized) one where the teacher made it; None where the generic mode does not apply."""
    from drtriton.teach import generic_unsupported_ops, unsupported_ops, variants

    if unsupported_ops(source) or generic_unsupported_ops(source):
        return None
    generic = variants(source, k, generic_shapes=True)
    if not generic:
        return None
    specialized = variants(source, k)
    index = specialized.index(chosen) if chosen in specialized else 0
    return generic[index] if index < len(generic) else generic[0]


def generic_hybrid(task: str, found: Any, max_ops: int, k: int) -> str | None:
    """The search's cover for `task` with every fused fragment's generic kernel, stitched as
    the search stitches its hybrid; None when a fragment has no generic kernel."""
    fragments = {(f["start"], f["end"]): f["source"] for f in _core.fragments(task, max_ops)}
    chosen = {(f.start, f.end): f.candidate for f in found.fragments}
    kernels = []
    for seg in found.cover:
        if not seg["fused"]:
            continue
        span = (seg["start"], seg["end"])
        kernel = None
        if span in fragments:
            kernel = _generic_kernel(fragments[span], chosen.get(span), k)
        if kernel is None:
            return None
        kernels.append(kernel)
    return stitch(_core.plan_hybrid(task, found.cover)["entry"], kernels)


def generic_pieces(frontend: FrontendResult, pieces: list[assemble.Piece],
                   found_by_run: dict[int, Any], max_ops: int, k: int
                   ) -> list[assemble.Piece] | str:  # fmt: skip
    """`frontend`'s runs with the example's covers in generic kernels, or why not."""
    runs = frontend.runs()
    if len(runs) != len(pieces):
        return f"batch changes the program's runs ({len(pieces)} at the example, {len(runs)})"
    out = []
    for n, (run, piece) in enumerate(zip(runs, pieces, strict=True)):
        if piece.hybrid is None:
            out.append(assemble.Piece(run))
            continue
        if run.task is None:
            return f"run {n} has no task at another batch"
        hybrid = generic_hybrid(run.task, found_by_run[n], max_ops, k)
        if hybrid is None:
            ops = ", ".join(str(line.op) for line in run.lines)
            return f"run {n} ({ops}) has a fragment the generic mode does not emit"
        out.append(assemble.Piece(run, hybrid))
    return out


def max_batch(example: FrontendResult, other: FrontendResult, batch: Batch) -> int | str:
    """The largest batch at which every value stays under 2^31 elements, its size taken as
    affine in the batch through its sizes at the two exports; or why none."""
    limit = None
    for name, tensor in example.tensors.items():
        if name not in other.tensors:
            return f"value {name} is missing at batch {batch.other}"
        small, large = math.prod(tensor.shape), math.prod(other.tensors[name].shape)
        per_row, rest = divmod(large - small, batch.other - batch.example)
        if rest:
            return f"value {name} does not grow by whole rows with the batch"
        if per_row <= 0:  # the same at every batch (a parameter, a reduction over the batch)
            continue
        fixed = small - per_row * batch.example
        bound = (INT32_ELEMENTS - fixed) // per_row
        limit = bound if limit is None else min(limit, bound)
    return INT32_ELEMENTS if limit is None else limit


def attempt(code: str, frontend: FrontendResult, pieces: list[assemble.Piece],
            found_by_run: dict[int, Any], attributes: set[str], serving: Serving,
            options: dict[str, Any], judge: Judge) -> Generic:  # fmt: skip
    """The module docstring's steps. `options`: max_ops, k (the search's), seed, training
    and batch_statistics (the export's), min_speedup (GPU: the least measured speed-up over
    eager that the generic ModelNew must keep at the example batch; None: any)."""
    batch = batch_of(frontend)
    if batch is None:
        return Generic(why="the model takes no tensor argument")
    if batch.example < 2:
        return Generic(why="the example batch is 1, which the kernels take as broadcast structure")
    built = _kernels_at(code, frontend, pieces, found_by_run, attributes, options, batch)
    if isinstance(built, str):
        return Generic(why=built)
    mine, text, other = built
    top = max_batch(frontend, other, batch)
    if isinstance(top, str):
        return Generic(why=top)
    result = _verified(code, text, batch, judge, options.get("min_speedup"))
    if result.why:
        return result
    lowest = 1 if result.checks[-1]["status"] == "correct" else 2
    result.serving = serving.any_batch(batch.positions, lowest, top)
    result.model_new = assemble.model_new(code, frontend, mine, attributes, result.serving)
    assert verified_part(result.model_new) == verified_part(text), "the verified text changed"
    return result


def _kernels_at(code: str, frontend: FrontendResult, pieces: list[assemble.Piece],
                found_by_run: dict[int, Any], attributes: set[str], options: dict[str, Any],
                batch: Batch) -> tuple[list[assemble.Piece], str, FrontendResult] | str:  # fmt: skip
    """(the generic pieces, their ModelNew, the export at the other batch) when step 2
    passes; else why not."""
    mine = generic_pieces(frontend, pieces, found_by_run, options["max_ops"], options["k"])
    if isinstance(mine, str):
        return mine
    try:
        other = from_module_source(resized_task(code, batch, batch.other), options["seed"],
                                   options["training"], fake_inputs=True,
                                   batch_statistics=options.get("batch_statistics", False))  # fmt: skip
    except (UserError, RuntimeError, ValueError, TypeError) as exc:
        return f"the model does not export at batch {batch.other}: {str(exc).splitlines()[0]}"
    theirs = generic_pieces(other, pieces, found_by_run, options["max_ops"], options["k"])
    if isinstance(theirs, str):
        return theirs
    text = assemble.model_new(code, frontend, mine, attributes)
    again = assemble.model_new(code, other, theirs, attributes)
    if verified_part(text) != verified_part(again):
        return f"ModelNew's text differs at batch {batch.other}: a size is baked in"
    return mine, text, other


def _verified(code: str, text: str, batch: Batch, judge: Judge,
              min_speedup: float | None = None) -> Generic:  # fmt: skip
    """Step 3: `text` verified at b, 2b+1 and 1 (`why` set when b or 2b+1 fails, or when the
    example batch's measured speed-up is under `min_speedup`)."""
    result = Generic()
    for size in (batch.example, batch.other, 1):
        task = code if size == batch.example else resized_task(code, batch, size)
        verdict = judge(task, text, size)
        result.checks.append({"batch": size, "status": verdict.get("status"),
                              "reason": str(verdict.get("reason", ""))[:200]})  # fmt: skip
        if size == batch.example:
            result.verdict = verdict
        if not verdict.get("correct") and size != 1:
            result.why = f"the generic kernels failed at batch {size}: {verdict.get('status')}"
            return result
        if size == batch.example and _slower(verdict, min_speedup):
            result.why = (f"the generic kernels are {verdict['speedup']:.2f}x eager PyTorch at "
                          f"batch {size}, under the {min_speedup}x a deployment keeps")  # fmt: skip
            return result
    return result


def _slower(verdict: dict[str, Any], min_speedup: float | None) -> bool:
    """GPU: whether the measured speed-up falls short (the search chose the example-shape
    kernels by measurement; the generic ones were not timed before this verdict)."""
    speedup = verdict.get("speedup")
    return min_speedup is not None and isinstance(speedup, int | float) and speedup < min_speedup

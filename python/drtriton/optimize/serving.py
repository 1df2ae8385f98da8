"""What a generated ModelNew's kernels serve, and the PyTorch path for everything else.

The kernels are built and verified for the example inputs' shapes and dtypes, in one module
mode, and (on a CPU) for Triton's interpreter. A drop-in ModelNew must still answer every call
the Model answers. So the file ends with a wrapper, after verify/dropin.py's marker (the
verifier judges the text before it, where the kernels' own ModelNew is):

    _DrtritonKernels = ModelNew                    # the verified class
    class ModelNew(_DrtritonKernels):
        def forward(self, x, scale):               # the user's argument names
            why = _drtriton_fallback(self, (x, scale))  # (named _drtriton_why there)
            if why is not None:                    # said once per reason (RuntimeWarning)
                _drtriton_say(why)
                return Model.forward(self, x, scale)
            return _DrtritonKernels.forward(self, x, scale)

Served: the tensor shapes and dtypes of the examples (each positional argument) or, where
optimize/generic.py verified kernels that read sizes at run time, any batch in the range it
verified (dim 0 of the arguments that share the first one's; one size for all of them) with
the other dims as in the examples; the Python numbers torch.export baked in; the mode the
kernels reproduce (only for models whose output depends on it: batch norm, dropout,
`self.training`); and on a CPU only when Triton was first imported with TRITON_INTERPRET=1
(compiled Triton needs a GPU; PyTorch is the faster CPU path anyway).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from typing import Any

import torch

# Modules whose output depends on train() / eval(). Also any forward that reads self.training
# or calls dropout itself (checked in the source).
_MODE_DEPENDENT = (
    torch.nn.modules.batchnorm._BatchNorm,
    torch.nn.modules.instancenorm._InstanceNorm,
    torch.nn.modules.dropout._DropoutNd,
    torch.nn.RNNBase,
    torch.nn.MultiheadAttention,
    torch.nn.TransformerEncoderLayer,
    torch.nn.TransformerDecoderLayer,
)
_MODE_WORDS = ("self.training", "dropout(", "batch_norm(", "instance_norm(", "rrelu(")


@dataclass
class Serving:
    """What the kernels serve; `arguments` are ModelNew.forward's parameter names, in order."""

    arguments: list[str]
    # Shape and dtype by position; a None dim is the batch (optimize/generic.py): any size in
    # `batch` (lowest, highest), one size for every argument that has it.
    tensors: dict[int, tuple[tuple[int | None, ...], str]] = field(default_factory=dict)
    specialized: dict[int, Any] = field(default_factory=dict)  # baked-in Python numbers
    training: bool | None = None  # the mode the kernels reproduce; None: either
    batch: tuple[int, int] | None = None

    def any_batch(self, positions: list[int], lowest: int, highest: int) -> Serving:
        """This serving with dim 0 of the arguments at `positions` free in [lowest, highest]."""
        tensors = {
            k: ((None, *shape[1:]), dtype) if k in positions else (shape, dtype)
            for k, (shape, dtype) in self.tensors.items()
        }
        return replace(self, tensors=tensors, batch=(lowest, highest))

    def shapes(self) -> str:
        """The served shapes in words, e.g. "float32 (B, 16), B from 1 to 2,097,151"."""
        args = ", ".join(f"`{self.arguments[k] if k < len(self.arguments) else k}`: {dtype} "
                         f"{_spelled(shape)}" for k, (shape, dtype) in self.tensors.items())  # fmt: skip
        if self.batch is None:
            return args
        return f"{args}; B any batch from {self.batch[0]:,} to {self.batch[1]:,}"


def _spelled(shape: tuple[int | None, ...]) -> str:
    dims = ["B" if d is None else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def mode_dependent(model: torch.nn.Module, source: str) -> bool:
    """Whether the model's output may differ between train() and eval() (conservative)."""
    if any(isinstance(m, _MODE_DEPENDENT) for m in model.modules()):
        return True
    return any(word in source for word in _MODE_WORDS)


def user_arguments(model: torch.nn.Module, internal: list[str]) -> list[str]:
    """Model.forward's own parameter names when they map one to one onto the positional
    arguments (`internal`: x0, x1, ...); the internal names otherwise (*args, keyword-only)."""
    try:
        params = list(inspect.signature(type(model).forward).parameters.values())[1:]
    except (TypeError, ValueError):
        return list(internal)
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in params]
    if len(params) != len(internal) or any(p.kind not in plain for p in params):
        return list(internal)
    if len(set(names)) != len(names) or any(not n.isidentifier() for n in names):
        return list(internal)
    if any(n in ("Model", "ModelNew", "torch") or n.lower().startswith("_drtriton") for n in names):
        return list(internal)  # would shadow what the wrapper calls
    return names


def number_literal(value: Any) -> str:
    """Python source for a baked-in number (nan and inf have no literal of their own)."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"float({str(value)!r})"
    return repr(value)


def _numbers(numbers: dict[int, Any]) -> str:
    return "{" + ", ".join(f"{k}: {number_literal(v)}" for k, v in numbers.items()) + "}"


def drop_in_block(serving: Serving, internal: list[str]) -> str:
    """The wrapper after the marker (the module docstring); `internal`: the verified forward's
    argument names (x0, x1, ...), passed positionally."""
    from drtriton.verify.dropin import DROP_IN_MARK

    names = serving.arguments if len(serving.arguments) == len(internal) else internal
    args = ", ".join(names)
    packed = f"({args}{',' if len(names) == 1 else ''})"
    return f'''

{DROP_IN_MARK}
# What the kernels above were built and verified for (drtriton/optimize/serving.py). Any other
# call runs Model's own PyTorch forward, with a one-time warning that says why.
import warnings as _drtriton_warnings

_DRTRITON_TENSORS = {serving.tensors!r}
_DRTRITON_NUMBERS = {_numbers(serving.specialized)}
_DRTRITON_TRAINING = {serving.training!r}
_DRTRITON_BATCH = {serving.batch!r}  # (lowest, highest) batch for a None dim above
# Interpreted only when Triton itself was first imported with TRITON_INTERPRET=1: its own
# library functions (tl.cdiv) are decorated then, and a compiled one fails inside an
# interpreted kernel.
_DRTRITON_INTERPRETED = type(triton.language.cdiv).__name__ == "InterpretedFunction"
_drtriton_told = set()


def _drtriton_fallback(model, args):
    """Why the kernels cannot serve this call (Model's forward runs instead), or None."""
    for k, baked in _DRTRITON_NUMBERS.items():
        if not (args[k] == baked or (args[k] != args[k] and baked != baked)):
            return f"argument {{k}} is {{args[k]!r}}; torch.export baked in {{baked!r}}"
    batches = set()
    for k, (shape, dtype) in _DRTRITON_TENSORS.items():
        value = args[k]
        if not isinstance(value, torch.Tensor):
            return f"argument {{k}} is a {{type(value).__name__}}, the kernels take a tensor"
        if not _drtriton_fits(value.shape, shape) or str(value.dtype) != "torch." + dtype:
            got = f"{{str(value.dtype)[6:]}} {{tuple(value.shape)}}"
            shape = str(tuple(shape)).replace("None", "B")
            return f"argument {{k}} is {{got}}; the kernels were verified for {{dtype}} {{shape}}"
        if None in shape:
            batches.add(value.shape[0])
        if value.device.type == "cpu" and not _DRTRITON_INTERPRETED:
            return ("the inputs are on the CPU and Triton was imported without "
                    "TRITON_INTERPRET=1 (set it before Triton's first import to run the "
                    "kernels in its interpreter)")
    if len(batches) > 1:
        return f"the arguments' batch sizes differ ({{sorted(batches)}})"
    if batches and not _DRTRITON_BATCH[0] <= min(batches) <= _DRTRITON_BATCH[1]:
        low, high = _DRTRITON_BATCH
        return f"batch {{min(batches)}} is outside {{low}}..{{high}}, the batches the kernels serve"
    if _DRTRITON_TRAINING is not None and model.training != _DRTRITON_TRAINING:
        built, now = ("train", "eval") if _DRTRITON_TRAINING else ("eval", "train")
        return f"the kernels reproduce {{built}} mode and the model is in {{now}} mode"
    return None


def _drtriton_fits(shape, served):
    """Whether a tensor's shape is the served one, a None dim (the batch) matching any size."""
    return len(shape) == len(served) and all(
        want is None or got == want for got, want in zip(shape, served))


def _drtriton_say(why):
    if why not in _drtriton_told:
        _drtriton_told.add(why)
        message = f"ModelNew runs Model's PyTorch forward: {{why}}"
        _drtriton_warnings.warn(message, RuntimeWarning, stacklevel=3)


_DrtritonKernels = ModelNew


class ModelNew(_DrtritonKernels):
    """Model with drtriton's verified kernels for the calls they serve, Model's forward else."""

    def forward(self, {args}):
        _drtriton_why = _drtriton_fallback(self, {packed})
        if _drtriton_why is not None:
            _drtriton_say(_drtriton_why)
            return Model.forward(self, {args})
        return _DrtritonKernels.forward(self, {args})
'''

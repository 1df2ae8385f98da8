"""Precision modes, and strict float32 for the default one.

Modes (Options.precision; `--precision` on every command that verifies). Each is one row of
MODES: the dtype that floating inputs, init inputs, parameters and buffers are cast to (as
KernelBench's eval casts them; integer tensors keep their dtype, where KernelBench would cast
index tensors too), whether TF32 may round cuBLAS products and cuDNN convolutions, and the
default atol = rtol (KernelBench's `get_tolerance_for_precision`: 1e-4 for fp32, 1e-2 for fp16
and bf16; tf32 gets 1e-2, the tolerance published TF32 results pass at). One mode holds for
the whole verification: the reference, the candidate's worker (the PyTorch operators a hybrid
keeps), eager and torch.compile all run in it, so that no speed-up comes from a precision the
baseline was denied. fp32, the default, is the strict contract below; the other modes are
named in every verdict ("precision") and table.

Strict float32 (fp32). PyTorch lets cuDNN convolutions use TF32 by default
(`torch.backends.cudnn.allow_tf32`), which rounds their inputs to 10 mantissa bits: a float32
conv reference on an H200 is then off by about 1e-3 relative, ten times the verifier's float32
tolerance. An honest float32 kernel was rejected against it (first H200 run of paper-preset
programs: 8 of 10 conv/linear programs). References are therefore computed with TF32 off
everywhere, and the candidate's worker runs with TF32 off too: the PyTorch operators a hybrid
keeps on purpose (allow_torch: a convolution before a fused epilogue) must meet the same
tolerance (the first KernelBench run on the H200 rejected a ConvTranspose2d hybrid, half its
outputs 3e-3 off). The eager and torch.compile baselines are timed in strict float32 as well, so
that a speed-up compares two programs that meet the same tolerance; eager with PyTorch's defaults
(TF32 convolutions, what KernelBench's harness times) is reported beside them (verdict extra
"eager_tf32_ms").

torch is imported inside the functions: the CLIs read MODES while parsing, before torch loads.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from drtriton.errors import UserError


@dataclass(frozen=True)
class Mode:
    """One precision mode: a row of MODES."""

    name: str
    dtype: str  # torch dtype (attribute name) of floating inputs, parameters and buffers
    tf32: bool  # TF32 allowed in cuBLAS and cuDNN (reference, baselines, candidate's worker)
    tolerance: float  # the default atol and rtol (Options.atol/rtol override both)

    @property
    def casts(self) -> bool:
        """Whether floating tensors change dtype in this mode (bf16, fp16)."""
        return self.dtype != "float32"

    def torch_dtype(self) -> Any:
        import torch

        return getattr(torch, self.dtype)


MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        Mode("fp32", "float32", tf32=False, tolerance=1e-4),
        Mode("tf32", "float32", tf32=True, tolerance=1e-2),
        Mode("bf16", "bfloat16", tf32=False, tolerance=1e-2),
        Mode("fp16", "float16", tf32=False, tolerance=1e-2),
    )
}
DEFAULT = "fp32"
STRICT = MODES[DEFAULT]


def mode(name: str) -> Mode:
    """The mode called `name`; a UserError (one line) for any other name."""
    found = MODES.get(name)
    if found is None:
        raise UserError(f"unknown precision {name!r}: expected one of {', '.join(MODES)}")
    return found


def disable_tf32() -> None:
    """TF32 off for cuDNN convolutions and cuBLAS matmuls, process-wide."""
    set_tf32(False)


def set_tf32(allowed: bool) -> None:
    """TF32 on or off for cuDNN convolutions and cuBLAS matmuls, process-wide."""
    import torch

    torch.backends.cudnn.allow_tf32 = allowed
    torch.backends.cuda.matmul.allow_tf32 = allowed


@contextlib.contextmanager
def _flags(cudnn: bool, matmul: bool) -> Iterator[None]:
    import torch

    before = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = cudnn, matmul
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = before


def strict_fp32() -> contextlib.AbstractContextManager[None]:
    """TF32 off in cuDNN and cuBLAS for the block (the fp32 mode's flags)."""
    return _flags(False, False)


def in_mode(m: Mode) -> contextlib.AbstractContextManager[None]:
    """The mode's TF32 flags for the block: on in both for tf32, off in both otherwise."""
    return _flags(m.tf32, m.tf32)


def pytorch_defaults() -> contextlib.AbstractContextManager[None]:
    """PyTorch's default precision flags (TF32 on in cuDNN convolutions, off in cuBLAS
    products), the setting KernelBench's harness times eager in."""
    return _flags(True, False)


def cast(values: list[Any], m: Mode) -> list[Any]:
    """`values` with every floating tensor in the mode's dtype (the others as they are);
    the list itself when the mode casts nothing."""
    if not m.casts:
        return values
    import torch

    dtype = m.torch_dtype()
    return [_as(x, dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
            for x in values]  # fmt: skip


def probe_zeros(specs: list[tuple[list[int], str]], device: str, precision: str) -> list[Any]:
    """Zero tensors of (shape, IR dtype) `specs` on `device`, floating ones in `precision`'s
    dtype: the inputs a dispatch probe runs program lines on (optimize/allowed.py,
    search/hybrid.py), since the ATen operator a line reaches can depend on the dtype."""
    import torch

    zeros = [torch.zeros(shape, dtype=getattr(torch, dtype), device=device)
             for shape, dtype in specs]  # fmt: skip
    return cast(zeros, mode(precision))


def widened(values: list[Any]) -> list[Any]:
    """Half-precision tensors as float32 copies (exact: every bf16 and fp16 value is a
    float32 value), strides kept; everything else as it is."""
    import torch

    half = (torch.float16, torch.bfloat16)
    return [_as(x, torch.float32) if isinstance(x, torch.Tensor) and x.dtype in half else x
            for x in values]  # fmt: skip


def _as(x: Any, dtype: Any) -> Any:
    """A copy of tensor `x` in `dtype` with its strides (a strided input stays strided, which
    `Tensor.to` does not promise for a tensor that is not dense)."""
    import torch

    copy = torch.empty_strided(x.size(), x.stride(), dtype=dtype, device=x.device)
    try:
        copy.copy_(x)
    except RuntimeError:  # overlapping strides (expand): a dense copy then
        return x.to(dtype)
    return copy

"""Output comparison: tolerances, the norm check against tiny outputs, NaN/inf positions."""

from __future__ import annotations

import torch

from drtriton.verify.compare import compare


def test_zeros_fail_softmax_over_16k_values() -> None:
    ref = torch.softmax(torch.rand(2, 16384) * 0.1, dim=-1)  # entries ~6.1e-5 < atol
    zeros = torch.zeros_like(ref)
    # The trap: a plain allclose accepts them (KernelBench issue 165).
    assert torch.allclose(zeros, ref, atol=1e-4, rtol=1e-4)
    problem = compare([zeros], [ref], None, None)
    assert problem and "relative L2" in problem


def test_rounding_noise_passes() -> None:
    ref = torch.randn(1000, dtype=torch.float64).float()
    noisy = ref * (1 + 1e-6 * torch.randn(1000))
    assert compare([noisy], [ref], None, None) is None


def test_exact_zero_reference_accepts_tiny_noise() -> None:
    ref = torch.zeros(100)
    assert compare([ref + 1e-7], [ref], None, None) is None
    assert compare([ref + 1e-3], [ref], None, None) is not None


def test_shape_dtype_and_count() -> None:
    ref = torch.ones(4, 5)
    assert "shape" in compare([ref.view(-1)], [ref], None, None)
    assert "dtype" in compare([ref.double()], [ref], None, None)
    assert "values" in compare([ref, ref], [ref], None, None)


def test_nan_and_inf_positions_must_match() -> None:
    ref = torch.tensor([1.0, float("nan"), float("inf")])
    assert compare([ref.clone()], [ref], None, None) is None
    assert "NaN" in compare([torch.tensor([float("nan"), 1.0, float("inf")])], [ref], None, None)
    assert "inf" in compare([torch.tensor([1.0, float("nan"), -float("inf")])], [ref], None, None)


def test_tolerance_is_configurable_and_fp16_default_is_looser() -> None:
    ref = torch.ones(10)
    assert compare([ref + 5e-3], [ref], None, None) is not None
    assert compare([ref + 5e-3], [ref], 1e-2, 1e-2) is None
    half = torch.ones(10, dtype=torch.float16)
    assert compare([half + 4e-3], [half], None, None) is None


def test_integer_outputs_match_exactly() -> None:
    ref = torch.arange(10)
    assert compare([ref.clone()], [ref], None, None) is None
    assert "differ" in compare([ref + 1], [ref], None, None)


def test_subclass_is_refused() -> None:
    class Liar(torch.Tensor):
        pass

    ref = torch.ones(3)
    assert "tensor" in compare([ref.as_subclass(Liar)], [ref], None, None)

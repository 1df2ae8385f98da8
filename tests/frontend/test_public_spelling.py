"""Public spellings of opaque ATen calls (frontend/public.py) compute what the ATen call does."""

from __future__ import annotations

import torch

from drtriton.frontend.public import public_call


def _run(spelling: str, **names: torch.Tensor) -> torch.Tensor:
    return eval(spelling, {"torch": torch}, names)  # our own spelling of our own call


def test_alias_is_spelled_as_a_same_shape_view() -> None:
    x = torch.randn(2, 3)
    spelling = public_call(torch.ops.aten.alias.default, ["x"], {}, str)
    assert spelling is not None and "torch.ops" not in spelling
    got = _run(spelling, x=x)
    assert torch.equal(got, torch.ops.aten.alias.default(x)) and got.data_ptr() == x.data_ptr()


def test_private_overload_without_a_public_spelling_is_none() -> None:
    assert (
        public_call(torch.ops.aten._cdist_forward.default, ["a", "b", 2.0, None], {}, str) is None
    )

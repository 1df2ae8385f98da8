"""The worker's host copies of outputs (worker.HostCopies): reused after "save", never aliased."""

from __future__ import annotations

import types
from typing import Any

import pytest
import torch

from drtriton.verify.worker import HostCopies, _flatten_output


def test_a_copy_is_the_values_in_memory_of_its_own() -> None:
    host = HostCopies(torch)
    leaf = torch.randn(4, 5)
    copy = host.copy(leaf)
    assert torch.equal(copy, leaf) and copy.data_ptr() != leaf.data_ptr()
    leaf.add_(1.0)  # the candidate's tensor changing afterwards does not reach the copy
    assert not torch.equal(copy, leaf)


def test_released_memory_serves_the_next_copy_of_that_shape_and_dtype() -> None:
    host = HostCopies(torch)
    first = host.copy(torch.randn(4, 5))
    address = first.data_ptr()
    host.release([first])
    again = torch.randn(4, 5)
    second = host.copy(again)
    assert second.data_ptr() == address and torch.equal(second, again)
    # Not given back: the next copy gets new memory (two outputs waiting for "save" at once).
    third = host.copy(torch.randn(4, 5))
    assert third.data_ptr() != address
    # Another shape or dtype never takes it.
    host.release([second])
    assert host.copy(torch.randn(5, 4)).data_ptr() != address
    assert host.copy(torch.randn(4, 5, dtype=torch.float64)).data_ptr() != address


def test_nested_outputs_are_given_back_and_strided_ones_keep_their_strides() -> None:
    host = HostCopies(torch)
    a, b = host.copy(torch.randn(3)), host.copy(torch.randn(2, 2))
    host.release([[a], [b, None, 1.5]])  # the timed calls' kept outputs: a list per call
    assert host.copy(torch.randn(3)).data_ptr() == a.data_ptr()
    transposed = torch.randn(3, 4).t()
    copy = host.copy(transposed)
    assert copy.stride() == transposed.stride() and torch.equal(copy, transposed)


def test_flatten_copies_through_the_pool_and_still_refuses_odd_outputs() -> None:
    host = HostCopies(torch)
    out = (torch.ones(2), [torch.zeros(3), 4])
    flat, problem = _flatten_output(out, "cpu", host)
    assert problem is None and [type(v) for v in flat] == [torch.Tensor, torch.Tensor, int]
    assert torch.equal(flat[0], torch.ones(2)) and flat[0].data_ptr() != out[0].data_ptr()
    _, problem = _flatten_output(torch.nn.Parameter(torch.ones(2)), "cpu", host)
    assert problem is not None and "Parameter" in problem


def test_page_locked_memory_refused_falls_back_to_plain_memory() -> None:
    calls: list[bool] = []

    def empty(shape: Any, dtype: Any, pin_memory: bool = False) -> torch.Tensor:
        calls.append(pin_memory)
        if pin_memory:
            raise RuntimeError("cudaHostAlloc failed")
        return torch.empty(shape, dtype=dtype)

    fake_torch = types.SimpleNamespace(empty=empty, Tensor=torch.Tensor)
    host = HostCopies(fake_torch)
    gpu_leaf = types.SimpleNamespace(shape=(2,), dtype=torch.float32, is_cuda=True)
    assert host._new(gpu_leaf).shape == (2,)
    assert host._new(gpu_leaf).shape == (2,)
    assert calls == [True, False, False]  # asked once, then plain memory only
    assert host.pin is False


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int64, torch.bool])
def test_every_output_dtype_round_trips(dtype: torch.dtype) -> None:
    host = HostCopies(torch)
    leaf = (torch.randn(6) * 10).to(dtype)
    assert torch.equal(host.copy(leaf), leaf)

"""Strided slices, unfold and rank-6 window partitions of vision models (ViT patches, Swin's
window partition and patch merging) map onto the catalog's layout operators (narrow, pad,
reshape, select, permute); the mapped program reproduces the module and the teacher's kernels
for it pass the verifier in the interpreter."""

from __future__ import annotations

import pytest
from test_frontend import assert_maps_and_reproduces, assert_stays_partly_pytorch, module_task

from drtriton.frontend import from_module_source
from drtriton.teach import emit, unsupported_ops
from shared_verifier import verify

CASES = {
    # name: (forward, inputs, expected catalog operators)
    # Swin's patch merging: every second row and column, four phases (KernelBench level 3, 29).
    "patch_merging": (
        "return x[:, 0::2, 0::2] + x[:, 1::2, 1::2]\n",
        "torch.randn(2, 6, 6, 3)",
        [
            *["reshape", "select", "reshape", "select"],
            *["narrow", "pad", "reshape", "select", "narrow", "pad", "reshape", "select", "add"],
        ],
    ),
    # A step that does not divide the slice: the last window is zero-padded, never read.
    "ragged_step": (
        "return torch.relu(x[:, 1:6:2]) + x[:, ::3]\n",
        "torch.randn(3, 7)",
        ["narrow", "pad", "reshape", "select", "relu", "pad", "reshape", "select", "add"],
    ),
    # ViT's patches: unfold(dim, p, p) twice, then a reshape (KernelBench level 3, 28).
    "vit_patches": (
        "p = x.unfold(2, 4, 4).unfold(3, 4, 4)\nreturn p.reshape(2, -1, 48) * 2.0\n",
        "torch.randn(2, 3, 8, 8)",
        ["reshape", "transpose", "reshape", "permute", "reshape", "mul"],
    ),
    # Windows with gaps and a ragged end: size 2 every 3 along a dim of 8.
    "unfold_with_gaps": (
        "return torch.exp(x.unfold(1, 2, 3))\n",
        "torch.randn(2, 8)",
        ["pad", "reshape", "narrow", "exp"],
    ),
    "unfold_size_one": (
        "return x.unfold(0, 1, 2) + 1.0\n",
        "torch.randn(5, 3)",
        ["pad", "reshape", "select", "reshape", "add"],
    ),
    # Swin's window partition: a rank-6 view whose two-dim swap is a permute (transpose takes
    # rank 5 at most).
    "window_partition": (
        "w = x.view(2, 2, 3, 2, 3, 4).permute(0, 1, 3, 2, 4, 5)\n"
        "return torch.tanh(w.reshape(-1, 3, 3, 4))\n",
        "torch.randn(2, 6, 6, 4)",
        ["reshape", "permute", "reshape", "tanh"],
    ),
    # Elementwise operators take rank 6 too (Mamba's chunked einsums multiply rank-6 views).
    "rank6_elementwise": (
        "a = x.view(2, 2, 3, 2, 3, 4)\nreturn torch.relu(a) * a[:, :, :1]\n",
        "torch.randn(2, 6, 6, 4)",
        ["reshape", "relu", "narrow", "mul"],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_window_maps_and_reproduces_the_module(name):
    forward, inputs, ops = CASES[name]
    assert_maps_and_reproduces(module_task("", forward, inputs), ops)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_mapped_window_program_verifies_in_the_interpreter(name):
    forward, inputs, _ = CASES[name]
    text = from_module_source(module_task("", forward, inputs)).program_text
    assert unsupported_ops(text) == []
    verdict = verify(text, emit(text), device="cpu", input_seed=0)
    assert verdict.correct, verdict.reason


def test_overlapping_windows_stay_a_pytorch_call():
    """unfold with step < size repeats elements: no layout operator reads one element twice."""
    assert_stays_partly_pytorch(module_task("", "return x.unfold(1, 3, 1)\n", "torch.randn(2, 6)"))

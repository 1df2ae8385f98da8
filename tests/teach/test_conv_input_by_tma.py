"""A convolution's TMA kernel reading its NCHW input itself (issue 21; contraction_spec.h,
ShiftedRows::reads_input), run in Triton's interpreter as a GPU would run it.

A direct convolution without padding or stride, whose input positions fill whole 16-byte rows,
reads its input by boxes of BLOCK_K channels by BLOCK_M positions, transposed for the dot:
no channels-last copy of the input. A tap's box starts at any position (p0 + the tap's
offset), which TMA takes but Triton's interpreter refuses unless 16-byte aligned, so the
wrapper keeps the kernel to a GPU. Here a child process gives the interpreter TMA's rule (a
box at any element coordinate, zeros outside the tensor), lifts the GPU check and switches the
pointer kernel's launch off: the TMA kernel alone must compute each output in fp16.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

import pytest
from teach_tasks import task
from tma_probe import GPU_ONLY, PROBE, write_tma_alone

from drtriton.teach import emit

CASES = {
    # L2 1's form at 12 samples of 32 x 32: 64 channels in one box, bias and relu.
    "conv2d_relu": (
        ["t0 = F.conv2d(x0, x1, x2)", "t1 = torch.relu(t0)"],
        "x0, x1, x2",
        "torch.randn(12, 64, 32, 32), torch.randn(32, 64, 3, 3), torch.randn(32)",
    ),
    # 24 channels in boxes of 16: the second box's last 8 channels lie past the input (zeros).
    "conv2d_channel_blocks": (
        ["t0 = F.conv2d(x0, x1)"],
        "x0, x1",
        "torch.randn(12, 24, 32, 32), torch.randn(16, 24, 3, 3)",
    ),
    # 8 channels (the copy's rows would be 16 bytes); 3 x 3 x 3 taps over 10 x 12 x 12.
    "conv3d_eight_channels": (
        ["t0 = F.conv3d(x0, x1)", "t1 = torch.tanh(t0)"],
        "x0, x1",
        "torch.randn(8, 8, 10, 12, 12), torch.randn(16, 8, 3, 3, 3)",
    ),
    # Dilation 2 along one dim of a conv1d.
    "conv1d_dilated": (
        ["t0 = F.conv1d(x0, x1, None, 1, 0, 2)"],
        "x0, x1",
        "torch.randn(24, 16, 400), torch.randn(24, 16, 5)",
    ),
}


@pytest.fixture(scope="module")
def probe(
    tmp_path_factory: pytest.TempPathFactory, interpreted_probe: Callable[[str, pathlib.Path], Any]
) -> dict[str, dict[str, Any]]:
    for name, case in CASES.items():
        assert GPU_ONLY in emit(task(*case)), name  # the GPU's part of the flag, lifted here
    folder = tmp_path_factory.mktemp("conv_input_by_tma")
    write_tma_alone(folder, CASES)
    return interpreted_probe(PROBE, folder)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_tma_kernel_alone_reads_the_input_itself(
    probe: dict[str, dict[str, Any]], name: str
) -> None:
    row = probe[name]
    # Only the weight's copy and the TMA kernel: no copy of the input.
    assert [k.split("_")[-2] for k in row["launched"]] == ["cl", "tma"], row
    assert "x1_cl" in row["launched"][0], row
    assert row["dtype"] == "torch.float16" and row["rel_l2"] < 2e-3, row


def test_on_the_cpu_the_wrapper_keeps_the_copy_and_the_pointer_kernel() -> None:
    candidate = emit(task(*CASES["conv2d_relu"]))
    assert "k0_x0_cl = torch.empty_strided(" in candidate
    assert ") if not k0_tma else None" in candidate
    assert "k0_a_desc = TensorDescriptor(x0, [12, 64, 1024], [65536, 1024, 1]" in candidate

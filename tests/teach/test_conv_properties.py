"""Convolutions in the CPU interpreter against torch, property-style.

Transposed convolutions: the teacher emits one of stride s as prod(s) dense convolutions, one
per output phase p (o = p + s * j along each dim): only the kernel offsets k with
(p + pad - k * dilation) % s == 0 reach that phase, so each launch's K loop runs over
(input channel, contributing offset) and multiplies no structural zero
(core/codegen/conv_spec.cc).  Depthwise convolutions (one input channel per group, either
direction) multiply-accumulate through tl.sum instead of 16-wide tl.dot tiles.  Random
strides, paddings, dilations, output paddings, groups, kernel and input sizes in 1-D, 2-D and
3-D are checked against torch's float64 result, with and without bias and in both emission
modes (shape-specialized and generic sizes).  The shapes are small so that the interpreter
runs all of them in well under a minute.
"""

from __future__ import annotations

import math
import pathlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from teach_tasks import task

from drtriton.teach import emit


@dataclass(frozen=True)
class Case:
    dims: int
    stride: tuple[int, ...]
    pad: tuple[int, ...]
    out_pad: tuple[int, ...]
    dil: tuple[int, ...]
    groups: int
    kernel: tuple[int, ...]
    size: tuple[int, ...]
    cin_g: int
    cout_g: int
    batch: int | None  # None: an unbatched input
    bias: bool
    generic: bool
    transpose: bool = True

    @property
    def window_sum(self) -> bool:  # depthwise: no tl.dot
        return self.groups > 1 and self.cin_g == 1

    def out_len(self, d: int) -> int:
        if not self.transpose:
            span = self.dil[d] * (self.kernel[d] - 1) + 1
            return (self.size[d] + 2 * self.pad[d] - span) // self.stride[d] + 1
        return (
            (self.size[d] - 1) * self.stride[d]
            - 2 * self.pad[d]
            + self.dil[d] * (self.kernel[d] - 1)
            + self.out_pad[d]
            + 1
        )

    def source(self) -> str:
        n = self.dims
        lead = [] if self.batch is None else [self.batch]
        x = [*lead, self.cin_g * self.groups, *self.size]
        w = [self.cin_g * self.groups, self.cout_g, *self.kernel]
        if not self.transpose:
            w = [self.cout_g * self.groups, self.cin_g, *self.kernel]
        inputs = f"torch.randn{tuple(x)}, torch.randn{tuple(w)}"
        args, bias = "x0, x1", "None"
        if self.bias:
            inputs += f", torch.randn({self.cout_g * self.groups})"
            args, bias = "x0, x1, x2", "x2"

        def tup(v: tuple[int, ...]) -> str:
            return str(v) if n > 1 else str(v[0])

        call = (
            f"t0 = F.conv_transpose{n}d(x0, x1, {bias}, {tup(self.stride)}, {tup(self.pad)}, "
            f"{tup(self.out_pad)}, {self.groups}, {tup(self.dil)})"
        )
        if not self.transpose:
            call = (
                f"t0 = F.conv{n}d(x0, x1, {bias}, {tup(self.stride)}, {tup(self.pad)}, "
                f"{tup(self.dil)}, {self.groups})"
            )
        return task([call], args, inputs)


def random_case(
    rng: random.Random,
    dims: int,
    generic: bool,
    depthwise: bool = False,
    transpose: bool = True,
    cin_g: int | None = None,
) -> Case:
    while True:
        stride = tuple(rng.choice([1, 2, 2, 3]) for _ in range(dims))
        dil = tuple(rng.choice([1, 1, 2, 3]) for _ in range(dims))
        kernel = tuple(rng.randint(1, 4 if dims < 3 else 3) for _ in range(dims))
        pad = tuple(rng.randint(0, 2) for _ in range(dims))
        # torch: output_padding < max(stride, dilation)
        out_pad = tuple(rng.randint(0, max(s, d) - 1) for s, d in zip(stride, dil, strict=True))
        if not transpose:
            out_pad = (0,) * dims
        size = tuple(rng.randint(1, 6 if dims < 3 else 3) for _ in range(dims))
        case = Case(
            dims=dims,
            stride=stride,
            pad=pad,
            out_pad=out_pad,
            dil=dil,
            groups=rng.choice([2, 3, 4] if depthwise else [1, 1, 2]),
            kernel=kernel,
            size=size,
            cin_g=cin_g or (1 if depthwise else rng.randint(1, 3)),
            cout_g=rng.randint(1, 2 if depthwise else 3),
            batch=rng.choice([None, 1, 2]),
            bias=rng.random() < 0.5,
            generic=generic,
            transpose=transpose,
        )
        if all(case.out_len(d) >= 1 for d in range(dims)):
            return case


def cases() -> list[Case]:
    rng = random.Random(19)
    out = [random_case(rng, dims, generic=False) for dims in (1, 2, 3) for _ in range(10)]
    out += [random_case(rng, dims, generic=True) for dims in (1, 2, 3) for _ in range(3)]
    # Direct convolutions: unclamped windows, masks only where a window can leave the input,
    # the weight read as a matrix.
    out += [
        random_case(rng, dims, generic, transpose=False)
        for dims in (1, 2, 3)
        for generic in (False, False, False, True)
    ]
    for transpose in (False, True):
        out += [
            random_case(rng, dims, generic, depthwise=True, transpose=transpose)
            for dims in (1, 2, 3)
            for generic in (False, True)
        ]
    # Input channels per group a multiple of 4: both operands are read from channels-last
    # copies, with K ordered (kernel offset, input channel) (heuristics.h, ConvChannelsLast);
    # 3, 6 or 7 channels of a one-group convolution are copied with zero channels up to 4 or 8.
    out += [
        random_case(rng, dims, False, transpose=transpose, cin_g=rng.choice([4, 8]))
        for dims in (1, 2, 3)
        for transpose in (False, True)
        for _ in range(2)
    ]
    out += [
        random_case(rng, dims, False, transpose=False, cin_g=cin_g)
        for dims in (1, 2, 3)
        for cin_g in (3, 6, 7)
    ]
    # The KernelBench pattern (stride 2, pad 1, kernel 3, output_padding 1), where the phases'
    # contributing-offset counts differ (2 and 1 per dim), and dilation sharing the stride's
    # factor (phases that no kernel offset reaches get the bias alone).
    out.append(Case(3, (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, (3, 3, 3), (3, 2, 3),
                    2, 3, 2, True, False))  # fmt: skip
    out.append(Case(2, (2, 4), (0, 1), (1, 0), (2, 2), 2, (3, 2), (4, 3), 2, 2, 1, True, False))
    out += TRIMMED
    return out


# Kernels wider than the input they reach (conv_spec.cc, TrimmedTaps): the offsets that reach
# no input from any output leave the K loop, with the K each emits.  Paper-preset program
# 98's pattern (stride and dilation 2 over a 1-wide dim: 1 of 3 taps, K 54 -> 18), a dilated
# kernel over a short input at stride 1 (5 of 9 taps), and stride 3 over 2 rows (the third
# phase's 3 taps -> 2).
TRIMMED = [
    Case(
        3,
        (2, 2, 2),
        (3, 1, 2),
        (1, 1, 0),
        (2, 2, 2),
        2,
        (3, 3, 3),
        (4, 3, 1),
        2,
        3,
        None,
        False,
        False,
    ),
    Case(1, (1,), (6,), (0,), (2,), 2, (9,), (3,), 4, 2, 2, True, False),
    Case(2, (3, 1), (4, 1), (2, 0), (1, 2), 1, (7, 4), (2, 2), 3, 2, 1, False, False),
    # Direct convolutions (paper-preset 80 and 128): a 5-row kernel over 1 row padded by 2
    # (1 of 5 taps; 3 channels copied channels-last with a zero fourth), stride 2 over 2 rows
    # (2 and 4 of 5), and dilation 2 in groups (2 of 3, 2 of 4).
    Case(2, (1, 1), (2, 1), (0, 0), (1, 1), 1, (5, 3), (1, 4), 3, 2, 1, True, False, False),
    Case(
        3,
        (1, 2, 2),
        (0, 2, 3),
        (0, 0, 0),
        (2, 1, 1),
        1,
        (2, 5, 5),
        (3, 2, 2),
        2,
        3,
        None,
        False,
        False,
        False,
    ),
    Case(2, (2, 1), (1, 3), (0, 0), (1, 2), 2, (3, 4), (2, 2), 2, 2, 2, True, False, False),
]
# Input channels (per group; 4 for the copy) x the longest phase's taps per dim.
TRIMMED_K = [2 * 3 * 3 * 1, 4 * 5, 3 * 2 * 4, 4 * 1 * 3, 2 * 2 * 2 * 4, 2 * 2 * 2]


CASES = cases()

PROBE = r"""
import json, pathlib, sys
import torch
from drtriton.verify.task import import_file

folder = pathlib.Path(sys.argv[1])
result = {}
for task_path in sorted(folder.glob("task_*.py")):
    name = task_path.stem[len("task_"):]
    task = import_file(str(task_path), "task_" + name)
    cand = import_file(str(folder / f"cand_{name}.py"), "cand_" + name)
    torch.manual_seed(0)
    inputs = task.get_inputs()
    with torch.no_grad():
        ref = task.fused_operator(*[x.double() for x in inputs])
    try:
        out = cand.triton_fused_operator(*inputs)
    except Exception as exc:
        result[name] = {"error": f"{type(exc).__name__}: {exc}"[-400:]}
        continue
    scale = max(float(ref.abs().max()), 1.0)
    result[name] = {
        "shape": list(out.shape) == list(ref.shape),
        "max_err": float((out.double() - ref).abs().max()) / scale if out.numel() else 0.0,
    }
print(json.dumps(result))
"""


@pytest.fixture(scope="module")
def probe(
    tmp_path_factory: pytest.TempPathFactory, interpreted_probe: Callable[[str, pathlib.Path], Any]
) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("conv_properties")
    for i, case in enumerate(CASES):
        source = case.source()
        (folder / f"task_{i:02d}.py").write_text(source)
        (folder / f"cand_{i:02d}.py").write_text(emit(source, generic_shapes=case.generic))
    return interpreted_probe(PROBE, folder)


def test_every_case_matches_torch(probe: dict[str, dict]) -> None:
    bad = {}
    for i, case in enumerate(CASES):
        got = probe[f"{i:02d}"]
        # fp32 products of a few dozen terms: well inside 1e-5 of the largest |output|.
        if "error" in got or not got["shape"] or got["max_err"] > 1e-5:
            bad[i] = (case, got)
    assert not bad, bad


@pytest.mark.parametrize("case, k", zip(TRIMMED, TRIMMED_K, strict=True))
def test_offsets_that_reach_no_input_leave_the_k_loop(case: Case, k: int) -> None:
    text = emit(case.source(), generic_shapes=case.generic)
    assert re.search(r"# conv\w*: M=\d+ N=\d+ K=(\d+)", text).group(1) == str(k)


@pytest.mark.parametrize("i", range(len(CASES)))
def test_depthwise_and_narrow_kernels_have_no_dot(i: int) -> None:
    case = CASES[i]
    text = emit(case.source(), generic_shapes=case.generic)
    # Depthwise, or (sizes known) M or N at most 4: the narrow path (heuristics kNarrowAtMost).
    sizes = re.search(r"# conv\w*: M=(\d+) N=(\d+) K=", text)
    narrow = case.window_sum or (sizes is not None and min(map(int, sizes.groups())) <= 4)
    assert ("tl.dot(" in text) != narrow
    assert ("+= a[:, :, None] * b[None, :, :]" in text) == narrow


@pytest.mark.parametrize("i", range(len(CASES)))
def test_channels_last_copies_where_channels_fill_vectors(i: int) -> None:
    case = CASES[i]
    text = emit(case.source(), generic_shapes=case.generic)
    padded = -(-case.cin_g // 4) * 4
    # Zero channels up to a multiple of 4 for a one-group direct convolution, at most a third,
    # and only where K (window x channels) takes more than one BLOCK_K step of 32 unpadded.
    window = math.prod(case.kernel)
    paddable = (
        not case.transpose
        and case.groups == 1
        and 3 * padded <= 4 * case.cin_g
        and window * case.cin_g > 32
    )
    fills = case.cin_g % 4 == 0 or paddable
    copied = not case.generic and not case.window_sum and fills
    assert ("_cl_kernel[" in text) == copied
    if copied:  # input and weight, each copied once, then read at literal strides
        assert text.count("_cl_kernel[") == 2
        conv = text.split("def k0_conv")[1].split("def triton_fused_operator")[0]
        assert "stride_x0" not in conv and "stride_x1" not in conv


@pytest.mark.parametrize("i", [i for i, case in enumerate(CASES) if case.transpose])
def test_inner_loop_has_no_stride_masks(i: int) -> None:
    case = CASES[i]
    text = emit(case.source(), generic_shapes=case.generic)
    kernel = text.split("def triton_fused_operator")[0]
    assert not re.search(r"% \d+ == 0\)", kernel.split("acc = tl.zeros")[1]), kernel
    phases = math.prod(case.stride)
    launches = len(re.findall(r"\bk0_conv_transpose\dd_kernel\[", text))  # one per phase
    if phases == 1:
        assert "PHASE" not in text
        assert launches == 1
    elif case.generic:
        assert launches == phases
    else:  # phases with no output at all (out_len < stride) are not launched
        live = math.prod(min(case.stride[d], case.out_len(d)) for d in range(case.dims))
        assert launches == live

"""benchmarks/conv_variants.py on the CPU: the one-tile and shifted-rows TMA convolutions match
F.conv2d in Triton's interpreter (fp16: the interpreter has no bf16 tl.dot), including a tile
wider than the output row, whose extra rows read the next input row and are masked at the
store; the TMA kernels compile for sm_90 with TMA loads and wgmma; bad shapes exit 2."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

PROBE = """
import json, sys
sys.path.insert(0, sys.argv[2])
import torch, torch.nn.functional as F
import conv_variants as cv

errors = {}
for shape in [(2, 64, 7, 9, 32, 3), (1, 64, 20, 20, 16, 3)]:
    n, cin, h, w, cout, k = shape
    x = torch.rand(n, cin, h, w).half()
    weight = (torch.randn(cout, cin, k, k) / 24).half()
    bias = torch.randn(cout).half()
    rows, taps = cv.tma_operands(x, weight)
    ref = F.conv2d(x.float(), weight.float(), bias.float())
    for variant in ("tma_rows", "tma_shifted"):
        y = torch.full((n, cout, h - k + 1, w - k + 1), float("nan")).half()
        cv.launch_tma(variant, rows, taps, bias, y, shape, (16, 16, 32, 4, 2), 4)
        errors[variant + str(shape)] = ((y.float() - ref).norm() / ref.norm()).item()
print(json.dumps(errors))
"""


def test_the_tma_rows_kernel_matches_conv2d(
    tmp_path: pathlib.Path, interpreted_probe: Callable[..., Any]
) -> None:
    benchmarks = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"
    probe = PROBE.replace("sys.argv[2]", repr(str(benchmarks)))
    errors = interpreted_probe(probe, tmp_path)
    assert len(errors) == 4
    assert all(e < 1e-3 for e in errors.values()), errors  # NaN fails too


def test_the_tma_kernels_compile_for_sm90(benchmark_script: Callable[[str], ModuleType]) -> None:
    cv = benchmark_script("conv_variants.py")
    rows = cv.compile_check(["tma_rows", "tma_shifted"])
    assert len(rows) == 2 * len(cv.CONFIGS)
    for row in rows:
        assert "error" not in row, row
        assert row["tma"] >= 2 and row["wgmma"] >= 1, row


def test_the_teacher_pointer_variant_turns_the_tma_guard_off(
    benchmark_script: Callable[[str], ModuleType],
) -> None:
    cv = benchmark_script("conv_variants.py")
    shape = cv.SHAPES[0]
    tma = cv.teacher_candidate(shape)
    pointer = cv.teacher_candidate(shape, pointer=True)
    assert "k0_conv2d_tma_kernel[(" in tma and "k0_tma = x0.dtype" in tma
    assert pointer == tma.replace("    k0_tma = ", "    k0_tma = False and ")
    assert pointer.count("k0_tma = False and ") == 1


def test_a_strided_padded_shape_reaches_the_teacher_folded(
    benchmark_script: Callable[[str], ModuleType],
) -> None:
    cv = benchmark_script("conv_variants.py")
    shape = cv.parse_shape("10x64x56x56x128x3x2x1")
    assert cv.full_shape(shape) == shape and not cv.plain_shape(shape)
    assert cv.full_shape(cv.SHAPES[0]) == (*cv.SHAPES[0], 1, 0) and cv.plain_shape(cv.SHAPES[0])
    tma = cv.teacher_candidate(shape)
    assert "F.conv2d" not in tma and "k0_conv2d_tma_kernel[(" in tma
    assert "folded by strides (2, 2)" in tma


@pytest.mark.parametrize(
    "shape",
    ["128x48x128x128x128x3", "1x64x2x2x8x3", "1x64x8", "1x64x8x8x8x3x0x0", "1x64x1x1x8x3x1x0"],
)
def test_bad_shapes_exit_2(
    benchmark_script: Callable[[str], ModuleType], shape: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cv = benchmark_script("conv_variants.py")
    with pytest.raises(SystemExit) as exit_:
        cv.main(["--device", "cpu", "--shapes", shape])
    assert exit_.value.code == 2
    assert "--shapes" in capsys.readouterr().err


def test_the_fastest_config_skips_those_that_fail(
    benchmark_script: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    """gemm_variants.fastest_config, which both scripts autotune with (a fake bench here)."""
    gv = benchmark_script("gemm_variants.py")
    times = {"a": 2.0, "b": 0.5, "c": 1.0}

    def launcher(config: str) -> Callable[[], None]:
        def run() -> None:
            if config == "b":
                raise RuntimeError("out of resource: shared memory")

        run.config = config  # type: ignore[attr-defined]
        return run

    best = gv.fastest_config("tile", ["a", "b", "c"], launcher, lambda run: times[run.config])
    assert best == (1.0, "c")
    assert "tile b: RuntimeError: out of resource" in capsys.readouterr().err
    assert gv.fastest_config("tile", ["b"], launcher, lambda run: 0.0) is None

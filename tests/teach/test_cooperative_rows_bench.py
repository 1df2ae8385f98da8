"""benchmarks/cooperative_rows_speed.py on the CPU: each schedule's candidate is the one it names
(the cooperative kernel, the two-pass loop of variant 1, the split pair with the cooperative
launch switched off, variant 2's wide rows, the loop's write pass walking forward), the verifier accepts them, the JSON comes out; bad input exits 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def bench(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("cooperative_rows_speed.py")


def test_each_schedule_is_the_kernel_it_names(bench: ModuleType) -> None:
    _, source = bench.case_program("softmax:2x70000")
    coop, loop, split = (bench.candidate(source, s) for s in ("coop", "loop", "split"))
    assert "k0_softmax_coop_kernel[(" in coop and "k0_coop = k0_programs >= 9" in coop
    assert "coop" not in loop and "for r0 in tl.range(BLOCK_R, 70000, BLOCK_R)" in loop
    assert "k0_coop = False" in split and split.count("@triton.jit") == 3
    # wide: variant 2, one 16,384-element pass where variant 1 loops in 8192 blocks.
    _, shorter = bench.case_program("softmax:300x12000")
    wide, looped = bench.candidate(shorter, "wide"), bench.candidate(shorter, "loop")
    assert "BLOCK_R=16384" in wide and "for r0" not in wide
    assert "for r0 in tl.range(BLOCK_R, 12000, BLOCK_R)" in looped
    # fwd: the same loop with its write pass walking forward, the only line that differs.
    forward = bench.candidate(source, "loop_fwd").splitlines()
    changed = [(a, b) for a, b in zip(loop.splitlines(), forward, strict=True) if a != b]
    assert changed == [("        rb = 73728 - r0", "        rb = r0")]


def test_smoke_run_verifies_and_writes_json(bench: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "coop.json"
    argv = ["--device", "cpu", "--cases", "instance_norm:2x70000", "--out", str(out)]
    assert bench.main(argv) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["case"] for r in rows] == ["instance_norm:2x70000"]
    assert rows[0]["coop_status"] == rows[0]["loop_status"] == "correct"
    assert rows[0]["bytes"] == 2 * 2 * 70000 * 4


@pytest.mark.parametrize(
    "argv",
    [
        ["--device", "cpu"],  # the default cases are GPU-sized
        ["--device", "cpu", "--cases", "softmax:2by70000"],
        ["--device", "cpu", "--cases", "cumsum:2x70000"],
        ["--device", "cpu", "--cases", "softmax:2x70000", "--trials", "0"],
    ],
)
def test_bad_input_exits_2(bench: ModuleType, argv: list[str]) -> None:
    assert bench.main(argv) == 2

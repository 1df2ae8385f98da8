"""The teacher's contractions in the CPU interpreter: DOT_PRECISION is "ieee" there, exactly.

The emitted wrapper passes the GPU's split (fp16x3, the teacher's own: core/codegen/heuristics.h)
to CUDA tensors and "ieee" to CPU ones (core/codegen/wrapper.cc). fp16x3 is plain Triton code in
the kernel (fp16 parts and three fp16 tl.dots a step), which the interpreter runs: forced on CPU
tensors, every case here computes the GPU's split arithmetic, checked against float64. What
Triton 3.6's interpreter does with its own precisions, checked here so that a Triton upgrade
that changes it shows up:
- "bf16x3" and "bf16x6" fail its check ("input_precision must be one of ('tf32', 'tf32x3',
  'ieee')"): a candidate that passed the split to CPU tensors could not run;
- "ieee", "tf32" and "tf32x3" all compute the same exact fp32 product (np.matmul per tl.dot,
  its accumulator added after): the interpreter cannot show what any precision does on a GPU,
  which is why tests/teach/test_dot_split.py emulates the splits instead;
- (seen once, not checked here) bf16 operands are silently wrong there: a 16x16 product of
  randn operands cast to bf16 came out ~1e10 off, so casting to bf16 by hand is no way around.
The probe runs in a child process with TRITON_INTERPRET=1 set before Triton's first import (an
interpreted kernel cannot call tl.cdiv decorated by a compiled Triton).
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

import pytest
from teach_tasks import task

from drtriton.teach import emit

CASES = {
    "matmul": (["t0 = torch.matmul(x0, x1)"], "x0, x1", "torch.randn(48, 40), torch.randn(40, 24)"),
    "bmm": (["t0 = torch.bmm(x0, x1)"], "x0, x1", "torch.randn(3, 20, 36), torch.randn(3, 36, 18)"),
    "linear_relu": (
        ["t0 = F.linear(x0, x1, x2)", "t1 = torch.relu(t0)"],
        "x0, x1, x2",
        "torch.randn(2, 10, 64), torch.randn(24, 64), torch.randn(24)",
    ),
    "conv2d": (
        ["t0 = F.conv2d(x0, x1, x2, 1, 1)"],
        "x0, x1, x2",
        "torch.randn(2, 5, 9, 9), torch.randn(16, 5, 3, 3), torch.randn(16)",
    ),
    "conv_transpose2d": (
        ["t0 = F.conv_transpose2d(x0, x1, None, 2, 1)"],
        "x0, x1",
        "torch.randn(1, 6, 5, 5), torch.randn(6, 16, 3, 3)",
    ),
    # 16384 > 128 BLOCK_K steps of 64: the chunked loop (heuristics.cc).
    "matmul_chunked": (
        ["t0 = torch.matmul(x0, x1)"],
        "x0, x1",
        "torch.randn(16, 16384), torch.randn(16384, 16)",
    ),
    # Split-K (heuristics.cc ChooseSplitK): 2 batch entries x 4 slices of partial tiles.
    "bmm_split_k": (
        ["t0 = torch.bmm(x0, x1)"],
        "x0, x1",
        "torch.randn(2, 16, 40000), torch.randn(2, 40000, 16)",
    ),
    # A transposed convolution's two stride phases, each split over K (40,000 = 20,000
    # channels x 2 taps a phase) into 4 slices of one workspace.
    "conv_transpose1d_phased_split_k": (
        ["t0 = F.conv_transpose1d(x0, x1, None, 2)"],
        "x0, x1",
        "torch.randn(1, 20000, 4), torch.randn(20000, 16, 4)",
    ),
    # The narrow path (N at most 4: no tl.dot), split over K into 4 slices.
    "matrix_vector_split_k": (
        ["t0 = torch.matmul(x0, x1)", "t1 = torch.sigmoid(t0)"],
        "x0, x1",
        "torch.randn(8, 70000), torch.randn(70000, 1)",
    ),
    # 2^31 multiply-adds, 16 tiles across each operand: both operands' fp16x3 parts are written
    # before the matmul (heuristics.h, PresplitsOperand), which loads them in its fp16x3 branch.
    "matmul_presplit": (
        ["t0 = torch.matmul(x0, x1)"],
        "x0, x1",
        "torch.randn(2048, 512), torch.randn(512, 2048)",
    ),
    # K 600 and N 1930, no multiple of 16: both inputs are copied into zero-padded rows
    # (emit_repack.cc), their parts split along the copies' storage, and the matmul loads x0
    # up to K 608 and x1 up to N 1936 (2.2G multiply-adds, 16 tiles across each operand).
    "matmul_unaligned_presplit": (
        ["t0 = torch.matmul(x0, x1)"],
        "x0, x1",
        "torch.randn(1930, 600), torch.randn(600, 1930)",
    ),
    # A kernel's output with unaligned rows (the pooled t0, 2048 rows of 2073) copied into
    # zero-padded rows like an input, and x1's rows of 40 too.
    "pooled_matmul_unaligned": (
        ["t0 = F.max_pool1d(x0, 2, 2)", "t1 = torch.matmul(t0, x1)"],
        "x0, x1",
        "torch.randn(2048, 4146), torch.randn(2073, 40)",
    ),
    # 2.4G multiply-adds in 2 groups, input elements loaded by 9 taps x 2 N tiles: the parts of
    # both channels-last copies (emit_split.cc).
    "conv2d_grouped_presplit": (
        ["t0 = F.conv2d(x0, x1, None, 1, 1, 1, 2)"],
        "x0, x1",
        "torch.randn(4, 64, 64, 64), torch.randn(512, 32, 3, 3)",
    ),
    "matmul_past_fp16_range": (
        ["t0 = torch.matmul(x0, x1)"],
        "x0, x1",
        "torch.randn(40, 48), torch.randn(48, 24)",
    ),
    "linear_with_inf": (
        ["t0 = F.linear(x0, x1)"],
        "x0, x1",
        "torch.randn(20, 32), torch.randn(24, 32)",
    ),
    # The range guard's tile function in a split-K slice and in a stride phase.
    "bmm_split_k_past_fp16_range": (
        ["t0 = torch.bmm(x0, x1)"],
        "x0, x1",
        "torch.randn(2, 16, 40000), torch.randn(2, 40000, 16)",
    ),
    "conv_transpose2d_past_fp16_range": (
        ["t0 = F.conv_transpose2d(x0, x1, None, 2, 1)"],
        "x0, x1",
        "torch.randn(1, 6, 5, 5), torch.randn(6, 16, 3, 3)",
    ),
}
# Past the fp16x3 split's range (operands beyond 65504 * 2^8 = 1.7e7, and an inf), run on these
# inputs (emitted from the plain ones above: the task format takes constructors only): the hi
# parts overflow, and the kernel's range guard sums such tiles again with ieee products.
RANGE = {
    "matmul_past_fp16_range": "torch.randn(40, 48) * 1e9, torch.randn(48, 24)",
    "linear_with_inf": "torch.randn(20, 32).index_fill_(1, torch.tensor([3]), float('inf')), "
    "torch.randn(24, 32)",
    "bmm_split_k_past_fp16_range": "torch.randn(2, 16, 40000) * 1e9, torch.randn(2, 40000, 16)",
    "conv_transpose2d_past_fp16_range": "torch.randn(1, 6, 5, 5) * 1e9, torch.randn(6, 16, 3, 3)",
}
SPLIT = {
    "bmm_split_k": "tl.dot",
    "conv_transpose1d_phased_split_k": "PHASE=1",
    "matrix_vector_split_k": "+= a[:, :, None] * b[None, :, :]",
}
NARROW = {"matrix_vector_split_k"}
# The operands whose fp16x3 parts a kernel of their own writes first (emit_split.cc).
PRESPLIT = {
    "matmul_presplit": ("x0", "x1"),
    "matmul_unaligned_presplit": ("x0", "x1"),
    "conv2d_grouped_presplit": ("x0", "x1"),
}
# Cases whose kernel runs in fp16x3 alone here: their emitted ieee path is the same loops with
# ieee tl.dots, which bmm_split_k runs in split-K slices and conv_transpose2d in stride
# phases.  Each ieee run took the interpreter 55 s (the phased split-K) and 24 s (the pooled
# rows) on one core; the fixture took 592 s of the 2-core CI.
FP16X3_ONLY = set(PRESPLIT) | {"conv_transpose1d_phased_split_k", "pooled_matmul_unaligned"}

# Every other case's M and N are 16 or more: thinner products stay on ieee (heuristics.cc).
# The wrapper's last word on the CPU (wrapper.cc WriteSplitChoice): a float32 or bf16 product
# is "ieee" there; the forced variants below replace it with their precision.
GPU_CHOICE = (
    'if x0.device.type != "cuda" and dot_precision != "fp16":\n        dot_precision = "ieee"'
)

PROBE = r"""
import json, pathlib, sys
import torch
from drtriton.verify.task import import_file

folder = pathlib.Path(sys.argv[1])
result = {}
for task_path in sorted(folder.glob("task_*.py")):
    name = task_path.stem[len("task_"):]
    task = import_file(str(task_path), "task_" + name)
    torch.manual_seed(0)
    inputs = task.get_inputs()
    with torch.no_grad():
        ref64 = task.fused_operator(*[x.double() for x in inputs])
        ref32 = task.fused_operator(*inputs)
    finite = torch.isfinite(ref64)

    def rel_l2(out):  # over the elements float64 has finite (linear_with_inf has none)
        if not finite.any():
            return 0.0
        return float((out.double()[finite] - ref64[finite]).norm() / ref64[finite].norm())

    def same_nonfinite(out, ref):
        return all(torch.equal(f(out), f(ref)) for f in (torch.isnan, torch.isposinf,
                                                           torch.isneginf))
    row = {}
    for variant in sorted(folder.glob(f"cand_{name}__*.py")):
        label = variant.stem.split("__")[1]
        try:
            out = import_file(str(variant), variant.stem).triton_fused_operator(*inputs)
        except Exception as exc:  # the interpreter's refusal is what some variants check
            row[label] = {"error": f"{type(exc).__name__}: {exc}"[-300:]}
            continue
        row[label] = {
            "rel_l2": rel_l2(out),
            "bits": out.view(torch.int32).sum().item(),
            "nonfinite_as_fp32": same_nonfinite(out, ref32),
        }
    row["torch"] = {"rel_l2": rel_l2(ref32)}
    result[name] = row
print(json.dumps(result))
"""


@pytest.fixture(scope="module")
def probe(
    tmp_path_factory: pytest.TempPathFactory, interpreted_probe: Callable[[str, pathlib.Path], Any]
) -> dict[str, dict[str, dict]]:
    folder = tmp_path_factory.mktemp("interpreter_dot")
    for name, (lines, args, inputs) in CASES.items():
        source = task(lines, args, inputs)
        candidate = emit(source)
        assert (GPU_CHOICE in candidate) == (name not in NARROW), name  # no tl.dot: no choice
        if name in SPLIT:
            assert "_part_kernel[" in candidate and SPLIT[name] in candidate, name
        split_first = {v for v in ("x0", "x1") if f"k0_{v}_parts_kernel[" in candidate}
        assert split_first == set(PRESPLIT.get(name, ())), (name, split_first)
        probe_source = task(lines, args, RANGE[name]) if name in RANGE else source
        (folder / f"task_{name}.py").write_text(probe_source)
        if name not in FP16X3_ONLY:
            (folder / f"cand_{name}__emitted.py").write_text(candidate)
        # The same kernel, the precision forced: the GPU's fp16x3 in every case with a tl.dot,
        # and Triton's own precisions in the matmul.
        forced_here = (
            ("fp16x3", "bf16x6", "bf16x3", "tf32", "tf32x3")
            if name == "matmul"
            else (("fp16x3",) if name not in NARROW else ())
        )
        for precision in forced_here:
            forced = candidate.replace(GPU_CHOICE, f'dot_precision = "{precision}"')
            assert forced != candidate
            (folder / f"cand_{name}__{precision}.py").write_text(forced)
    return interpreted_probe(PROBE, folder)


def test_emitted_contractions_run_exactly_in_the_interpreter(probe: dict) -> None:
    for name in set(CASES) - set(RANGE) - FP16X3_ONLY:
        got = probe[name]["emitted"]
        assert "error" not in got, (name, got)
        # Exact fp32 products per tl.dot: within fp32 rounding of float64, like torch itself.
        assert got["rel_l2"] <= 2 * probe[name]["torch"]["rel_l2"], (name, got)


def test_the_fp16x3_split_is_as_accurate_as_fp32(probe: dict) -> None:
    # The split's arithmetic as the GPU runs it (fp16 parts, three products a step, one FMA
    # into the sum), here with the interpreter's exact fp16 products: its error against
    # float64 is that of fp32 rounding (benchmarks/dot_split_accuracy.py: 1.5e-7 - 4.2e-7 on
    # larger shapes), not of a 16-bit product (~1e-4 with hi parts alone).
    for name in set(CASES) - NARROW - set(RANGE):
        got = probe[name]["fp16x3"]
        assert "error" not in got, (name, got)
        assert got["rel_l2"] <= max(4 * probe[name]["torch"]["rel_l2"], 5e-7), (name, got)
        if name not in FP16X3_ONLY:
            assert got["bits"] != probe[name]["emitted"]["bits"], name  # not the ieee path


def test_the_fp16x3_split_keeps_float32_range(probe: dict) -> None:
    # Without the range guard both come out NaN where float32 has a finite value or an inf
    # (the hi parts overflow fp16); with it, the overflowing tiles are summed again in ieee:
    # NaN and inf where torch's float32 has them, and float32's accuracy elsewhere (judged
    # against float64: the elements near zero of a 1e9-scaled bmm over K = 40,000 differ from
    # torch's own float32 by more than 1e-4 with the CPU BLAS's summation order, which is the
    # machine's, not the kernel's).
    for name in RANGE:
        for label in ("emitted", "fp16x3"):
            got = probe[name][label]
            assert "error" not in got, (name, label, got)
            assert got["nonfinite_as_fp32"], (name, label, got)
            assert got["rel_l2"] <= max(4 * probe[name]["torch"]["rel_l2"], 5e-7), (name, got)


def test_interpreter_refuses_the_bf16_splits(probe: dict) -> None:
    for precision in ("bf16x6", "bf16x3"):
        error = probe["matmul"][precision].get("error", "")
        assert "input_precision must be one of" in error, (precision, error)


def test_interpreter_ignores_tf32x3(probe: dict) -> None:
    row = probe["matmul"]
    assert row["tf32x3"]["bits"] == row["emitted"]["bits"], row
    # The teacher's "tf32" branch rounds its operands to TF32 before the dot
    # (test_tf32_rounding.py), so it differs from the exact product by TF32's rounding.
    assert row["tf32"]["bits"] != row["emitted"]["bits"], row
    assert 1e-5 < row["tf32"]["rel_l2"] < 1e-3, row

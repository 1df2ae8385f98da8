"""benchmarks/occupancy_audit.py: programs per SM and the last round's fill by hand, and one
teacher kernel captured on meta tensors and compiled for sm_90 on this CPU machine."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def tool(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("occupancy_audit.py")


def test_programs_per_sm_by_hand(tool) -> None:
    # KernelBench L1 40's layer norm kernels (sm_90): 58 and 88 registers at 16 warps.
    assert tool.programs_per_sm(58, 16, 1024) == 2  # 16 warps x 1,856 -> 29,696 of 65,536
    assert tool.programs_per_sm(88, 16, 1024) == 1
    assert tool.programs_per_sm(32, 4, 0) == 16  # threads bound: 2,048 / 128
    assert tool.programs_per_sm(16, 1, 0) == 32  # the 32-program limit
    assert tool.programs_per_sm(32, 4, 100 * 1024) == 2  # shared memory bound


def test_rounds_and_the_last_rounds_fill_by_hand(tool) -> None:
    assert tool.rounds_and_fill(272, 2) == pytest.approx((272 / 264, 8 / 264))
    assert tool.rounds_and_fill(264, 2) == pytest.approx((1.0, 1.0))
    assert tool.rounds_and_fill(2048, 1) == pytest.approx((2048 / 132, 68 / 132))


def test_a_teacher_kernel_is_captured_and_compiled_for_sm90(tool) -> None:
    program = (
        "import torch\n\ndef fused_operator(x0):\n    t0 = torch.relu(x0)\n    return t0\n\n"
        "def get_inputs():\n    return [torch.randn(4096, 4096)]\n"
    )
    rows = tool.audit(program)
    assert len(rows) == 1
    row = rows[0]
    assert row["grid"] >= 1 and row["warps"] >= 1 and 0 < row["regs"] <= 255
    assert row["barriers"] == 0  # a pointwise kernel never waits for other warps
    assert row["per_sm"] == tool.programs_per_sm(row["regs"], row["warps"], row["shared"])
    assert row["rounds"] == pytest.approx(row["grid"] / (132 * row["per_sm"]))
    assert row["mb"] == pytest.approx(2 * 4096 * 4096 * 4 / 1e6)  # the input and the output


def test_a_split_rows_output_kernel_combines_without_barriers(tool) -> None:
    # KernelBench L1 40: 16 rows of 64 x 256 x 256 split across programs. The output kernel
    # combines its row's partials to scalars before it streams; as a [1, chunks] tile it took
    # 39 barriers per program in this sm_90 build and ran 5x slower than a 1-D combine.
    program = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "def fused_operator(x0, w, b):\n    t0 = F.layer_norm(x0, [64, 256, 256], w, b)\n"
        "    return t0\n\n"
        "def get_inputs():\n    return [torch.randn(16, 64, 256, 256), "
        "torch.randn(64, 256, 256), torch.randn(64, 256, 256)]\n"
    )
    rows = {row["kernel"]: row for row in tool.audit(program)}
    assert set(rows) == {"k0_layer_norm_stats_kernel", "k0_layer_norm_kernel"}
    assert rows["k0_layer_norm_kernel"]["barriers"] == 0
    assert rows["k0_layer_norm_stats_kernel"]["barriers"] > 0  # its chunk's sum across warps


def test_an_integer_one_compiles_as_the_constant_like_the_jit(tool) -> None:
    # Triton's JIT specializes an int argument equal to 1 (a unit stride) to the constant 1;
    # compiled without that, the audit's row kernels loaded 4 bytes at a time.
    from triton.backends.compiler import BaseBackend
    from triton.runtime.jit import native_specialize_impl

    class Param:
        do_not_specialize = False

    for value in (1, 2, 16, True):
        jit_constant = native_specialize_impl(BaseBackend, value, False, True, True)[0]
        assert tool._specialized_to_one(Param(), value) == (jit_constant == "constexpr"
                                                            and value is not True)  # fmt: skip
    Param.do_not_specialize = True
    assert not tool._specialized_to_one(Param(), 1)


# Paper-preset programs the H200 rejected as out of shared memory on 2026-12-03 (their prologues'
# loads are staged through shared memory beside the operands: 256 KB, 400 KB and 320 KB against
# the 227 KB a block may hold). Every tile a kernel runs with by default (an autotuned kernel's
# first, the others' only) must fit (core/codegen/heuristics.h, FitSharedMemory).
OUT_OF_SHARED_MEMORY = {
    "div_conv1d": (
        "def fused_operator(x0, x1, x2, x3):\n    t0 = torch.div(x0, x1)\n"
        "    t1 = F.conv1d(t0, x2, None, 1, 0, 2, 4)\n    t2 = torch.sub(t1, x3)\n    return t2\n",
        "torch.randn(292), torch.randn(24068, 1), torch.randn(5244, 6017, 1), torch.randn(1, 1)",
    ),
    "batch_norm_conv_transpose1d": (
        "def fused_operator(x0, x1, x2, x3, x4, x5):\n    t0 = F.batch_norm(x0, x1, x2, x3, x4)\n"
        "    t1 = F.hardsigmoid(t0)\n    t2 = F.conv_transpose1d(t1, x5, None, 1, 0, 0, 3)\n"
        "    return t2\n",
        "torch.randn(924, 22132), torch.randn(22132), torch.rand(22132), torch.randn(22132), "
        "torch.randn(22132), torch.randn(924, 42, 11)",
    ),
    "prologue_matmul": (
        "def fused_operator(x0, x1, x2, x3):\n    t0 = torch.relu(x0)\n    t1 = torch.sigmoid(t0)\n"
        "    t2 = torch.maximum(t1, x1)\n    t3 = torch.sub(t2, x2)\n    t4 = torch.matmul(t3, x3)\n"
        "    return t4\n",
        "torch.randn(115, 4063), torch.randn(4063), torch.randn(115, 4063), torch.randn(4063, 29481)",
    ),
}


@pytest.mark.parametrize("name", sorted(OUT_OF_SHARED_MEMORY))
def test_contraction_tiles_fit_hopper_shared_memory(tool, name: str) -> None:
    body, inputs = OUT_OF_SHARED_MEMORY[name]
    program = (
        f"import torch\nimport torch.nn.functional as F\n\n{body}\n"
        f"def get_inputs():\n    return [{inputs}]\n"
    )
    rows = tool.audit(program)
    defaults = [r for r in rows if not r["kernel"].endswith("]") or r["kernel"].endswith("[0]")]
    assert any("conv" in r["kernel"] or "matmul" in r["kernel"] for r in defaults), rows
    for row in defaults:
        assert row["shared"] <= 232448, row  # cudaDevAttrMaxSharedMemoryPerBlockOptin, H200


def test_the_bf16_tma_linear_fits_hopper_shared_memory(tool) -> None:
    # KernelBench L2 40's linear (16384 x 4096 x 4096, bias): in bf16 the TMA kernel, 128
    # persistent programs of 16 tiles.  Its loop flattened took 278,552 bytes in sm_90.
    program = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "def fused_operator(x0, x1, x2):\n    t0 = F.linear(x0, x1, x2)\n    return t0\n\n"
        "def get_inputs():\n"
        "    return [torch.randn(16384, 4096), torch.randn(4096, 4096), torch.randn(4096)]\n"
    )
    rows = tool.audit(program, precision="bf16")
    tma = [r for r in rows if r["kernel"].endswith("_tma_kernel")]
    assert len(tma) == 1 and tma[0]["grid"] == 128, rows
    assert 0 < tma[0]["shared"] <= 232448 and tma[0]["per_sm"] == 1, tma


SASS = """
        /*0100*/                   LDG.E R2, desc[UR4][R2.64] ;
        /*0110*/                   STL [R1+0x10], R2 ;
        /*0120*/                   HGMMA.64x64x16.F32 R24, gdesc[UR8], R24 ;
        /*0130*/                   LDL R3, [R1+0x10] ;
        /*0140*/              @P0  BRA 0x120 ;
        /*0150*/                   STL [R1+0x20], R4 ;
        /*0160*/              @P1  BRA 0x100 ;
        /*0170*/                   LDL R5, [R1+0x20] ;
"""


def test_spills_are_counted_in_the_kernel_and_in_the_matrix_loop_by_hand(tool) -> None:
    # The innermost loop around the HGMMA is 0x120-0x140 (one LDL); the outer one is longer.
    assert tool.spill_counts(SASS) == (4, 1)
    assert tool.spill_counts(SASS.replace("HGMMA", "FFMA")) == (4, None)  # no matrix loop


def test_the_matrix_loops_instructions_and_global_loads_are_profiled(tool) -> None:
    # The innermost loop around the HGMMA (0x120-0x140) has 3 instructions and no global load;
    # the kernel's LDG at 0x100 lies outside it.
    assert tool.loop_profile(SASS) == (3, {})
    loads = SASS.replace("LDL R3, [R1+0x10]", "LDGSTS.E.BYPASS.128 [R3], desc[UR4][R6.64]")
    loads = loads.replace(
        "@P0  BRA 0x120", "LDGDEPBAR ;\n        /*0138*/              @P0  BRA 0x120"
    )
    loads = loads.replace("HGMMA.64x64x16.F32 R24", "@!P3 LDG.E.U16 R9, desc[UR4][R4.64] ;\n"
                          "        /*0128*/                   HGMMA.64x64x16.F32 R24")  # fmt: skip
    # LDGDEPBAR (the cp.async group's barrier) is no load.
    assert tool.loop_profile(loads) == (5, {"LDG.E.U16": 1, "LDGSTS.E.BYPASS.128": 1})
    assert tool.loop_profile(SASS.replace("HGMMA", "FFMA")) is None


def test_spills_of_a_called_function_are_not_the_kernels(tool) -> None:
    # The range guard's noinline tile follows the kernel's code in the same SASS.
    called = (
        SASS.replace("/*0170*/                   LDL R5, [R1+0x20] ;",
                     "/*0170*/              @P2  CALL.REL.NOINC 0x190 ;\n"
                     "        /*0180*/                   EXIT ;\n"
                     "        /*0190*/                   STL [R1+0x30], R6 ;\n"
                     "        /*01a0*/                   LDL R6, [R1+0x30] ;")
    )  # fmt: skip
    assert "CALL.REL.NOINC 0x190" in called
    assert tool.spill_counts(called) == (3, 1)


def test_synthetic_programs_are_audited_by_index(tool, tmp_path, capsys) -> None:
    import json

    source = (
        "import torch\n\ndef fused_operator(x0):\n    t0 = torch.relu(x0)\n    return t0\n\n"
        "def get_inputs():\n    return [torch.randn(64, 64)]\n"
    )
    records = [{"id": "p-3", "index": 3, "source": source}, {"id": "p-4", "index": 4}]
    path = tmp_path / "programs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "rows.json"
    assert tool.main(["--programs", str(path), "--ids", "3", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [r["problem"] for r in rows] == ["p-3"]
    assert rows[0]["spills"] == 0 and rows[0]["loop_spills"] is None  # no matrix instructions
    assert tool.main(["--programs", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err

"""Generic-shape teacher candidates (`emit(..., generic_shapes=True)`): a candidate emitted for
a task at shape A must be accepted by the real verifier on the same operators at shape B, and
the candidate text must not depend on the sizes.  CPU interpreter, about 3-6 s per case.

DRTRITON_TEST_DEVICE=cuda runs the verifier cases compiled on a GPU."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
from teach_tasks import DEVICE, task

from drtriton.teach import emit, generic_unsupported_ops, variants
from drtriton.teach.pairs import pair_records
from drtriton.train.rewards import Reward
from drtriton.train.sft_data import SFTDataConfig, build
from shared_verifier import verify

# name -> (operator lines, parameters, inputs at shape A, inputs at shape B): same ranks and
# broadcast pattern, other sizes (B has rows longer than one block for the row kernels'
# loops, and sizes that are not multiples of A's).
CASES = {
    "pointwise_broadcast": (
        ["t0 = torch.mul(x0, x1)", "t1 = F.softplus(t0, 2.0, 20.0)", "t2 = torch.relu(t1)"],
        "x0, x1",
        "torch.randn(4, 1, 8), torch.randn(3, 1)",
        "torch.randn(6, 1, 37), torch.randn(5, 1)",
    ),
    "transpose_tanh": (
        ["t0 = torch.transpose(x0, 0, 2)", "t1 = torch.tanh(t0)"],
        "x0",
        "torch.randn(3, 4, 5)",
        "torch.randn(7, 2, 9)",
    ),
    "sum_inner_epilogue": (
        ["t0 = torch.sum(x0, -1)", "t1 = torch.sigmoid(t0)"],
        "x0",
        "torch.randn(4, 8)",
        "torch.randn(9, 5000)",
    ),
    "mean_outer_keepdim": (
        ["t0 = torch.mean(x0, 0, True)"],
        "x0",
        "torch.randn(6, 5)",
        "torch.randn(130, 3)",
    ),
    "argmax_middle": (
        ["t0 = torch.argmax(x0, 1, False)"],
        "x0",
        "torch.randn(4, 7, 3)",
        "torch.randn(2, 90, 5)",
    ),
    # An argmax of a stored one-element statistic: its read is a scalar (tiny-preset
    # acceptance: the interpreter refused the NaN test of the scalar against the block's mask).
    "argmax_of_one_element": (
        ["t0 = torch.amax(x0, -2, True)", "t1 = torch.argmax(t0, 1, True)"],
        "x0",
        "torch.randn(3, 1)",
        "torch.randn(40, 1)",
    ),
    "softmax_of_producer": (
        ["t0 = torch.exp(x0)", "t1 = torch.log_softmax(t0, -1)"],
        "x0",
        "torch.randn(4, 8)",
        "torch.randn(3, 4500)",
    ),
    "cumsum": (
        ["t0 = torch.cumsum(x0, 1)"],
        "x0",
        "torch.randn(3, 6)",
        "torch.randn(2, 70)",
    ),
    "layer_norm": (
        ["t0 = F.layer_norm(x0, [4, 6], x1, x2)"],
        "x0, x1, x2",
        "torch.randn(3, 4, 6), torch.randn(4, 6), torch.randn(4, 6)",
        "torch.randn(5, 4, 6), torch.randn(4, 6), torch.randn(4, 6)",
    ),
    "group_norm": (
        ["t0 = F.group_norm(x0, 2, x1, x2)"],
        "x0, x1, x2",
        "torch.randn(2, 4, 3, 3), torch.randn(4), torch.randn(4)",
        "torch.randn(3, 6, 5, 2), torch.randn(6), torch.randn(6)",
    ),
    "linear_relu": (
        ["t0 = F.linear(x0, x1, x2)", "t1 = torch.relu(t0)"],
        "x0, x1, x2",
        "torch.randn(4, 8), torch.randn(16, 8), torch.randn(16)",
        "torch.randn(33, 40), torch.randn(20, 40), torch.randn(20)",
    ),
    "max_pool_ceil_relu": (
        ["t0 = F.max_pool2d(x0, 3, 2, 1, 1, True)", "t1 = torch.relu(t0)"],
        "x0",
        "torch.randn(2, 3, 8, 7)",
        "torch.randn(3, 2, 11, 20)",
    ),
    "avg_pool_padded": (
        ["t0 = F.avg_pool1d(x0, 3, 2, 1, False, False)"],
        "x0",
        "torch.randn(2, 3, 9)",
        "torch.randn(3, 2, 16)",
    ),
    "avg_pool_ceil_include_pad": (
        ["t0 = F.avg_pool2d(x0, 2, None, 1, True, True)"],
        "x0",
        "torch.randn(2, 2, 5, 4)",
        "torch.randn(3, 3, 7, 10)",
    ),
    "conv_grouped_strided": (
        ["t0 = F.conv2d(x0, x1, x2, 2, 1, 1, 2)", "t1 = torch.tanh(t0)"],
        "x0, x1, x2",
        "torch.randn(2, 4, 7, 7), torch.randn(6, 2, 3, 3), torch.randn(6)",
        "torch.randn(3, 6, 9, 12), torch.randn(4, 3, 3, 2), torch.randn(4)",
    ),
    "conv_transpose_dilated": (
        ["t0 = F.conv_transpose1d(x0, x1, None, 2, 1, 1, 1, 2)"],
        "x0, x1",
        "torch.randn(2, 3, 6), torch.randn(3, 4, 3)",
        "torch.randn(3, 5, 9), torch.randn(5, 2, 2)",
    ),
    "conv_unit_length": (  # an output length of 1 at both shapes (asserted by the wrapper)
        ["t0 = F.conv2d(x0, x1)", "t1 = torch.sigmoid(t0)"],
        "x0, x1",
        "torch.randn(2, 3, 3, 5), torch.randn(4, 3, 3, 3)",
        "torch.randn(3, 2, 2, 9), torch.randn(5, 2, 2, 4)",
    ),
    "adaptive_pool_3d": (
        ["t0 = F.adaptive_avg_pool3d(x0, [2, 3, 1])", "t1 = torch.neg(t0)"],
        "x0",
        "torch.randn(2, 3, 4, 6, 5)",
        "torch.randn(3, 2, 9, 7, 11)",
    ),
    "bmm": (
        ["t0 = torch.bmm(x0, x1)"],
        "x0, x1",
        "torch.randn(2, 5, 7), torch.randn(2, 7, 3)",
        "torch.randn(3, 17, 9), torch.randn(3, 9, 20)",
    ),
}


def int_literals(code: str) -> set[int]:
    """The integer literals of `code` other than 0 and 1, dims of `.stride(d)` and warp
    counts (float constants do not count either)."""
    code = re.sub(r"\.stride\(\d+\)|num_warps=\d+|num_stages=\d+", "", code)
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    ints = {int(t.string) for t in tokens if t.type == tokenize.NUMBER and t.string.isdigit()}
    return ints - {0, 1}


def at(name: str, shape: int) -> str:
    lines, args, *inputs = CASES[name]
    return task(lines, args, inputs[shape])


@pytest.mark.parametrize("name", sorted(CASES))
def test_text_does_not_depend_on_the_shape(name: str) -> None:
    a, b = at(name, 0), at(name, 1)
    assert generic_unsupported_ops(a) == []
    generic = emit(a, generic_shapes=True)
    assert generic == emit(b, generic_shapes=True)
    assert emit(a) != emit(b)  # the specialized candidates do differ
    assert "= x0.shape" in generic


@pytest.mark.parametrize("name", sorted(CASES))
def test_candidate_for_shape_a_is_accepted_at_shape_b(name: str) -> None:
    candidate = emit(at(name, 0), generic_shapes=True)
    verdict = verify(at(name, 1), candidate, device=DEVICE)
    assert verdict.correct, f"{verdict.status}: {verdict.reason}"


def test_pointwise_kernel_reads_sizes_not_literals() -> None:
    text = emit(at("pointwise_broadcast", 0), generic_shapes=True)
    kernel, wrapper = text.split("def triton_fused_operator")
    assert "x0_s0, x1_s0, x0_s2, x0_ptr" in kernel  # sizes are runtime arguments
    assert "mask = offs < x0_s0 * x1_s0 * x0_s2" in kernel
    assert "c1 = (offs // x0_s2) % x1_s0" in kernel
    assert int_literals(kernel) == set()  # softplus's beta and threshold are floats
    # The wrapper's only integer literal is the block size.
    assert int_literals(wrapper) == {1024}
    assert "t2 = torch.empty((x0_s0, x1_s0, x0_s2)" in wrapper
    assert "[(triton.cdiv(x0_s0 * x1_s0 * x0_s2, 1024),)]" in wrapper


def test_reduction_kernel_reads_sizes_not_literals() -> None:
    text = emit(at("argmax_middle", 0), generic_shapes=True)
    kernel, wrapper = text.split("def triton_fused_operator")
    assert "row_mask = rows < x0_s0 * x0_s2" in kernel
    assert "while r0 < x0_s1:" in kernel and "r0 += BLOCK_R" in kernel
    assert int_literals(kernel) == set()
    assert int_literals(wrapper) == {64}  # the block caps of an outer-dim reduction


def test_broadcast_dims_are_asserted() -> None:
    text = emit(at("pointwise_broadcast", 0), generic_shapes=True)
    assert "(x1_s0, x1_s1) = x1.shape" in text
    assert "assert x1_s1 == 1" in text and "assert x0_s1 == 1" in text
    # A task whose broadcast dim is not 1 is refused by the candidate, not miscomputed.
    other = task(
        CASES["pointwise_broadcast"][0], "x0, x1", "torch.randn(4, 3, 8), torch.randn(3, 8)"
    )
    verdict = verify(other, text, device=DEVICE)
    assert not verdict.correct


def test_row_blocks_are_sized_in_the_wrapper() -> None:
    text = emit(at("layer_norm", 0), generic_shapes=True)
    assert "BLOCK_R = min(triton.next_power_of_2(x0_s1 * x0_s2), 8192)" in text
    assert "while r0 < x0_s1 * x0_s2:" in text
    assert "BLOCK_O=BLOCK_O, BLOCK_R=BLOCK_R" in text


def test_pool_lengths_follow_torch() -> None:
    # The wrapper's output lengths must match torch's at shapes where ceil mode trims the last
    # window, and the candidate's own output shape is then checked by the verifier.
    lines = ["t0 = F.max_pool1d(x0, 2, 2, 1, 1, True)"]
    candidate = emit(task(lines, "x0", "torch.randn(2, 3, 8)"), generic_shapes=True)
    assert (
        "t0_s2 = (x0_s2 + 2 * 1 - 1 * (2 - 1) - 1 + 2 - 1) // 2 + 1\n"
        "    if (t0_s2 - 1) * 2 >= x0_s2 + 1:\n"
        "        t0_s2 -= 1\n"
    ) in candidate
    verdict = verify(task(lines, "x0", "torch.randn(1, 2, 7)"), candidate, device=DEVICE)
    assert verdict.correct, f"{verdict.status}: {verdict.reason}"


def test_huge_program_falls_back_to_the_specialized_candidate() -> None:
    huge = task(["t0 = torch.sum(x0, 0)"], "x0", "torch.randn(65536, 32768)")
    assert generic_unsupported_ops(huge) == ["2^31 elements"]
    assert emit(huge, generic_shapes=True) == emit(huge)


def test_default_stays_specialized() -> None:
    source = at("sum_inner_epilogue", 0)
    text = emit(source)
    assert "assert tuple(x0.shape) == (4, 8)" in text
    assert "x0_s0" not in text


def test_variants_and_pairs_pass_the_option_on() -> None:
    source = at("group_norm", 0)
    generic = variants(source, 3, generic_shapes=True)
    assert generic and all("x0_s1 // 2" in text for text in generic)
    record = {"id": "p0", "source": source}
    (pair,) = pair_records(record, 1, generic_shapes=True)
    assert pair["generic_shapes"] is True and "= x0.shape" in pair["completion"]
    (plain,) = pair_records(record, 1)
    assert "generic_shapes" not in plain and "= x0.shape" not in plain["completion"]


def test_teach_cli_generic_shapes(tmp_path: Path) -> None:
    programs, pairs = tmp_path / "programs.jsonl", tmp_path / "pairs.jsonl"
    huge = task(["t0 = torch.sum(x0, 0)"], "x0", "torch.randn(65536, 32768)")
    records = [{"id": "norm", "source": at("layer_norm", 0)}, {"id": "huge", "source": huge}]
    programs.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = subprocess.run(
        [sys.executable, "-m", "drtriton", "teach", str(programs), "--out", str(pairs),
         "--generic-shapes", "--no-progress"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = {p["id"]: p for p in map(json.loads, pairs.read_text().splitlines())}
    assert out["norm"]["generic_shapes"] is True
    assert out["norm"]["completion"] == emit(at("layer_norm", 1), generic_shapes=True)
    assert out["huge"]["generic_shapes"] is False
    assert out["huge"]["generic_unsupported"] == ["2^31 elements"]


class AcceptAll:
    def judge(self, tasks: list[str], codes: list[str]) -> list[Reward]:
        return [Reward(bool(c.strip()), None, "fake") for c in codes]


def test_sft_data_generic_shapes(tmp_path: Path) -> None:
    out = tmp_path / "pairs.jsonl"
    cfg = SFTDataConfig(out=str(out), per_op=2, ops="relu", preset="tiny", generic_shapes=True)
    try:
        build(cfg, AcceptAll())
    except Exception as exc:  # an extension built without the synthesizer
        pytest.skip(str(exc))
    pairs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(pairs) == 2
    assert all(p["completion"] == emit(p["source"], generic_shapes=True) for p in pairs)
    assert all("= x0.shape" in p["completion"] for p in pairs)

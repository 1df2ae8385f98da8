"""The contiguous fast path of teacher pointwise kernels (`if CONTIG:`, full-shape tensors read
at `ptr + offs`), judged by the real verifier on the CPU interpreter in both codegen modes.

The candidate is emitted from a task with plain `torch.randn` inputs (the task parser reads
shapes only) and verified against the same operators whose `get_inputs()` hands it transposed
or sliced tensors of those shapes: the wrapper must then take the strided branch, or the
flat reads would fetch the wrong elements and the verifier would reject the candidate.

DRTRITON_TEST_DEVICE=cuda runs the verifier cases compiled on a GPU."""

from __future__ import annotations

import pytest
from teach_tasks import DEVICE, task

from drtriton.teach import emit
from shared_verifier import verify

MODES = {"specialized": False, "generic": True}


BIAS_MISH = ["t0 = torch.add(x0, x1)", "t1 = F.mish(t0)"]
MUL_TANH = ["t0 = torch.mul(x0, x1)", "t1 = torch.tanh(t0)"]

# name -> (operators, parameters, the inputs the candidate is emitted for, the inputs it is
# verified on: same shapes, possibly other strides).
CASES = {
    # A 4-D activation and a per-channel bias, all contiguous: the fast path runs.
    "contiguous_bias_mish": (
        BIAS_MISH,
        "x0, x1",
        "torch.randn(2, 4, 3, 5), torch.randn(4, 1, 1)",
        "torch.randn(2, 4, 3, 5), torch.randn(4, 1, 1)",
    ),
    # The activation is a permuted view: the flag is False and the strided branch runs.
    "permuted_activation_bias_mish": (
        BIAS_MISH,
        "x0, x1",
        "torch.randn(2, 4, 3, 5), torch.randn(4, 1, 1)",
        "torch.randn(2, 3, 5, 4).permute(0, 3, 1, 2), torch.randn(4, 1, 1)",
    ),
    # A strided bias only: it is read through its coordinates on both paths.
    "strided_bias_mish": (
        BIAS_MISH,
        "x0, x1",
        "torch.randn(2, 4, 3, 5), torch.randn(4, 1, 1)",
        "torch.randn(2, 4, 3, 5), torch.randn(8, 1, 1)[::2]",
    ),
    # One contiguous and one transposed operand of the output's shape.
    "transposed_second_operand": (
        MUL_TANH,
        "x0, x1",
        "torch.randn(6, 5), torch.randn(6, 5)",
        "torch.randn(6, 5), torch.randn(5, 6).t()",
    ),
    # A sliced (every other column) first operand.
    "sliced_first_operand": (
        MUL_TANH,
        "x0, x1",
        "torch.randn(6, 5), torch.randn(6, 5)",
        "torch.randn(6, 10)[:, ::2], torch.randn(6, 5)",
    ),
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", sorted(CASES))
def test_candidate_is_accepted_for_contiguous_and_strided_inputs(name: str, mode: str) -> None:
    lines, args, emitted_for, verified_on = CASES[name]
    candidate = emit(task(lines, args, emitted_for), generic_shapes=MODES[mode])
    # Every case has an input of the output's shape, so the fast path must be there.
    assert "    if CONTIG:\n" in candidate
    assert "CONTIG=contig" in candidate
    verdict = verify(task(lines, args, verified_on), candidate, device=DEVICE)
    assert verdict.correct, f"{verdict.status}: {verdict.reason}"


def fast_branch(candidate: str) -> str:
    start = candidate.index("    if CONTIG:\n")
    return candidate[start : candidate.index("    else:\n", start)]


@pytest.mark.parametrize("mode", sorted(MODES))
def test_fast_branch_reads_full_shape_tensors_flat(mode: str) -> None:
    lines, args, inputs, _ = CASES["contiguous_bias_mish"]
    candidate = emit(task(lines, args, inputs), generic_shapes=MODES[mode])
    fast = fast_branch(candidate)
    assert "tl.load(x0_ptr + offs," in fast
    assert "tl.store(t1_ptr + offs," in fast
    assert "tl.load(x1_ptr + c1 * stride_x1_0," in fast  # the bias keeps its channel index
    # Only the channel coordinate is computed on the fast path; the strided one needs all.
    assert [c for c in ("c0 =", "c1 =", "c2 =", "c3 =") if c in fast] == ["c1 ="]
    wrapper = candidate[candidate.index("def triton_fused_operator") :]
    assert "contig = x0.is_contiguous()\n" in wrapper  # the bias does not decide the path


@pytest.mark.parametrize("mode", sorted(MODES))
def test_only_broadcast_inputs_need_no_flag(mode: str) -> None:
    source = task(MUL_TANH, "x0, x1", "torch.randn(4, 1, 8), torch.randn(3, 1)")
    candidate = emit(source, generic_shapes=MODES[mode])
    assert "CONTIG" not in candidate
    assert "tl.store(t1_ptr + offs," in candidate
    verdict = verify(source, candidate, device=DEVICE)
    assert verdict.correct, f"{verdict.status}: {verdict.reason}"

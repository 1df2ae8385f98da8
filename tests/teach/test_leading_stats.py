"""Statistics of deviations from statistics, written out (core/codegen/fusion.h
Group::leading_stats): the reduction's kernel computes the statistics it alone reads first, in a
pass of its own over each row, and never stores them. Each case is one kernel, judged by the
real verifier on the CPU interpreter against torch, in both codegen modes; NaN and infinities
through a max."""

from __future__ import annotations

import pytest
from teach_tasks import task
from test_reduce_broadcast import judge

from drtriton.teach import emit

# name -> (operator lines, parameters, inputs)
CASES = {
    # (x - mean) / sqrt(var), the variance written out: rows of one block.
    "normalized_rows": (
        [
            "t0 = torch.mean(x0, 1, True)",
            "t1 = torch.sub(x0, t0)",
            "t2 = torch.mul(t1, t1)",
            "t3 = torch.mean(t2, 1, True)",
            "t4 = torch.rsqrt(t3)",
            "t5 = torch.mul(t1, t4)",
        ],
        "x0",
        "torch.randn(300, 1000)",
    ),
    # Rows of two blocks (9000 > 8192): the mean's loop, the squares' loop, then the rows.
    "variance_long_rows": (
        [
            "t0 = torch.mean(x0, 1, True)",
            "t1 = torch.sub(x0, t0)",
            "t2 = torch.mul(t1, t1)",
            "t3 = torch.sum(t2, 1)",
        ],
        "x0",
        "torch.randn(300, 9000)",
    ),
    # cosine_similarity's decomposition: two norms, then the normalized rows' dot product.
    "cosine_similarity": (
        [
            "t0 = torch.mul(x0, x0)",
            "t1 = torch.sum(t0, 1, True)",
            "t2 = torch.sqrt(t1)",
            "t3 = torch.mul(x1, x1)",
            "t4 = torch.sum(t3, 1, True)",
            "t5 = torch.sqrt(t4)",
            "t6 = torch.div(x0, t2)",
            "t7 = torch.div(x1, t5)",
            "t8 = torch.mul(t6, t7)",
            "t9 = torch.sum(t8, 1)",
        ],
        "x0, x1",
        "torch.randn(300, 1000), torch.randn(300, 1000)",
    ),
    # A triplet loss's two distances: one read by the other's epilogue, without the reduced dim.
    "two_distances": (
        [
            "t0 = torch.sub(x0, x1)",
            "t1 = torch.mul(t0, t0)",
            "t2 = torch.sum(t1, 1)",
            "t3 = torch.sub(x0, x2)",
            "t4 = torch.mul(t3, t3)",
            "t5 = torch.sum(t4, 1)",
            "t6 = torch.sub(t2, t5)",
            "t7 = torch.relu(t6)",
        ],
        "x0, x1, x2",
        "torch.randn(300, 1000), torch.randn(300, 1000), torch.randn(300, 1000)",
    ),
    # A z-score's sum: the mean, then the squares' sum that reads it, then the anchor (three
    # passes; rows of two blocks).
    "zscore_sum": (
        [
            "t0 = torch.mean(x0, 1, True)",
            "t1 = torch.sub(x0, t0)",
            "t2 = torch.mul(t1, t1)",
            "t3 = torch.mean(t2, 1, True)",
            "t4 = torch.sqrt(t3)",
            "t5 = torch.div(t1, t4)",
            "t6 = torch.mul(t5, t5)",
            "t7 = torch.sum(t6, 1)",
        ],
        "x0",
        "torch.randn(300, 9000)",
    ),
    # logsumexp by hand: the max read by the exponent and by the epilogue.
    "logsumexp_by_hand": (
        [
            "t0 = torch.amax(x0, 1, True)",
            "t1 = torch.sub(x0, t0)",
            "t2 = torch.exp(t1)",
            "t3 = torch.sum(t2, 1, True)",
            "t4 = torch.log(t3)",
            "t5 = torch.add(t4, t0)",
        ],
        "x0",
        "torch.randn(300, 700)",
    ),
}
# Inputs to judge on (not to emit from): NaN and +-inf in some rows of the max.
SPECIAL = {
    "logsumexp_by_hand": "torch.log(torch.randn(300, 700) + 3.0) / torch.randint(0, 300, (300, 700))",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_statistics_are_computed_first_in_one_kernel(name: str) -> None:
    src = task(*CASES[name])
    candidate = emit(src)
    assert candidate.count("@triton.jit") == 1, candidate
    assert "lead0 = " in candidate, candidate
    judge(src, candidate)


def test_special_values_through_a_leading_max() -> None:
    lines, args, inputs = CASES["logsumexp_by_hand"]
    candidate = emit(task(lines, args, inputs))
    judge(task(lines, args, SPECIAL["logsumexp_by_hand"]), candidate)


@pytest.mark.parametrize("name", ["normalized_rows", "two_distances", "zscore_sum"])
def test_generic_kernel_matches_torch(name: str) -> None:
    lines, args, inputs = CASES[name]
    candidate = emit(task(lines, args, inputs), generic_shapes=True)
    assert candidate.count("@triton.jit") == 1 and "lead0 = " in candidate, candidate
    judge(task(lines, args, inputs), candidate)
    judge(task(lines, args, inputs.replace("(300, 1000)", "(260, 1700)")), candidate)
    judge(task(lines, args, inputs.replace("(300, 9000)", "(270, 5000)")), candidate)

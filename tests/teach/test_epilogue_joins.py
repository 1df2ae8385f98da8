"""Epilogues through readers that join again (core/codegen/fusion.cc JoinOfReaders): a value
read by several elementwise nodes whose paths meet within a few nodes (x * sigmoid(x)) is
computed in the anchor's kernel, not stored and read back, whatever the anchor's kind."""

from __future__ import annotations

import pytest
from teach_tasks import DEVICE, task

from drtriton.teach import emit
from drtriton.verify import Options
from shared_verifier import verify

# name -> (task, stored tensors: the output, and any a later anchor reads)
JOINS = {
    "max_pool_swish": (
        task(
            ["t0 = F.max_pool2d(x0, 2)", "t1 = torch.sigmoid(t0)", "t2 = torch.mul(t0, t1)"],
            "x0",
            "torch.randn(2, 8, 16, 16)",
        ),
        1,
    ),
    "softmax_swish": (
        task(
            ["t0 = torch.softmax(x0, 1)", "t1 = torch.sigmoid(t0)", "t2 = torch.mul(t0, t1)"],
            "x0",
            "torch.randn(16, 300)",
        ),
        1,
    ),
    # The pool reads the convolution's swish: stored once, by the convolution's kernel.
    "conv_swish_pool": (
        task(
            [
                "t0 = F.conv2d(x0, x1)",
                "t1 = torch.sigmoid(t0)",
                "t2 = torch.mul(t0, t1)",
                "t3 = F.max_pool2d(t2, 2)",
            ],
            "x0, x1",
            "torch.randn(2, 8, 18, 18), torch.randn(16, 8, 3, 3)",
        ),
        2,
    ),
    # Three readers of the sum's result meet over two joins.
    "sum_tanh_mul_add": (
        task(
            [
                "t0 = torch.sum(x0, 2)",
                "t1 = torch.tanh(t0)",
                "t2 = torch.mul(t0, t1)",
                "t3 = torch.add(t2, t0)",
            ],
            "x0",
            "torch.randn(4, 8, 50)",
        ),
        1,
    ),
    "cumsum_swish": (
        task(
            ["t0 = torch.cumsum(x0, 1)", "t1 = torch.sigmoid(t0)", "t2 = torch.mul(t0, t1)"],
            "x0",
            "torch.randn(8, 100)",
        ),
        1,
    ),
    # A diamond and a third path back to the product.
    "bmm_diamond": (
        task(
            [
                "t0 = torch.bmm(x0, x1)",
                "t1 = torch.relu(t0)",
                "t2 = torch.tanh(t0)",
                "t3 = torch.mul(t1, t2)",
                "t4 = torch.sub(t3, t0)",
            ],
            "x0, x1",
            "torch.randn(3, 20, 16), torch.randn(3, 16, 24)",
        ),
        1,
    ),
}


@pytest.mark.parametrize("name", sorted(JOINS))
def test_joined_paths_stay_in_the_anchors_kernel(name: str) -> None:
    source, stored = JOINS[name]
    candidate = emit(source)
    assert candidate.count("torch.empty(") == stored, candidate
    opts = Options(device=DEVICE, precision="fp32", input_seed=0, trials=2)
    verdict = verify(source, candidate, options=opts)
    assert verdict.correct, f"{verdict.status}: {verdict.reason}"

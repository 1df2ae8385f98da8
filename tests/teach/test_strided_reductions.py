"""Reductions over an outer dim of few rows (codegen heuristics.cc, SplitFewStridedRows):
the tile keeps 64 adjacent rows and the reduced extent is cut into chunks whose partial
statistics a second kernel combines, instead of a tile narrowed to 16 rows walking all of it.
Batch norm with batch statistics over (N, C) reads its channels the same way (emit_rows.cc).
Judged by the verifier against PyTorch in the interpreter.
"""

from __future__ import annotations

import pytest
from teach_tasks import DEVICE, task

from drtriton.teach import emit
from drtriton.verify import Options
from shared_verifier import verify

# (operator line, inputs): 1024 columns of 2048 rows each, reduced over dim 0 (strided).
CASES = {
    "sum": "t1 = torch.sum(t0, 0)",
    "mean_keepdim": "t1 = torch.mean(t0, 0, True)",
    "amax": "t1 = torch.amax(t0, 0)",
    "logsumexp": "t1 = torch.logsumexp(t0, 0)",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_strided_reduction_of_few_rows_is_split_into_chunks(name: str) -> None:
    source = task(["t0 = torch.relu(x0)", CASES[name]], "x0", "torch.randn(2048, 1024)")
    candidate = emit(source)
    assert "_stats_kernel[(" in candidate, candidate
    assert candidate.count("BLOCK_O=64,") == 2, candidate
    opts = Options(device=DEVICE, precision="fp32", input_seed=0, trials=2)
    assert verify(source, candidate, options=opts).correct


def test_batch_norm_over_samples_reads_channels_as_adjacent_columns() -> None:
    # L2 41's form (a linear's output, then batch norm in training mode, then gelu), smaller:
    # 64 adjacent channels a tile over chunks of the samples, Welford partials combined.
    source = task(
        [
            "t0 = torch.batch_norm(x0, x1, x2, None, None, True, 0.1, 1e-05, True)",
            "t1 = F.gelu(t0)",
        ],
        "x0, x1, x2",
        "torch.randn(2048, 512), torch.randn(512), torch.randn(512)",
    )
    candidate = emit(source)
    assert "batch_norm_train_stats_kernel[(" in candidate, candidate
    assert candidate.count("BLOCK_O=64,") == 2, candidate
    opts = Options(device=DEVICE, precision="fp32", input_seed=0, trials=2)
    assert verify(source, candidate, options=opts).correct

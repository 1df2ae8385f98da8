"""allowed_ops: what a hybrid may run in PyTorch, read off the dispatch of the kept lines."""

from __future__ import annotations

from drtriton.frontend import FrontendResult, from_module_source
from drtriton.optimize.allowed import allowed_ops
from drtriton.verify.poison import PRODUCT_FAMILY

SOURCE = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8)

    def forward(self, x):
        return torch.relu(self.fc(x))

def get_inputs():
    return [torch.randn(2, 5, 16)]

def get_init_inputs():
    return []
"""


def _kept(op: str) -> tuple[FrontendResult, set[str]]:
    frontend = from_module_source(SOURCE)
    return frontend, {line.result for line in frontend.lines if line.op == op}


def test_a_kept_linear_allows_every_matrix_product_entry_point() -> None:
    # Which of addmm, mm, bmm or matmul a linear reaches depends on strides the probe's zeros
    # need not share with a Triton kernel's output: the whole family is allowed.
    frontend, kept = _kept("linear")
    allowed = set(allowed_ops(frontend, kept, "cpu"))
    assert PRODUCT_FAMILY <= allowed
    assert "relu" not in allowed


def test_a_kept_relu_allows_no_product() -> None:
    frontend, kept = _kept("relu")
    allowed = set(allowed_ops(frontend, kept, "cpu"))
    assert "relu" in allowed
    assert not allowed & PRODUCT_FAMILY

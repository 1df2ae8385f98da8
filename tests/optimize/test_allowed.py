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


def test_the_probe_runs_in_the_precision_modes_dtype(monkeypatch) -> None:
    # What a kept line dispatches can depend on the dtype (a bf16 F.batch_norm reaches
    # native_batch_norm on the H200, a float32 one cudnn_batch_norm): the probe's floating
    # inputs are the mode's.
    import torch

    from drtriton.optimize import allowed as module
    from drtriton.verify.poison import DispatchRecord

    dtypes: set[torch.dtype] = set()

    class Spy(DispatchRecord):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            dtypes.update(a.dtype for a in args if isinstance(a, torch.Tensor))
            return super().__torch_dispatch__(func, types, args, kwargs)

    monkeypatch.setattr(module, "DispatchRecord", Spy)
    frontend, kept = _kept("relu")
    assert "relu" in allowed_ops(frontend, kept, "cpu", "bf16")
    assert dtypes == {torch.bfloat16}
    dtypes.clear()
    allowed_ops(frontend, kept, "cpu")
    assert dtypes == {torch.float32}

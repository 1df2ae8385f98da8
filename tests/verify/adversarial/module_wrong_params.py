# trick: ModelNew declares different parameters (the seeded initialisation would not match)
# task: scale_module
# expect: wrong_answer
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl

import torch.nn as nn


@triton.jit
def noop_kernel(x_ptr):
    pass


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features * 2))

    def forward(self, x):
        out = torch.empty_like(x)
        noop_kernel[(1,)](x)
        return out

# trick: ModelNew keeps Model's torch forward and launches a decoy kernel
# task: scale_module
# expect: not_genuine
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
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        noop_kernel[(1,)](x)
        return torch.relu(x * self.scale + self.bias)

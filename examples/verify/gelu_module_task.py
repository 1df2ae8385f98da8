"""A KernelBench-format task (Model / get_inputs / get_init_inputs), small enough for the CPU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer followed by a tanh-approximated GELU."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.nn.functional.gelu(self.linear(x), approximate="tanh")


batch_size = 8
in_features = 32
out_features = 48


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]

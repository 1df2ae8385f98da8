import torch
import torch.nn as nn


class Model(nn.Module):
    """y = relu(x * scale + bias) with per-feature parameters."""

    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return torch.relu(x * self.scale + self.bias)


def get_inputs():
    return [torch.randn(6, 50)]


def get_init_inputs():
    return [50]

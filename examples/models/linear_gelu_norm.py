"""A small MLP block in KernelBench format: linear → GELU → shift → LayerNorm.

    drtriton optimize examples/models/linear_gelu_norm.py --out /tmp/linear_gelu_norm_new.py

Shapes are small so that the CPU run (Triton's interpreter) finishes in well under a minute.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.shift = nn.Parameter(torch.zeros(d_out))
        self.norm = nn.LayerNorm(d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.gelu(self.fc(x))
        y = y + self.shift
        return self.norm(y)


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return [32, 64]

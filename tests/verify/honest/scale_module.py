# Honest module task: same constructor and parameters as Model (same order, so the seeded
# initialisation matches), forward in one kernel.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_bias_relu_kernel(x_ptr, s_ptr, b_ptr, out_ptr, n_elements, F, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    f = offs % F
    x = tl.load(x_ptr + offs, mask=mask)
    s = tl.load(s_ptr + f, mask=mask)
    b = tl.load(b_ptr + f, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x * s + b, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        scale_bias_relu_kernel[(triton.cdiv(n, 128),)](
            x, self.scale, self.bias, out, n, x.shape[-1], BLOCK=128
        )
        return out

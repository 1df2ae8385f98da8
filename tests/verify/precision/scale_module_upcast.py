# Honest module kernel in half precision: the verifier casts ModelNew's parameters to the mode's
# dtype (as Model's), the kernel computes in float32 and stores in the output's dtype.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_bias_relu_kernel(x_ptr, s_ptr, b_ptr, out_ptr, n_elements, F, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    f = offs % F
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    s = tl.load(s_ptr + f, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + f, mask=mask).to(tl.float32)
    out = tl.maximum(x * s + b, 0.0)
    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


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

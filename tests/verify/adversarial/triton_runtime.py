# trick: patches Triton's launcher (the launch counter lives there)
# task: add_relu
# expect: forbidden
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl

from triton.runtime.jit import JITFunction

@triton.jit
def add_relu_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0), mask=mask)


def triton_fused_operator(x0, x1):
    out = torch.empty_like(x0)
    add_relu_kernel[(1,)](x0, x1, out, 1, BLOCK=16)
    return out

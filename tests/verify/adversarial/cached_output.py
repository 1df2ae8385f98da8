# trick: computes once and returns the cached output for every later call with the same shape (the later calls launch nothing)
# task: add_relu
# expect: not_genuine
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl

@triton.jit
def add_relu_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0), mask=mask)

_CACHE = {}


def triton_fused_operator(x0, x1):
    key = tuple(x0.shape)
    if key not in _CACHE:
        out = torch.empty_like(x0)
        n = out.numel()
        add_relu_kernel[(triton.cdiv(n, 256),)](x0, x1, out, n, BLOCK=256)
        _CACHE[key] = out
    return _CACHE[key]

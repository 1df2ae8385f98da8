# trick: caches on the input's data pointer (the allocator hands the same address back); still launches a kernel each call
# task: add_relu
# expect: wrong_answer
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
    out = torch.empty_like(x0)
    n = out.numel()
    add_relu_kernel[(triton.cdiv(n, 256),)](x0, x1, out, n, BLOCK=256)
    key = (x0.data_ptr(), x1.data_ptr())
    if key in _CACHE:
        return _CACHE[key]
    _CACHE[key] = out
    return out

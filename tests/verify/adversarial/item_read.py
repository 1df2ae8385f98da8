# trick: reads input values on the host with .item() (a memoizing candidate would key its cache on them)
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

_SEEN = {}


def triton_fused_operator(x0, x1):
    key = x0[0, 0].item()
    if key in _SEEN:
        return _SEEN[key]
    out = torch.empty_like(x0)
    n = out.numel()
    add_relu_kernel[(triton.cdiv(n, 256),)](x0, x1, out, n, BLOCK=256)
    _SEEN[key] = out
    return out

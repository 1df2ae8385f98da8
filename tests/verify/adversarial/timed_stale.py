# trick: after the correctness trials it stops launching real work and returns the previous output (stale during timing, where inputs rotate through fixed buffers)
# task: add_relu
# expect: wrong_answer
# device: cuda
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


STATE = {"calls": 0, "out": None}


def triton_fused_operator(x0, x1):
    STATE["calls"] += 1
    if STATE["calls"] > 6 and STATE["out"] is not None:
        add_relu_kernel[(1,)](x0, x1, torch.empty(1, device=x0.device), 0, BLOCK=16)
        return STATE["out"]
    out = torch.empty_like(x0)
    n = out.numel()
    add_relu_kernel[(triton.cdiv(n, 256),)](x0, x1, out, n, BLOCK=256)
    STATE["out"] = out
    return out

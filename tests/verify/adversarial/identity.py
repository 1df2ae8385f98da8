# trick: skips the operator: returns relu of the first input only (redundant-operator elimination gone wrong)
# task: add_relu
# expect: wrong_answer
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl

@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


def triton_fused_operator(x0, x1):
    out = torch.empty_like(x0)
    n = out.numel()
    relu_kernel[(triton.cdiv(n, 256),)](x0, out, n, BLOCK=256)
    return out

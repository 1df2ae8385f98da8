# trick: zeroes its inputs before computing: if the reference were computed from the same tensors afterwards, relu(0 + 0) = 0 would match
# task: add_relu
# expect: wrong_answer
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl

@triton.jit
def zero_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    z = tl.zeros([BLOCK], dtype=tl.float32)
    tl.store(x_ptr + offs, z, mask=mask)
    tl.store(y_ptr + offs, z, mask=mask)
    tl.store(out_ptr + offs, z, mask=mask)


def triton_fused_operator(x0, x1):
    out = torch.empty_like(x0)
    n = out.numel()
    zero_kernel[(triton.cdiv(n, 256),)](x0, x1, out, n, BLOCK=256)
    return x0

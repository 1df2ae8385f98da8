# trick: NaN where the reference is finite (NaN compares false, a sloppy check may skip it)
# task: add_relu
# expect: wrong_answer
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl

@triton.jit
def nan_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32) + float("nan"), mask=offs < n)


def triton_fused_operator(x0, x1):
    out = torch.empty_like(x0)
    n = out.numel()
    nan_kernel[(triton.cdiv(n, 256),)](out, n, BLOCK=256)
    return out

# trick: returns 1/N everywhere: every entry is within atol of the true softmax of small inputs
# task: softmax16k
# expect: wrong_answer
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl

@triton.jit
def fill_kernel(out_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32) + value, mask=offs < n)


def triton_fused_operator(x0):
    out = torch.empty_like(x0)
    n = out.numel()
    fill_kernel[(triton.cdiv(n, 4096),)](out, n, 1.0 / x0.shape[-1], BLOCK=4096)
    return out

# trick: KernelBench issue 165: softmax over 16,384 values has entries below atol, so all zeros pass a plain allclose
# task: softmax16k
# expect: wrong_answer
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl

@triton.jit
def zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n)


def triton_fused_operator(x0):
    out = torch.empty_like(x0)
    n = out.numel()
    zero_kernel[(triton.cdiv(n, 4096),)](out, n, BLOCK=4096)
    return out

# trick: KernelBench PR 82: returns torch.empty without writing it, hoping the allocator hands back the freed reference output (the reference never exists in the candidate's process)
# task: add_relu
# expect: wrong_answer
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl


@triton.jit
def noop_kernel(x_ptr):
    pass


def triton_fused_operator(x0, x1):
    noop_kernel[(1,)](x0)
    return torch.empty_like(x0)

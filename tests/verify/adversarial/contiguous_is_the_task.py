# trick: the task is a transpose copy; the candidate answers with .contiguous() (a copy op the task itself uses, so it is poisoned)
# task: transpose_copy
# expect: not_genuine
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl

@triton.jit
def noop_kernel(x_ptr):
    pass


def triton_fused_operator(x0):
    noop_kernel[(1,)](x0)
    return x0.t().contiguous()

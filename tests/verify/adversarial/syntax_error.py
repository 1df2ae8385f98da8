# trick: does not parse
# task: add_relu
# expect: compile_error
import torch
import triton
import triton.language as tl

def triton_fused_operator(x0, x1)
    return x0

# trick: the kernel uses an undefined name; Triton (the interpreter on CPU) fails at the launch
# task: add_relu
# expect: runtime_error compile_error
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl

@triton.jit
def bad_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + undefined_name, mask=offs < n)


def triton_fused_operator(x0, x1):
    out = torch.empty_like(x0)
    n = out.numel()
    bad_kernel[(triton.cdiv(n, 256),)](x0, out, n, BLOCK=256)
    return out

# trick: reads far out of bounds; on a GPU this is an illegal memory access that poisons the CUDA context (the worker is discarded; the harness carries on)
# task: add_relu
# expect: runtime_error crashed
# device: cuda
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl


@triton.jit
def oob_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs + (1 << 40))
    tl.store(out_ptr + offs, x, mask=offs < n)


def triton_fused_operator(x0, x1):
    out = torch.empty_like(x0)
    n = out.numel()
    oob_kernel[(triton.cdiv(n, 256),)](x0, out, n, BLOCK=256)
    return out

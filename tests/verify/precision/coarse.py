# Dishonest: rounds its result to multiples of 1/16 (about fp8 precision near 1), coarser than
# the mode it is judged in; no mode's tolerance, and no strict-float32 alternative, lets it pass.
import torch
import triton
import triton.language as tl


@triton.jit
def add_relu_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    out = tl.floor(tl.maximum(x + y, 0.0) * 16.0 + 0.5) / 16.0
    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


def triton_fused_operator(x0, x1):
    out = torch.empty_like(x0)
    n = out.numel()
    add_relu_kernel[(triton.cdiv(n, 256),)](x0.contiguous(), x1.contiguous(), out, n, BLOCK=256)
    return out

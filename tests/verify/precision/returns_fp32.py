# Dishonest in a half mode: computes in float32 and returns the float32 result, never rounding
# to the dtype asked for (a float32 output carries more precision than the baseline's).
import torch
import triton
import triton.language as tl


@triton.jit
def add_relu_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0), mask=mask)


def triton_fused_operator(x0, x1):
    out = torch.empty(x0.shape, device=x0.device, dtype=torch.float32)
    n = out.numel()
    add_relu_kernel[(triton.cdiv(n, 256),)](x0.contiguous(), x1.contiguous(), out, n, BLOCK=256)
    return out

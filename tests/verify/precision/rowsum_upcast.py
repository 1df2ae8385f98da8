# Honest half-precision reduction: float32 accumulation, the row's sum stored in the input's dtype.
import torch
import triton
import triton.language as tl


@triton.jit
def rowsum_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr, N_BLOCKS: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for b in tl.static_range(N_BLOCKS):
        offs = b * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n_cols
        acc += tl.load(x_ptr + row * stride_row + offs, mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, total.to(out_ptr.dtype.element_ty))


def triton_fused_operator(x0):
    x0 = x0.contiguous()
    rows, cols = x0.shape
    out = torch.empty(rows, device=x0.device, dtype=x0.dtype)
    block = 64
    rowsum_kernel[(rows,)](
        x0, out, cols, x0.stride(0), BLOCK=block, N_BLOCKS=triton.cdiv(cols, block)
    )
    return out

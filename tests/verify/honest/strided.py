# Honest strided elementwise kernel: reads x0 through its (transposed) strides, no copy.
import torch
import triton
import triton.language as tl


@triton.jit
def mul_kernel(
    x_ptr, y_ptr, out_ptr, M, N, sxm, sxn, sym, syn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs_m[:, None] * sxm + offs_n[None, :] * sxn, mask=mask)
    y = tl.load(y_ptr + offs_m[:, None] * sym + offs_n[None, :] * syn, mask=mask)
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], x * y, mask=mask)


def triton_fused_operator(x0, x1):
    M, N = x0.shape
    out = torch.empty((M, N), device=x0.device, dtype=x0.dtype)
    mul_kernel[(triton.cdiv(M, 8),)](
        x0,
        x1,
        out,
        M,
        N,
        x0.stride(0),
        x0.stride(1),
        x1.stride(0),
        x1.stride(1),
        BLOCK_M=8,
        BLOCK_N=triton.next_power_of_2(N),
    )
    return out

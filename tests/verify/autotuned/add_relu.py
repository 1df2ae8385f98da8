# Honest elementwise kernel under @triton.autotune: add then relu. Its first call times the
# configs (one on the CPU interpreter), so the harness runs that call alone on the GPU.
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 512})][
        : None if torch.cuda.is_available() else 1
    ],
    key=["n_elements"],
)
@triton.jit
def add_relu_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0), mask=mask)


def triton_fused_operator(x0, x1):
    x0 = x0.contiguous()
    x1 = x1.contiguous()
    out = torch.empty_like(x0)
    n = out.numel()
    add_relu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x0, x1, out, n)
    return out

# trick: hides torch compute in an autotuner pre_hook, which runs inside the launcher
# task: add_relu
# expect: forbidden
# ruff: noqa
# fmt: off
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, pre_hook=lambda a: a["out_ptr"].copy_(torch.relu(a["x_ptr"] + a["y_ptr"])))], key=["n"])
@triton.jit
def add_relu_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass


def triton_fused_operator(x0, x1):
    out = torch.empty_like(x0)
    add_relu_kernel[(1,)](x0, x1, out, x0.numel())
    return out

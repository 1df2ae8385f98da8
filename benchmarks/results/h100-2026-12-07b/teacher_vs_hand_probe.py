"""Why the teacher's shifted-rows TMA convolution kernel is slower than conv_variants.py's
hand-written one at the same tile: each kernel on each set of buffers, interleaved do_bench
medians, then torch.profiler's GPU time.  KernelBench L2 1's convolution in bf16.

    python benchmarks/results/h100-2026-12-07b/teacher_vs_hand_probe.py    # from the repo root
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import torch
from torch.profiler import ProfilerActivity, profile
from triton.testing import do_bench
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, "benchmarks")
import conv_variants as cv

SHAPE = (128, 64, 128, 128, 128, 3)  # N, C_in, H, W, C_out, kernel
TILE = (128, 128, 64, 8, 3)  # the teacher's: BLOCK_M, BLOCK_N, BLOCK_K, warps, stages


def operands() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    n, cin, h, w, cout, k = SHAPE
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.rand(n, cin, h, w, device="cuda", generator=gen).to(torch.bfloat16)
    weight = torch.randn(cout, cin, k, k, device="cuda", generator=gen) / (cin * k * k) ** 0.5
    bias = torch.randn(cout, device="cuda", generator=gen).to(torch.bfloat16)
    return x, weight.to(torch.bfloat16), bias


def launches() -> tuple[dict[str, Callable[[], None]], torch.Tensor, torch.Tensor]:
    """The four (kernel, buffers) launches, and the two outputs they write."""
    n, cin, h, w, cout, k = SHAPE
    x, weight, bias = operands()
    module = cv.teacher_module(SHAPE)
    recorder = cv.LaunchRecorder(module.k0_conv2d_tma_kernel)
    module.k0_conv2d_tma_kernel = recorder
    module.triton_fused_operator(x, weight, bias)
    grid, args, kwargs = recorder.calls[-1]
    teacher = recorder.kernel
    a_desc, b_desc = args[0], args[1]
    out_at = next(i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.dim() == 4)
    t0 = args[out_at]  # its strides, where passed, are y's too: both contiguous
    rows, taps = cv.tma_operands(x, weight)
    y = torch.empty(n, cout, h - k + 1, w - k + 1, device="cuda", dtype=torch.bfloat16)
    assert torch.equal(a_desc.base.permute(0, 2, 3, 1).reshape(-1, cin), rows)
    t_rows = a_desc.base.permute(0, 2, 3, 1).reshape(n * h * w, cin)
    t_taps = b_desc.base.permute(0, 2, 3, 1).reshape(cout, -1)
    hand_args = list(args)
    hand_args[0] = TensorDescriptor(rows, [n, h * w, cin], [h * w * cin, cin, 1], [1, 128, 64])
    hand_args[1] = TensorDescriptor(taps, [cout, k * k * cin], [k * k * cin, 1], [128, 64])
    hand_args[out_at] = y
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    found = {
        "teacher kernel, teacher buffers": lambda: teacher[grid](*args, **kwargs),
        "teacher kernel, hand buffers": lambda: teacher[grid](*hand_args, **kwargs),
        "hand kernel, hand buffers": lambda: cv.launch_tma(
            "tma_shifted", rows, taps, bias, y, SHAPE, TILE, sms
        ),
        "hand kernel, teacher buffers": lambda: cv.launch_tma(
            "tma_shifted", t_rows, t_taps, bias, t0, SHAPE, TILE, sms
        ),
    }
    return found, t0, y


def gpu_ms(fn: Callable[[], None]) -> float:
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type.name == "CUDA" and "conv" in e.name]
    return sum(e.device_time for e in events) / max(len(events), 1) / 1000


def main() -> int:
    found, t0, y = launches()
    x, weight, bias = operands()
    exact = torch.nn.functional.conv2d(x.float(), weight.float(), bias.float())
    for fn in found.values():
        fn()
    torch.cuda.synchronize()
    times: dict[str, list[float]] = {name: [] for name in found}
    for _ in range(3):  # interleaved rounds
        for name, fn in found.items():
            times[name].append(do_bench(fn, return_mode="median"))
    for name, fn in found.items():
        rounds = " ".join(f"{t:.3f}" for t in times[name])
        print(f"{name:30s} do_bench {rounds}  gpu {gpu_ms(fn):.3f} ms")
    errors = [((out.float() - exact).norm() / exact.norm()).item() for out in (t0, y)]
    print("relative errors", errors)
    return 0


if __name__ == "__main__":
    sys.exit(main())

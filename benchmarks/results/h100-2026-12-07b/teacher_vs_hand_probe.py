"""Why the teacher's TMA conv launch (0.876) is slower than the hand kernel (0.689) at one config:
kernel x buffers, interleaved, do_bench medians and profiler GPU times."""
import sys, pathlib
sys.path.insert(0, "benchmarks")
import torch, triton
from triton.testing import do_bench
from triton.tools.tensor_descriptor import TensorDescriptor
import conv_variants as cv

shape = (128, 64, 128, 128, 128, 3)
n, cin, h, w, cout, k = shape
oh = ow = h - k + 1
gen = torch.Generator(device="cuda").manual_seed(0)
x = torch.rand(n, cin, h, w, device="cuda", generator=gen).to(torch.bfloat16)
weight = (torch.randn(cout, cin, k, k, device="cuda", generator=gen) / (cin * k * k) ** 0.5).to(torch.bfloat16)
bias = torch.randn(cout, device="cuda", generator=gen).to(torch.bfloat16)
module = cv.teacher_module(shape)
rec = cv.LaunchRecorder(module.k0_conv2d_tma_kernel)
module.k0_conv2d_tma_kernel = rec
t_out = module.triton_fused_operator(x, weight, bias)
grid, args, kwargs = rec.calls[-1]
tk = rec.kernel
a_desc, b_desc = args[0], args[1]
t0 = args[4]
rows_op, taps = cv.tma_operands(x, weight)
y = torch.empty(n, cout, oh, ow, device="cuda", dtype=torch.bfloat16)
sms = torch.cuda.get_device_properties(0).multi_processor_count
cfg = (128, 128, 64, 8, 3)
print("teacher a base", a_desc.base.shape, a_desc.base.stride(), a_desc.shape, a_desc.strides, a_desc.block_shape)
print("teacher b base", b_desc.base.shape, b_desc.base.stride(), b_desc.shape, b_desc.strides, b_desc.block_shape)
print("ptrs % 1024:", a_desc.base.data_ptr() % 1024, b_desc.base.data_ptr() % 1024, t0.data_ptr() % 1024,
      rows_op.data_ptr() % 1024, taps.data_ptr() % 1024, y.data_ptr() % 1024)
print("same data:", torch.equal(a_desc.base.permute(0, 2, 3, 1).reshape(-1, cin), rows_op),
      torch.equal(b_desc.base.permute(0, 2, 3, 1).reshape(cout, -1), taps))
t_rows = a_desc.base.permute(0, 2, 3, 1).reshape(n * h * w, cin)
t_taps = b_desc.base.permute(0, 2, 3, 1).reshape(cout, -1)
h_adesc = TensorDescriptor(rows_op, [n, h * w, cin], [h * w * cin, cin, 1], [1, 128, 64])
h_bdesc = TensorDescriptor(taps, [cout, k * k * cin], [k * k * cin, 1], [128, 64])
targs = list(args)
targs[0], targs[1], targs[4] = h_adesc, h_bdesc, y
targs[5:8] = [y.stride(0), y.stride(1), y.stride(2)]
variants = {
    "teacher_kernel/teacher_buffers": lambda: tk[grid](*args, **kwargs),
    "teacher_kernel/hand_buffers": lambda: tk[grid](*targs, **kwargs),
    "hand_kernel/hand_buffers": lambda: cv.launch_tma("tma_shifted", rows_op, taps, bias, y, shape, cfg, sms),
    "hand_kernel/teacher_buffers": lambda: cv.launch_tma("tma_shifted", t_rows, t_taps, bias, t0, shape, cfg, sms),
}
exact = torch.nn.functional.conv2d(x.float(), weight.float(), bias.float())
for name, fn in variants.items():
    fn(); torch.cuda.synchronize()
times = {name: [] for name in variants}
for _ in range(3):
    for name, fn in variants.items():
        times[name].append(do_bench(fn, return_mode="median"))
from torch.profiler import profile, ProfilerActivity
gpu = {}
for name, fn in variants.items():
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
    ev = [e for e in p.events() if e.device_type.name == "CUDA" and "conv" in e.name]
    gpu[name] = sum(e.device_time for e in ev) / max(len(ev), 1) / 1000
for name in variants:
    print(f"{name:34s} do_bench {' '.join(f'{t:.3f}' for t in times[name])}  gpu {gpu[name]:.3f} ms")
print("errs", ((t0.float() - exact).norm() / exact.norm()).item(), ((y.float() - exact).norm() / exact.norm()).item())

"""How should a few long rows be split across programs? (run on the H200)

    python benchmarks/split_rows_probe.py [--device cuda]     # the CPU: correctness only

Why: KernelBench L1 40 (layer norm of 16 rows of 4M floats, weight and bias of 4M each) ran
0.718 ms as 16 x 17 programs and 1.352 ms as 16 x 128 (h200-2026-12-03-c), against
torch.compile's 0.321. The teacher's split numbers its programs row-major (pid = row * chunks +
chunk), so the 16 programs that read one chunk of weight and bias run a row's worth of
programs apart and each reads it from HBM: 16 x 32 MB of weight and bias besides the 805 MB the
normalization must move. Numbered chunk-major (pid = chunk * rows + row), the 16 readers of a
chunk run side by side and 15 of them hit L2.

What it does: the teacher's two kernels (chunk statistics by Welford, then combine and
normalize), written out here with the split, the program order and the warps as parameters;
each variant checked against F.layer_norm and timed with triton.testing.do_bench (L2 flushed,
CUDA events), beside eager and torch.compile in the same run. Prints one row per variant:
both kernels' time, ratios to eager and compile, and GB/s over the 805 MB minimum.
"""

from __future__ import annotations

import argparse
import itertools

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

ROWS, R = 16, 64 * 256 * 256
BLOCK_R = 8192


@triton.jit
def row_and_chunk(pid, N_ROWS: tl.constexpr, CHUNKS: tl.constexpr, CHUNK_MAJOR: tl.constexpr):
    """(row, chunk) of program `pid`: chunk-major (a chunk's rows side by side) or row-major."""
    if CHUNK_MAJOR:
        return pid % N_ROWS, pid // N_ROWS
    return pid // CHUNKS, pid % CHUNKS


@triton.jit
def stats_kernel(
    x_ptr,
    part_ptr,
    N_ROWS: tl.constexpr,
    R: tl.constexpr,
    CHUNKS: tl.constexpr,
    CHUNK: tl.constexpr,
    BLOCK_R: tl.constexpr,
    CHUNK_MAJOR: tl.constexpr,
):
    row, chunk = row_and_chunk(tl.program_id(0), N_ROWS, CHUNKS, CHUNK_MAJOR)
    start = chunk * CHUNK
    mean_acc = tl.zeros([BLOCK_R], dtype=tl.float32)
    m2_acc = tl.zeros([BLOCK_R], dtype=tl.float32)
    for r0 in tl.range(0, CHUNK, BLOCK_R):
        r = start + r0 + tl.arange(0, BLOCK_R)
        mask = r < R
        x = tl.load(x_ptr + row * R + r, mask=mask, other=0.0)
        delta = x - mean_acc
        mean_acc += tl.where(mask, delta * (1.0 / (r0 // BLOCK_R + 1)), 0.0)
        m2_acc += tl.where(mask, delta * (x - mean_acc), 0.0)
    n_chunk = tl.minimum(R - start, CHUNK)
    lane = tl.arange(0, BLOCK_R)
    cnt = ((n_chunk - lane + BLOCK_R - 1) // BLOCK_R).to(tl.float32)
    mean = tl.sum(cnt * mean_acc, axis=0) / n_chunk
    dev = mean_acc - mean
    m2 = tl.sum(m2_acc + cnt * dev * dev, axis=0)
    tl.store(part_ptr + (row * CHUNKS + chunk) * 2, mean)
    tl.store(part_ptr + (row * CHUNKS + chunk) * 2 + 1, m2)


@triton.jit
def norm_kernel(
    part_ptr,
    x_ptr,
    w_ptr,
    b_ptr,
    out_ptr,
    N_ROWS: tl.constexpr,
    R: tl.constexpr,
    CHUNKS: tl.constexpr,
    CHUNKS_P2: tl.constexpr,
    CHUNK: tl.constexpr,
    BLOCK_R: tl.constexpr,
    CHUNK_MAJOR: tl.constexpr,
):
    row, chunk = row_and_chunk(tl.program_id(0), N_ROWS, CHUNKS, CHUNK_MAJOR)
    start = chunk * CHUNK
    chunks = tl.arange(0, CHUNKS_P2)
    cmask = chunks < CHUNKS
    p_mean = tl.load(part_ptr + (row * CHUNKS + chunks) * 2, mask=cmask, other=0.0)
    p_m2 = tl.load(part_ptr + (row * CHUNKS + chunks) * 2 + 1, mask=cmask, other=0.0)
    p_n = tl.where(cmask, tl.minimum(R - chunks * CHUNK, CHUNK), 0).to(tl.float32)
    mean = tl.sum(p_n * p_mean, axis=0) / R
    dev = p_mean - mean
    var = tl.sum(p_m2 + p_n * dev * dev, axis=0) / R
    rstd = 1.0 / tl.sqrt(var + 1e-5)
    for r0 in tl.range(0, CHUNK, BLOCK_R):
        r = start + r0 + tl.arange(0, BLOCK_R)
        mask = r < R
        x = tl.load(x_ptr + row * R + r, mask=mask, other=0.0)
        w = tl.load(w_ptr + r, mask=mask, other=0.0)
        b = tl.load(b_ptr + r, mask=mask, other=0.0)
        tl.store(out_ptr + row * R + r, (x - mean) * rstd * w + b, mask=mask)


def layer_norm(x, w, b, chunks: int, chunk_major: bool, warps: int):
    blocks = triton.cdiv(R, BLOCK_R)
    chunk = triton.cdiv(blocks, chunks) * BLOCK_R
    chunks = triton.cdiv(R, chunk)
    part = torch.empty(ROWS * chunks * 2, device=x.device, dtype=torch.float32)
    out = torch.empty_like(x)
    grid = (ROWS * chunks,)
    stats_kernel[grid](x, part, ROWS, R, chunks, chunk, BLOCK_R, chunk_major, num_warps=warps)
    norm_kernel[grid](part, x, w, b, out, ROWS, R, chunks, triton.next_power_of_2(chunks), chunk,
                      BLOCK_R, chunk_major, num_warps=warps)  # fmt: skip
    return out


TEACHER_TASK = """import torch
import torch.nn.functional as F

def fused_operator(x0, w, b):
    t0 = F.layer_norm(x0, [64, 256, 256], w, b)
    return t0

def get_inputs():
    return [torch.randn(16, 64, 256, 256), torch.randn(64, 256, 256), torch.randn(64, 256, 256)]
"""


def teacher_operator():
    """The teacher's candidate for L1 40's program (drtriton's emitter), loaded as a module."""
    import importlib.util
    import tempfile

    from drtriton.teach import emit

    path = tempfile.mkdtemp() + "/teacher_ln.py"
    with open(path, "w") as f:
        f.write(emit(TEACHER_TASK))
    spec = importlib.util.spec_from_file_location("teacher_ln", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.triton_fused_operator


def per_launch_ms(call) -> list[tuple[str, int, float]]:
    """(kernel, programs, ms) of each Triton launch `call` makes, each timed alone."""
    from triton.runtime.jit import JITFunction

    original, seen = JITFunction.run, []

    def run(fn, *args, grid, warmup, **kwargs):
        seen.append((fn, args, grid, kwargs))
        return original(fn, *args, grid=grid, warmup=warmup, **kwargs)

    JITFunction.run = run
    try:
        call()
    finally:
        JITFunction.run = original
    return [(fn.__name__, grid[0], triton.testing.do_bench(lambda f=fn, a=args, g=grid, k=kw: f[g](*a, **k)))
            for fn, args, grid, kw in seen]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    cuda = args.device.startswith("cuda")
    rows, r = (ROWS, R) if cuda else (ROWS, 4 * BLOCK_R)
    globals().update(R=r)
    x = torch.rand(rows, r, device=args.device)
    w = torch.randn(r, device=args.device)
    b = torch.randn(r, device=args.device)
    ref = F.layer_norm(x, [r], w, b)
    moved = 3 * x.numel() * 4 + 2 * w.numel() * 4
    results = []
    if cuda:
        eager = triton.testing.do_bench(lambda: F.layer_norm(x, [r], w, b))
        compiled = torch.compile(lambda x, w, b: F.layer_norm(x, [r], w, b))
        compiled(x, w, b)
        comp = triton.testing.do_bench(lambda: compiled(x, w, b))
        print(f"eager {eager:.4f} ms, torch.compile {comp:.4f} ms, minimum {moved / 1e6:.0f} MB")
        teacher = teacher_operator()
        x4, w3, b3 = x.view(16, 64, 256, 256), w.view(64, 256, 256), b.view(64, 256, 256)
        err = (teacher(x4, w3, b3).view_as(ref) - ref).abs().max().item()
        ms = triton.testing.do_bench(lambda: teacher(x4, w3, b3))
        print(
            f"teacher's kernels (drtriton.teach.emit): {ms:.4f} ms, max err {err:.2e}, "
            f"{eager / ms:.3f}x eager, {comp / ms:.3f}x compile"
        )
        for name, tag in (
            ((lambda: teacher(x4, w3, b3)), "teacher"),
            ((lambda: layer_norm(x, w, b, 128, True, 16)), "probe"),
        ):
            for kernel, programs, ms in per_launch_ms(name):
                print(f"  {tag} {kernel} [{programs}]: {ms:.4f} ms")
    variants = itertools.product((17, 33, 66, 128), (False, True), (8, 16))
    print(f"{'chunks':>6} {'order':>6} {'warps':>5} {'max err':>9} {'ms':>8} {'x eager':>8} "
          f"{'x compile':>9} {'GB/s':>6}")  # fmt: skip
    for chunks, chunk_major, warps in variants if cuda else [(2, False, 4), (3, True, 4)]:
        out = layer_norm(x, w, b, chunks, chunk_major, warps)
        err = (out - ref).abs().max().item()
        ms = (
            triton.testing.do_bench(
                lambda c=chunks, m=chunk_major, n=warps: layer_norm(x, w, b, c, m, n)
            )
            if cuda
            else float("nan")
        )
        results.append((chunks, chunk_major, warps, err, ms))
        order = "chunk" if chunk_major else "row"
        if cuda:
            print(f"{chunks:>6} {order:>6} {warps:>5} {err:>9.2e} {ms:>8.4f} {eager / ms:>8.3f} "
                  f"{comp / ms:>9.3f} {moved / ms / 1e6:>6.0f}")  # fmt: skip
        else:
            print(f"{chunks:>6} {order:>6} {warps:>5} {err:>9.2e}")


if __name__ == "__main__":
    main()

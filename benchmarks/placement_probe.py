"""Does where a 1 MB tensor lies change a 4 us kernel's time? (run on the H200)

    python benchmarks/placement_probe.py [--calls 300] [--processes 2]

Why: timing_noise's A/A rows (the same Triton kernel timed in the harness's process and in the
sandboxed worker) agreed within 0.3% at 256 MB but not at 1 MB: softmax 4.58 us in the harness
against 5.16 us in the worker by events, while their CUDA-graph replays agreed within 1.3%
(benchmarks/results/h200-2026-12-03-b). Each process allocates its own buffers, so the two
sides read and write different addresses. One lead: after the 256 MB L2 flush the GPU's
address translations are cold too, and a 1 MB buffer lies in one 2 MB page or across two.

What it does: in one process, the 1 MB softmax and relu kernels of timing_noise (b) read and
write views of one arena at offsets 0, 0.5, 1 and 1.5 MB from a 2 MB boundary, each
combination timed the verifier's way (timing.Bench: flush, launch slack, events; 10%
trimmed mean) and as graph replays; then the same in --processes fresh processes. If the
events times move with the offsets, or between processes at the same offsets, by the 0.4 us
the A/A rows showed, placement explains them; if they stay within ~0.1 us, it does not.
"""

from __future__ import annotations

import argparse
import itertools
import os
import pathlib
import subprocess
import sys

import triton
import triton.language as tl

ROOT = pathlib.Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

MB = 1 << 20
PAGE = 2 * MB  # the caching allocator's segment granularity
OFFSETS_MB = (0.0, 0.5, 1.0, 1.5)
ROWS, COLS = 256, 1024  # 1 MB of float32, as timing_noise's 1 MB rows


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(x > 0, x, 0.0), mask=mask)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + offs, num / tl.sum(num, axis=0), mask=mask)


def relu(x, out):
    relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024, num_warps=4)
    return out


def softmax(x, out):
    softmax_kernel[(ROWS,)](x, out, COLS, BLOCK=COLS, num_warps=4)
    return out


KERNELS = {"relu": relu, "softmax": softmax}


def probe(calls: int) -> list[tuple[str, float, float, float, float]]:
    """(kernel, input offset MB, output offset MB, events us, graph us) per combination."""
    import torch

    from drtriton.verify.options import Options
    from drtriton.verify.timing import Bench, Flush, summarize

    arena = torch.empty(4 * PAGE // 4 + PAGE // 4, device="cuda")
    base = (-arena.data_ptr() % PAGE) // 4  # first element on a 2 MB boundary
    flush = Flush(Options.launch_slack_us)

    def view(page: int, offset_mb: float) -> torch.Tensor:
        start = base + (page * PAGE + int(offset_mb * MB)) // 4
        return arena[start : start + ROWS * COLS].view(ROWS, COLS)

    rows = []
    for name, run in KERNELS.items():
        for ix, ox in itertools.product(OFFSETS_MB, OFFSETS_MB):
            x, out = view(0, ix), view(2, ox)  # pages 0-1 and 2-3: never overlapping
            sets = [[torch.randn(ROWS, COLS, device="cuda")] for _ in range(2)]
            bench = Bench(lambda x, out=out, run=run: run(x, out), sets, flush, buffers=[x])
            bench.warm(5)
            events = summarize([bench.timed(i)[0] for i in range(calls)])["trimmed"]
            bench.capture()
            graphs = summarize([bench.replayed(i)[0] for i in range(calls)])["trimmed"]
            rows.append((name, ix, ox, events * 1e3, graphs * 1e3))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=300, help="timed calls per combination")
    ap.add_argument("--processes", type=int, default=2, help="fresh processes after this one")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.calls < 10 or args.processes < 0:
        ap.error("--calls must be >= 10 and --processes >= 0")
    import torch

    if not torch.cuda.is_available():
        print("placement_probe: needs a CUDA device", file=sys.stderr)
        return 2
    rows = probe(args.calls)
    if args.child:
        for r in rows:
            print("ROW", *r)
        return 0
    table = {("this", r[0], r[1], r[2]): r[3:] for r in rows}
    for p in range(args.processes):
        out = subprocess.run([sys.executable, __file__, "--child", "--calls", str(args.calls)],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
        for line in out.splitlines():
            if line.startswith("ROW "):
                _, name, ix, ox, ev, gr = line.split()
                table[(f"p{p + 1}", name, float(ix), float(ox))] = (float(ev), float(gr))
    procs = ["this"] + [f"p{p + 1}" for p in range(args.processes)]
    print(f"events / graph-replay trimmed means (us), {args.calls} calls each")
    print(f"{'kernel':<8} {'in MB':>5} {'out MB':>6}  " + "  ".join(f"{p:>13}" for p in procs))
    for name in ("relu", "softmax"):
        for ix, ox in itertools.product(OFFSETS_MB, OFFSETS_MB):
            cells = [table.get((p, name, ix, ox)) for p in procs]
            text = "  ".join(f"{c[0]:6.3f}/{c[1]:6.3f}" if c else f"{'-':>13}" for c in cells)
            print(f"{name:<8} {ix:>5} {ox:>6}  {text}")
    for name in ("relu", "softmax"):
        events = [v[0] for k, v in table.items() if k[1] == name]
        print(f"{name}: events span {min(events):.3f}-{max(events):.3f} us over offsets and "
              f"processes")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

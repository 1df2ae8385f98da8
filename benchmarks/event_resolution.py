"""How finely CUDA events resolve a short kernel on this GPU (run on the H200).

    python benchmarks/event_resolution.py

Times a 1 MB relu 400 times the verifier's way (timing.Bench: L2 flush, launch slack, events,
sync) and prints the smallest step between distinct elapsed times, how many distinct values
there are, and the median and spread; then how long the L2 flush runs on the GPU alone and with
the launch slack (what a call's launch has before the start event is reached). If the step were ~0.5 us (the CUDA documentation's "resolution of
around 0.5 microseconds"), medians of 3 us kernels could not be told apart at 5%.
"""

from __future__ import annotations

import itertools
import os
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402

from drtriton.verify.options import Options  # noqa: E402
from drtriton.verify.timing import Bench, Flush  # noqa: E402


def main() -> int:
    if not torch.cuda.is_available():
        print("event_resolution: needs a CUDA device", file=sys.stderr)
        return 2
    x = torch.randn(256, 1024, device="cuda")
    bench = Bench(torch.relu, [[x]], Flush(Options.launch_slack_us))
    bench.warm(10)
    times = [bench.timed(0)[0] for _ in range(400)]
    distinct = sorted(set(times))
    steps = [b - a for a, b in itertools.pairwise(distinct) if b > a]
    print(f"relu 1 MB: median {statistics.median(times) * 1e3:.3f} us, "
          f"min {min(times) * 1e3:.3f}, max {max(times) * 1e3:.3f}, "
          f"{len(distinct)} distinct values, smallest step "
          f"{min(steps) * 1e3 if steps else float('nan'):.4f} us")  # fmt: skip
    flush = bench.flush
    mb = flush.buffer.numel() * 4 >> 20
    for what, run in ((f"L2 flush ({mb} MB zeroed)", flush.buffer.zero_),
                      (f"L2 flush + {Options.launch_slack_us:g} us slack", flush)):  # fmt: skip
        spans = []
        for _ in range(50):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            end.record()
            torch.cuda.synchronize()
            spans.append(start.elapsed_time(end))
        print(f"{what}: median {statistics.median(spans) * 1e3:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())

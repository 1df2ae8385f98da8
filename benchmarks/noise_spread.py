"""Each kernel's spread over repeated verifications, from a verify-batch output file.

    python benchmarks/noise_spread.py VERDICTS.jsonl

Records are grouped by their id without its `#repeat` suffix (timing_noise.py's pairs are
named KERNEL#N); per kernel: repeats, median time, max/min of the time and of the CUDA-graph
time, and the pass rule of timing_noise.kernel_stats (1.05 from 50 us, 1.15 below).
"""

from __future__ import annotations

import collections
import importlib.util
import json
import pathlib
import sys


def _timing_noise():
    path = pathlib.Path(__file__).with_name("timing_noise.py")
    spec = importlib.util.spec_from_file_location("timing_noise", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not pathlib.Path(argv[0]).is_file():
        print("usage: noise_spread.py VERDICTS.jsonl (an existing file)", file=sys.stderr)
        return 2
    noise = _timing_noise()
    by_kernel: dict[str, list[dict]] = collections.defaultdict(list)
    for line in pathlib.Path(argv[0]).read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            by_kernel[str(record["id"]).rpartition("#")[0]].append(record)
    print("| kernel | repeats | median ms | time max/min | graph max/min | pass |")
    print("|---|---|---|---|---|---|")
    for kernel, verdicts in by_kernel.items():
        k = noise.kernel_stats(kernel, verdicts)
        cells = [k["median_ms"], k["time_ratio"], k["graph_ratio"]]
        shown = [f"{c:.4g}" if isinstance(c, float) else str(c) for c in cells]
        print(f"| {kernel} | {k['repeats']} | {' | '.join(shown)} | {k['pass']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

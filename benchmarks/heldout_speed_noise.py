"""How reproducible are the held-out speed-ups? The same correct kernels, timed again and again.

    python benchmarks/heldout_speed_noise.py --device cuda \\
        --samples benchmarks/results/h200-2026-12-01/callA_drpo_eval_after_rl.jsonl \\
        --workers 1 12 --repeats 3 --out speed_noise.json
    python benchmarks/heldout_speed_noise.py --limit 2 --repeats 1     # CPU smoke test

The recipe's held-out evaluation judges every answer with 12 verifier processes on one GPU,
and its speed-ups of the same kernels differed up to 3x between evaluations. Timings hold the
GPU's lock, but the other processes keep compiling on the CPU, and a microsecond kernel's time
is mostly its launch. This script takes the correct answers of an evaluation's samples file
(`eval_*_rl.jsonl`: id, status, code), finds their programs in --heldout, and verifies them
--repeats times with each worker count, so that the spread with 1 process (timed alone) and
with 12 (as in the recipe) can be compared.

Prints, per worker count, the geometric-mean speed-up of each repeat and the mean per-kernel
spread (max - min of the log speed-up over repeats); --out writes those and every kernel's
log speed-ups as JSON (atomically). On the CPU the verifier cannot time: the smoke test checks
that the answers are judged correct again. Exit status 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The source tree's package, unless PYTHONPATH names another copy (a private build's _core).
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

from drtriton.errors import UserError  # noqa: E402
from drtriton.files import write_text_atomic  # noqa: E402
from drtriton.jsonl import read_jsonl  # noqa: E402

DEFAULT_SAMPLES = "benchmarks/results/h200-2026-12-01/callA_drpo_eval_after_rl.jsonl"


def correct_pairs(samples: str, heldout: str, limit: int) -> list[tuple[str, str, str]]:
    """(id, task source, code) of each correct answer in `samples`."""
    programs = {r["id"]: r["source"] for r in read_jsonl(heldout) if r.get("source")}
    pairs = []
    for s in read_jsonl(samples):
        if s.get("correct") and s.get("code") and s.get("id") in programs:
            pairs.append((s["id"], programs[s["id"]], s["code"]))
    if not pairs:
        raise UserError(f"{samples}: no correct answer to a program of {heldout}")
    return pairs[:limit] if limit else pairs


def spread(runs: list[list[float | None]]) -> float | None:
    """Mean over kernels of (max - min) of the log speed-up across repeats."""
    gaps = []
    for logs in zip(*runs, strict=True):
        vals = [x for x in logs if x is not None]
        if len(vals) > 1:
            gaps.append(max(vals) - min(vals))
    return sum(gaps) / len(gaps) if gaps else None


def measure(pairs: list, device: str, workers: int, repeats: int) -> dict[str, Any]:
    from drtriton.train.evaluate import summarize
    from drtriton.train.rewards import BatchVerifier

    runs, correct, seconds, geomeans = [], [], [], []
    for _ in range(repeats):
        verifier = BatchVerifier(device, None, workers, compile_baseline=False)
        t0 = time.perf_counter()
        rewards = verifier.judge([p[1] for p in pairs], [p[2] for p in pairs])
        seconds.append(time.perf_counter() - t0)
        runs.append([r.log_speedup if r.correct else None for r in rewards])
        correct.append(sum(r.correct for r in rewards))
        geomeans.append(summarize(rewards)["geomean_speedup"])
    return {"workers": workers, "correct": correct, "seconds": seconds,
            "geomean_speedup": geomeans, "mean_log_spread": spread(runs),
            "log_speedups": runs}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", default=DEFAULT_SAMPLES, help="an evaluation's samples JSONL")
    ap.add_argument("--heldout", default="examples/train/data/heldout.jsonl",
                    help="the held-out programs the samples answer")  # fmt: skip
    ap.add_argument("--device", default="cpu", help="cuda | cpu")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 12],
                    help="verifier process counts to compare")  # fmt: skip
    ap.add_argument("--repeats", type=int, default=3, help="verifications per kernel and count")
    ap.add_argument("--limit", type=int, default=0, help="first N correct answers only")
    ap.add_argument("--out", default="", help="JSON results")
    args = ap.parse_args(argv)
    try:
        if args.repeats < 1 or min(args.workers) < 1:
            raise UserError("--repeats and --workers must be at least 1")
        pairs = correct_pairs(args.samples, args.heldout, args.limit)
    except UserError as exc:
        print(f"heldout_speed_noise: {exc}", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    for workers in args.workers:  # each row printed and saved as it ends (a run may be cut)
        rows.append(measure(pairs, args.device, workers, args.repeats))
        print(_line(rows[-1], len(pairs)), flush=True)
        if args.out:
            data = {"samples": args.samples, "device": args.device,
                    "ids": [p[0] for p in pairs], "rows": rows}  # fmt: skip
            write_text_atomic(pathlib.Path(args.out), json.dumps(data, indent=1))
    return 0


def _line(row: dict[str, Any], n: int) -> str:
    geo = ", ".join(f"{g:.3f}x" if g else "-" for g in row["geomean_speedup"])
    gap = row["mean_log_spread"]
    return (f"workers {row['workers']:>2}: correct {row['correct']} of {n}; geomean per "
            f"repeat {geo}; mean per-kernel log spread {'-' if gap is None else f'{gap:.3f}'}; "
            f"{sum(row['seconds']):.0f} s")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())

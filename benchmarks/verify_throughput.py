"""Verifier throughput: candidates verified per minute with N workers, and the harness overhead.

    python benchmarks/verify_throughput.py                       # CPU (Triton interpreter)
    python benchmarks/verify_throughput.py --device cuda --workers 1 2 4 8 --pairs 64
    python benchmarks/verify_throughput.py --fork-server on off   # A/B, in turn, same pairs

Candidates are the honest kernels of tests/verify/honest (elementwise, reduction, matmul, softmax,
strided, transpose, module task) plus a few cheating ones from tests/verify/adversarial (static
rejections cost almost nothing; dynamic ones cost a worker), repeated to --pairs. They run
through `verify-batch`'s code path (run_batch), so the figure is what RL and evaluation get.

Reported per worker count: candidates/minute (wall clock of the whole batch) and, over the
accepted candidates, the mean wall time per candidate, the time inside the candidate's own calls
(`candidate_s`, measured in the worker around each call; on a GPU add the timed runs), the worker
start-up (sandbox + Python + torch + triton imports; with the fork server (zygote.py) a fork)
and the overhead = wall - candidate time; then where a candidate's time goes (its worker
requests, the GPU lock's waits and exclusive holds).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from drtriton.verify.batch import run_batch  # noqa: E402
from drtriton.verify.harness import Options  # noqa: E402

TESTS = ROOT / "tests" / "verify"
ADVERSARIAL = ["torch_fallback", "numpy_host", "zeros_softmax", "cached_by_pointer"]


def pairs(n: int) -> list[dict[str, str]]:
    base = []
    for cand in sorted((TESTS / "honest").glob("*.py")):
        base.append({"task": cand.stem, "completion": cand.read_text()})
    for name in ADVERSARIAL:
        path = TESTS / "adversarial" / f"{name}.py"
        task = next(line.split(":", 1)[1].strip() for line in path.read_text().splitlines()
                    if line.startswith("# task:"))  # fmt: skip
        base.append({"task": task, "completion": path.read_text()})
    out = []
    for i in range(n):
        b = base[i % len(base)]
        out.append({"id": f"p{i}", "source": (TESTS / "tasks" / f"{b['task']}.py").read_text(),
                    "completion": b["completion"]})  # fmt: skip
    return out


def measure(records: list[dict[str, str]], opts: Options, workers: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "pairs.jsonl"), os.path.join(d, "out.jsonl")
        with open(src, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in records)
        start = time.monotonic()
        run_batch(src, out, opts, workers=workers, progress=False)
        wall = time.monotonic() - start
        with open(out) as f:
            results = [json.loads(line) for line in f]
    accepted = [r for r in results if r.get("status") == "correct"]
    cand = [
        r["candidate_s"] + (r["time_ms"] or 0) * (opts.runs + opts.warmup) / 1000 for r in accepted
    ]
    walls = [r["wall_s"] for r in accepted]
    return {
        "workers": workers,
        "fork_server": opts.fork_server,
        "pairs": len(results),
        "accepted": len(accepted),
        "per_minute": 60 * len(results) / wall,
        "wall_s": wall,
        "mean_wall_s": statistics.fmean(walls) if walls else float("nan"),
        "mean_candidate_s": statistics.fmean(cand) if cand else float("nan"),
        "mean_ready_s": statistics.fmean(r["worker_ready_s"] for r in accepted)
        if accepted
        else float("nan"),
        "mean_overhead_s": statistics.fmean(w - c for w, c in zip(walls, cand, strict=True))
        if accepted
        else float("nan"),
        "sandbox": accepted[0]["sandbox"] if accepted else None,
        "where_s": where_time_goes(accepted),
    }


def where_time_goes(accepted: list[dict[str, Any]]) -> dict[str, float]:
    """Mean seconds per accepted candidate in each worker request (request_s: start, load,
    warm = the candidate's first calls with their Triton compiles and autotuning, run = the
    correctness trials, time_* and graph_* = the timed rounds), waiting for the GPU's lock and
    holding it alone: what the overhead is made of."""
    if not accepted:
        return {}
    totals: dict[str, float] = {}
    for r in accepted:
        for op, seconds in (r.get("request_s") or {}).items():
            key = op.split("_")[0] if op.startswith(("time_", "graph_")) else op
            totals[key] = totals.get(key, 0.0) + seconds
        for key in ("lock_wait_s", "exclusive_s"):
            totals[key] = totals.get(key, 0.0) + (r.get(key) or 0.0)
    return {op: round(total / len(accepted), 3) for op, total in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--pairs", type=int, default=22)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--fork-server", nargs="+", choices=("on", "off"), default=["on"],
                        help="fork workers from a server (Options.fork_server); both: an A/B")  # fmt: skip
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    records = pairs(args.pairs)
    rows = []
    print(f"device={args.device} pairs={len(records)} (honest + cheating, repeated)")
    print("workers  fork  cand/min  accepted  mean wall s  in candidate s  worker start s  "
          "overhead s  sandbox")  # fmt: skip
    for n in args.workers:
        for fork in args.fork_server:
            opts = Options(device=args.device, sandbox=args.sandbox, fork_server=fork == "on")
            row = measure(records, opts, n)
            rows.append(row)
            print(f"{n:7d}  {fork:>4}  {row['per_minute']:8.1f}  {row['accepted']:4d}/"
                  f"{row['pairs']:<3d}  {row['mean_wall_s']:11.2f}  "
                  f"{row['mean_candidate_s']:14.3f}  {row['mean_ready_s']:14.2f}  "
                  f"{row['mean_overhead_s']:10.2f}  {row['sandbox']}")  # fmt: skip
            where = ", ".join(f"{op} {t:.2f}" for op, t in row["where_s"].items())
            print(f"         per accepted candidate, s: {where}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

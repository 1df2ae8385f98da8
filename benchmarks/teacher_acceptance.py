"""Acceptance of the template Triton generator (the teacher) on synthetic programs.

Synthesizes programs per level (number of operators), emits one candidate each with the
C++ generator, verifies it, and prints by level: the share accepted, and on a GPU the share
faster than eager and than torch.compile with geometric-mean speedups (all three timed in
the same verifier run).  Operators of rejected or unsupported programs are listed.

    python benchmarks/teacher_acceptance.py --preset tiny --per-level 40            # CPU
    drtriton synth --preset paper --levels 1-5 --n 200 --out paper.jsonl                # CPU
    python benchmarks/teacher_acceptance.py --programs paper.jsonl --device cuda        # H200

Issue 5's bar: tiny preset on the CPU interpreter >= 99% of level 1 and >= 95% of levels
2-5; paper preset on the H200 >= 95%.  `--out` keeps every pair record (with its verdict)
and makes a rerun resume where it stopped.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import sys
import time
from typing import Any

from drtriton.synth import synthesize
from drtriton.teach.pairs import make_pairs
from drtriton.verify import Options


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--preset", default="tiny", choices=["tiny", "paper"])
    ap.add_argument(
        "--programs",
        default=None,
        help="program records (JSONL from `drtriton synth`) instead of synthesizing here "
        "(the GPU image has no Gecode: synthesize on the CPU, carry the file)",
    )
    ap.add_argument("--levels", default="1-5", help="levels, e.g. 1-5 or 1,3")
    ap.add_argument("--per-level", type=int, default=40, help="programs per level")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", help="cpu (interpreter) or cuda")
    ap.add_argument("--workers", type=int, default=None, help="default: 2 on cpu, GPUs on cuda")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per candidate")
    ap.add_argument("--out", default=None, help="JSONL of pair records with verdicts (resumable)")
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="print the table from --out's records without verifying more (after a cut-off run)",
    )
    return ap.parse_args(argv)


def level_list(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(x) for x in text.split(",")]


def load_done(path: str | None) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip().endswith("}"):
                    rec = json.loads(line)
                    done[rec["id"]] = rec
    return done


def geomean(xs: list[float]) -> float:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def report(results: list[dict[str, Any]], on_gpu: bool) -> None:
    by_level: dict[int, list[dict[str, Any]]] = collections.defaultdict(list)
    for r in results:
        by_level[r["level"]].append(r)
    head = f"{'level':>5} {'n':>4} {'accepted':>9}"
    if on_gpu:
        head += f" {'>eager':>7} {'>compile':>8} {'gm eager':>9} {'gm compile':>10}"
    print(head)
    for level in sorted(by_level):
        rs = by_level[level]
        ok = [r for r in rs if r.get("correct")]
        line = f"{level:>5} {len(rs):>4} {100.0 * len(ok) / len(rs):>8.1f}%"
        if on_gpu:
            eager = [
                r["eager_ms"] / r["time_ms"] for r in ok if r.get("time_ms") and r.get("eager_ms")
            ]
            comp = [
                r["compile_ms"] / r["time_ms"]
                for r in ok
                if r.get("time_ms") and r.get("compile_ms")
            ]
            line += f" {100.0 * sum(s > 1 for s in eager) / max(len(ok), 1):>6.1f}%"
            line += f" {100.0 * sum(s > 1 for s in comp) / max(len(ok), 1):>7.1f}%"
            line += f" {geomean(eager):>9.3f} {geomean(comp):>10.3f}"
        print(line)
    failing: collections.Counter[str] = collections.Counter()
    for r in results:
        if not r.get("correct"):
            for op in r.get("unsupported") or r["ops"]:
                failing[op] += 1
    if failing:
        print("operators in rejected or unsupported programs:", dict(failing.most_common()))
        for r in results:
            if not r.get("correct"):
                reason = r.get("reason") or r.get("error") or f"unsupported {r.get('unsupported')}"
                print(f"  {r['id']} L{r['level']} {r['ops']}: {r.get('status')}: {reason[:300]}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    on_gpu = args.device.startswith("cuda")
    records: list[dict[str, Any]] = []
    levels = level_list(args.levels)
    if args.programs:
        with open(args.programs) as f:
            records = [json.loads(line) for line in f if line.strip()]
        records = [r for r in records if r["level"] in levels]
        levels = []
    for level in levels:
        records += synthesize(
            args.per_level, levels=[level], preset=args.preset, seed=args.seed + level, threads=2
        )
    done = load_done(args.out)
    if args.report_only:
        report(list(done.values()), on_gpu)
        return 0
    todo = [r for r in records if r["id"] not in done]
    opts = Options(device=args.device, timeout=args.timeout)
    workers = args.workers or (1 if on_gpu else 2)
    results = [done[r["id"]] for r in records if r["id"] in done]
    start = time.time()
    out = open(args.out, "a") if args.out else None
    try:
        for pairs in make_pairs(todo, 1, opts, workers):
            for p in pairs:
                results.append(p)
                if out:
                    out.write(json.dumps(p) + "\n")
                    out.flush()
            n = len(results)
            print(
                f"\r{n}/{len(records)} verified, {time.time() - start:.0f}s",
                end="",
                file=sys.stderr,
                flush=True,
            )
    finally:
        if out:
            out.close()
    print(file=sys.stderr)
    report(results, on_gpu)
    return 0


if __name__ == "__main__":
    sys.exit(main())

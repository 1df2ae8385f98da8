"""Acceptance of the template Triton generator (the teacher) on synthetic programs.

Synthesizes programs per level (number of operators), emits one candidate each with the
C++ generator, verifies it, and prints by level (drtriton.evaluate's tables): the share
accepted, and on a GPU fast_p (correct and more than p times faster, over all programs) and
geometric-mean speedups against eager and torch.compile (all three timed in the same
verifier run).  Operators of rejected or unsupported programs are listed.

    python benchmarks/teacher_acceptance.py --preset tiny --per-level 40            # CPU
    drtriton synth --preset paper --levels 1-5 --n 200 --out paper.jsonl                # CPU
    python benchmarks/teacher_acceptance.py --programs paper.jsonl --device cuda        # H200

`--generic-shapes` emits shape-generic candidates (sizes read at run time, drtriton.teach) and
adds, per level, the share of programs the generic mode applies to and the acceptance of the
candidates that are generic:

    python benchmarks/teacher_acceptance.py --preset tiny --levels 1-2 --generic-shapes

Issue 5's bar: tiny preset on the CPU interpreter >= 99% of level 1 and >= 95% of levels
2-5; paper preset on the H200 >= 95%.  `--out` keeps every pair record (with its verdict)
and makes a rerun resume where it stopped.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from typing import Any

from drtriton.evaluate import by_level, level_tables
from drtriton.evaluate.metrics import speedup
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
        "--envelope-max-gb",
        type=float,
        default=24.0,
        help="float64 evaluation of tasks up to this input size (verify.Options; its default 2 "
        "suits many verifications per GPU, this benchmark runs one or two)",
    )
    ap.add_argument(
        "--generic-shapes",
        action="store_true",
        help="shape-generic candidates; report where the generic mode applies, by level",
    )
    ap.add_argument(
        "--redo",
        default="",
        help="comma-separated verdict statuses (e.g. timeout,wrong_answer) whose records in --out "
        "are judged again (after a verifier fix); the new verdict is appended and counts",
    )
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


def load_done(path: str | None, redo: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """The records of `path` by id (the last one of an id counts), less those to judge again:
    not judged (harness out of memory) or with a status in `redo`."""
    done: dict[str, dict[str, Any]] = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip().endswith("}"):
                    rec = json.loads(line)
                    done[rec["id"]] = rec
    return {k: r for k, r in done.items() if not r.get("retry") and r.get("status") not in redo}


def report(results: list[dict[str, Any]]) -> None:
    """By level: accepted share, and on a GPU fast_p and geomeans against eager and
    torch.compile (the table of `drtriton eval`, drtriton.evaluate)."""
    for r in results:  # eager with PyTorch's TF32 defaults (verdict extra), as in drtriton eval
        r["speedup_vs_tf32"] = speedup(r.get("eager_tf32_ms"), r.get("time_ms"))
    print("\n".join(level_tables(by_level(results))))
    failing: collections.Counter[str] = collections.Counter()
    for r in results:
        if not r.get("correct"):
            for op in r.get("unsupported") or r["ops"]:
                failing[op] += 1
    if any("generic_shapes" in r for r in results):
        print("\n".join(generic_table(results)))
    if failing:
        print("operators in rejected or unsupported programs:", dict(failing.most_common()))
        for r in results:
            if not r.get("correct"):
                reason = r.get("reason") or r.get("error") or f"unsupported {r.get('unsupported')}"
                print(f"  {r['id']} L{r['level']} {r['ops']}: {r.get('status')}: {reason[:300]}")


def generic_table(results: list[dict[str, Any]]) -> list[str]:
    """Per level: programs whose candidate is shape-generic, their accepted share, and the
    operators that kept the others specialized."""
    lines = ["level  programs  generic        generic accepted  fallback operators"]
    for level in sorted({r["level"] for r in results}):
        rows = [r for r in results if r["level"] == level and r.get("completion") is not None]
        generic = [r for r in rows if r.get("generic_shapes")]
        accepted = sum(bool(r.get("correct")) for r in generic)
        blockers: collections.Counter[str] = collections.Counter()
        for r in rows:
            blockers.update(r.get("generic_unsupported") or [])
        share = f"{len(generic)} ({len(generic) / max(len(rows), 1):.0%})"
        ok = f"{accepted}/{len(generic)} ({accepted / max(len(generic), 1):.0%})"
        lines.append(f"L{level:<5} {len(rows):<9} {share:<14} {ok:<17} {dict(blockers)}")
    return lines


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
    redo = frozenset(x.strip() for x in args.redo.split(",") if x.strip())
    done = load_done(args.out, redo)
    if args.report_only:
        report(list(done.values()))
        return 0
    todo = [r for r in records if r["id"] not in done]
    opts = Options(device=args.device, timeout=args.timeout, envelope_max_gb=args.envelope_max_gb)
    workers = args.workers or (1 if on_gpu else 2)
    results = [done[r["id"]] for r in records if r["id"] in done]
    unjudged: list[dict[str, Any]] = []
    start = time.time()
    out = open(args.out, "a") if args.out else None
    try:
        for pairs in make_pairs(todo, 1, opts, workers, args.generic_shapes):
            for p in pairs:
                if p.get("retry"):  # neither accepted nor rejected; not saved, so a rerun retries
                    unjudged.append(p)
                    continue
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
    report(results)
    if unjudged:
        print(f"not judged (rerun with fewer --workers to retry): {len(unjudged)}")
        for p in unjudged:
            print(f"  {p['id']} L{p['level']}: {p['error'][:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

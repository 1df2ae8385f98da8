"""Frontend coverage over KernelBench: how many problems export, map fully to catalog
operators, and reproduce the module's outputs (issue 6, part 1).

    python benchmarks/frontend_coverage.py [--levels 1 2 3] [--timeout 20] [--jobs 2] [--map-only]
                                           [--training]

Each problem runs in its own process with a wall-clock limit: a problem whose equivalence
check does not finish within --timeout seconds on this CPU counts as skipped for that stage
(its export and mapping, reported as they finish, still count).  Prints per-level counts
and, with --details, one line per problem with its opaque operators or error.

--map-only exports on fake inputs of the problem's shapes (no memory, no random numbers: a
level-1 input of 1.6G elements otherwise takes minutes and 6.4 GB on a shared CPU before the
export starts) and skips the equivalence check; the export and mapping counts are the same.

--training exports in training mode, as KernelBench's evaluation runs the models (batch norm
with batch statistics, dropout's random mask); with --map-only only (the equivalence check
runs the module in eval mode).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

KERNELBENCH = Path("/work/shared/kernelbench")


def one(code: str, map_only: bool = False, training: bool = False) -> None:
    """Runs in the child: prints the record after each stage, so that a problem whose
    module is too slow to run on this CPU still counts as exported and mapped."""
    import warnings

    warnings.filterwarnings("ignore")
    from drtriton.frontend import check_equivalence, from_module_source

    record: dict = {"exported": False, "mapped": False, "equivalent": False}
    try:
        result = from_module_source(code, training=training, fake_inputs=map_only)
    except Exception as exc:
        record["error"] = f"export: {type(exc).__name__}: {str(exc)[:160]}"
        print(json.dumps(record), flush=True)
        return
    record.update(exported=True, mapped=result.fully_mapped, opaque=result.opaque_calls)
    print(json.dumps(record), flush=True)
    if map_only:
        return
    try:
        record["equivalent"] = check_equivalence(code, result).ok
    except Exception as exc:
        record["error"] = f"check: {type(exc).__name__}: {str(exc)[:160]}"
    record["checked"] = True
    print(json.dumps(record), flush=True)


def _last_record(stdout: str | bytes | None) -> dict | None:
    text = stdout.decode() if isinstance(stdout, bytes) else (stdout or "")
    lines = text.strip().splitlines()
    return json.loads(lines[-1]) if lines else None


def run_problem(problem: dict, timeout: float, map_only: bool, training: bool = False) -> dict:
    """The problem's record; `skipped` when the time ran out before the equivalence check
    finished (the stages it did finish still count)."""
    try:
        done = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                *(["--map-only"] if map_only else []),
                *(["--training"] if training else []),
            ],
            input=problem["code"],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        record = _last_record(done.stdout) or {"error": "child crashed"}
    except subprocess.TimeoutExpired as timeout_error:
        record = {**(_last_record(timeout_error.stdout) or {}), "skipped": True}
    except json.JSONDecodeError:
        record = {"error": "child crashed"}
    return {"level": problem["level"], "name": problem["name"], **record}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--details", action="store_true")
    parser.add_argument(
        "--map-only",
        action="store_true",
        help="export on fake inputs and skip the equivalence check (counts export and mapping)",
    )
    parser.add_argument(
        "--training", action="store_true", help="export in training mode (needs --map-only)"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.training and not args.map_only:
        parser.error("--training needs --map-only: the equivalence check runs in eval mode")
    if args.child:
        one(sys.stdin.read(), args.map_only, args.training)
        return
    problems = [
        json.loads(line)
        for level in args.levels
        for line in (KERNELBENCH / f"level{level}.jsonl").read_text().splitlines()
        if line.strip()
    ]
    with ThreadPoolExecutor(args.jobs) as pool:
        records = list(
            pool.map(lambda p: run_problem(p, args.timeout, args.map_only, args.training), problems)
        )
    opaque: Counter[str] = Counter()
    for level in args.levels:
        rows = [r for r in records if r["level"] == level]
        count = {
            k: sum(bool(r.get(k)) for r in rows)
            for k in ("exported", "mapped", "equivalent", "skipped")
        }
        print(
            f"level {level}: {len(rows)} problems, {count['exported']} export, {count['mapped']} map fully, "
            f"{count['equivalent']} reproduce outputs, {count['skipped']} skipped (> {args.timeout:g} s)"
        )
        for r in rows:
            opaque.update(set(r.get("opaque", [])))
            if args.details:
                print(
                    f"  {r['name']}: {json.dumps({k: v for k, v in r.items() if k not in ('level', 'name')})}"
                )
    print(
        "most common opaque calls (problems):",
        ", ".join(f"{k} {v}" for k, v in opaque.most_common(15)),
    )


if __name__ == "__main__":
    main()

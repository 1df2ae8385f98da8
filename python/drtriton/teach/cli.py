"""`drtriton teach PROGRAMS.jsonl --out PAIRS.jsonl [--variants K] [--verify] [--generic-shapes]`.

Writes one pair record per program (K per program with --variants): the program record plus
`completion`, the teacher's candidate, and with --verify the verdict's fields. `precision` is
the programs' mode (their field, fp32 without; --precision for records without one), which
--verify judges in: one mode per output file. Programs the generator cannot emit yet are
written with `completion: null` and `unsupported: [...]`, and summed up at the end, never
skipped silently.

Resumable: ids already in PAIRS.jsonl (whole lines only) are skipped, and each record is
appended as one write, so an interrupted run continues where it stopped.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from pathlib import Path
from typing import Any

from drtriton.cli_checks import (
    add_precision,
    device,
    output_file,
    positive_float,
    positive_int,
    require_visible,
)
from drtriton.files import removed_if_left_empty
from drtriton.jsonl import read_jsonl, require_precision, run_precision


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "teach",
        help="generate verified Triton kernels for programs with the template teacher",
        description=(
            "Emit Triton candidates for program records (JSONL from `drtriton synth`) with the "
            "C++ template generator; write pair records (program + completion [+ verdict])."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("programs", type=Path, help="program records (JSONL with id and source)")
    p.add_argument("--out", type=output_file, required=True, help="pair records (JSONL), appended")
    p.add_argument(
        "--variants",
        type=positive_int,
        default=1,
        help="distinct candidates per program (block sizes, fusion splits), >= 1",
    )
    p.add_argument("--verify", action="store_true", help="verify every candidate")
    p.add_argument(
        "--generic-shapes",
        action="store_true",
        help="emit candidates that read sizes at run time (same text for every shape of the "
        "program's rank); 2^31-element programs stay specialized, and each "
        "pair records whether the generic mode applied (`generic_shapes`)",
    )
    p.add_argument("--device", type=device, default="cpu", help="verifier device: cpu or cuda[:N]")
    p.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        help="parallel programs, >= 1 (default: cpus/2 on cpu, GPUs on cuda, 1 unverified)",
    )
    p.add_argument(
        "--timeout", type=positive_float, default=None, help="verifier seconds per candidate, > 0"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress line")
    # The pairs' mode, which --verify judges them in. The teacher's kernels are the same text in
    # every mode (loads convert to float32, outputs take the inputs' dtype).
    add_precision(p, from_records=True)
    p.set_defaults(func=run)


def _read_records(path: Path) -> list[dict[str, Any]]:
    return list(read_jsonl(path, required=("id", "source"), what="program record"))


def _done_programs(path: Path) -> set[str]:
    """Program ids with a whole line in `path` (variant ids map back to their program)."""
    done: set[str] = set()
    if not path.exists():
        return done
    with path.open("rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                continue  # torn last line: redo that program
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            done.add(str(record["id"]).split("#v")[0])
    return done


def run(args: argparse.Namespace) -> int:
    from drtriton.teach.pairs import make_pairs

    records = _read_records(args.programs)
    precision = run_precision(records, args.programs, args.precision)
    require_precision(args.out, precision, "pairs")
    done = _done_programs(args.out)
    # Every pair names its mode, verified or not (the verdict's own field says the same).
    todo = [{**r, "precision": precision} for r in records if str(r["id"]) not in done]
    opts = None
    if args.verify:
        from drtriton.verify import Options

        require_visible(args.device)
        opts = Options(device=args.device, timeout=args.timeout, precision=precision)
    workers = args.workers
    if workers is None:
        workers = 1
        if args.verify:
            workers = 1 if opts.on_cuda else max(1, (os.cpu_count() or 2) // 2)
    counts: collections.Counter[str] = collections.Counter()
    unsupported: collections.Counter[str] = collections.Counter()
    # A run that fails before its first record (a bad task, no sandbox) leaves no empty file.
    args.out.parent.mkdir(parents=True, exist_ok=True)  # --out's check allows a new directory
    with removed_if_left_empty(args.out):
        fd = os.open(args.out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            pairs_iter = make_pairs(todo, args.variants, opts, workers, args.generic_shapes)
            for n, pairs in enumerate(pairs_iter, 1):
                # One write per program: a killed run leaves whole programs only.
                os.write(fd, "".join(json.dumps(p) + "\n" for p in pairs).encode())
                for p in pairs:
                    counts[_outcome(p)] += 1
                    if args.generic_shapes:  # how many pairs got the generic mode
                        counts["generic"] += bool(p.get("generic_shapes"))
                    unsupported.update(p.get("unsupported") or [])
                if not args.no_progress:
                    print(
                        f"\rteach: {n}/{len(todo)} programs ({len(done)} already done) "
                        + " ".join(f"{k}={v}" for k, v in sorted(counts.items())),
                        end="",
                        file=sys.stderr,
                        flush=True,
                    )
        finally:
            os.close(fd)
    if not args.no_progress:
        print(file=sys.stderr)
    if unsupported:
        print(
            "unsupported operators (programs written with completion null): "
            + ", ".join(f"{op} x{c}" for op, c in unsupported.most_common()),
            file=sys.stderr,
        )
    return 0


def _outcome(pair: dict[str, Any]) -> str:
    if pair.get("completion") is None:
        return "unsupported" if pair.get("unsupported") else "error"
    return pair.get("status", "emitted")

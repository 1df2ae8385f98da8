"""`drtriton synth`: write N distinct synthetic programs to a JSONL file.

The file is written atomically (FILE.partial, fsync'd after every chunk, renamed when
complete) and an interrupted run resumes where it stopped: samples are pure functions of
(seed, index), so the resumed file is byte-identical to an uninterrupted one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from drtriton.cli_checks import add_precision, non_negative_int, output_file, positive_int
from drtriton.errors import UserError

DEFAULT_CHUNK = 256


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "synth",
        help="synthesize random PyTorch programs (CSP-DAG)",
        description=(
            "Synthesize distinct PyTorch programs with N compute operators each (the level), "
            "shapes solved by a constraint solver within the preset's bounds. Output: JSONL "
            "records with id, level, ops, source, flops, bytes, seed and precision (the mode "
            "the programs are to be verified in). Same arguments, same "
            "file, whatever --threads. An interrupted run resumes from FILE.partial."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--n", type=non_negative_int, required=True, help="number of programs (>= 0)")
    p.add_argument("--levels", default="1-5", help="levels: '1-5', '1,3,10' or '7'")
    p.add_argument(
        "--preset",
        default="paper",
        choices=["paper", "tiny"],
        help="paper: dims 1..2^15, elements 2^5..2^32, FLOPs 2^34..2^35 "
        "(Appendix B); tiny: runs in Triton's CPU interpreter",
    )
    p.add_argument("--seed", type=int, default=0, help="run seed")
    p.add_argument("--threads", type=positive_int, default=os.cpu_count() or 1,
                   help="worker threads (>= 1)")  # fmt: skip
    p.add_argument(
        "--processes",
        type=positive_int,
        default=1,
        help="worker processes, >= 1 (each with --threads threads); use processes beyond ~4 "
        "cores: Gecode serializes space allocation within a process",
    )
    p.add_argument("--out", type=output_file, required=True, help="output JSONL file")
    p.add_argument(
        "--stats",
        action="store_true",
        help="print per-operator frequencies and rejection rates to stderr",
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    p.add_argument(
        "--restart",
        action="store_true",
        help="discard an interrupted run's partial file instead of resuming it",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    # The programs' text is the same in every mode (the verifier casts their inputs): the mode
    # is a field of each record, which teach, sft-data, eval and rl verify them in.
    add_precision(p)
    bounds = p.add_argument_group("bounds (override the preset)")
    for name in _bound_names():
        bounds.add_argument(
            f"--{name.replace('_', '-')}",
            dest=f"bound_{name}",
            type=float,
            metavar="V",
            default=None,
            help=_BOUND_HELP.get(name, name),
        )
    p.set_defaults(func=run)


_BOUND_HELP = {
    "dim_min": "smallest tensor dimension",
    "dim_max": "largest tensor dimension",
    "elem_min": "fewest elements of a computed tensor",
    "elem_max": "most elements of any tensor",
    "flops_min": "least program FLOPs",
    "flops_max": "most program FLOPs",
    "max_rank": "highest tensor rank",
    "kernel_max": "largest conv/pool window per dim",
    "fail_limit": "solver failures per solve before resampling",
    "max_attempts": "DAGs tried per program before reporting impossible bounds",
}


def _bound_names() -> list[str]:
    try:
        from drtriton.synth import bound_names

        return bound_names()
    except ImportError:  # extension not built: --help still works
        return list(_BOUND_HELP)


def _config(args: argparse.Namespace) -> dict[str, Any]:
    overrides = {
        name: getattr(args, f"bound_{name}")
        for name in _bound_names()
        if getattr(args, f"bound_{name}", None) is not None
    }
    return {"levels": args.levels, "preset": args.preset, "seed": args.seed, "overrides": overrides,
            "precision": args.precision}  # fmt: skip


def _same_run(previous: dict[str, Any] | None, config: dict[str, Any]) -> bool:
    """Whether a partial file's arguments are this run's (runs from before --precision were
    fp32 runs)."""
    if isinstance(previous, dict):
        previous = {"precision": "fp32", **previous}
    return previous == config


def _read_partial(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Valid records of an interrupted run, and the byte length they span."""
    records: list[dict[str, Any]] = []
    good = 0
    with path.open("rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                break  # torn last write
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break
            records.append(record)
            good += len(line)
    return records, good


def run(args: argparse.Namespace) -> int:
    from drtriton.synth import Synthesizer

    out: Path = args.out
    partial = out.with_name(out.name + ".partial")
    meta = out.with_name(out.name + ".partial.json")
    if out.exists() and not args.force:
        raise UserError(f"{out} exists (use --force to overwrite)")
    if not out.parent.is_dir():
        raise UserError(f"directory {out.parent} does not exist")
    config = _config(args)
    synth = Synthesizer(
        config["levels"],
        config["preset"],
        config["seed"],
        args.threads,
        args.processes,
        **config["overrides"],
    )
    try:
        return _generate(args, synth, out, partial, meta, config)
    finally:
        synth.close()


def _generate(args, synth, out: Path, partial: Path, meta: Path, config: dict[str, Any]) -> int:
    from drtriton.synth.report import format_stats

    done: list[dict[str, Any]] = []
    if partial.exists() and not args.restart:
        previous = json.loads(meta.read_text()) if meta.exists() else None
        if not _same_run(previous, config):
            raise UserError(
                f"{partial} is from a run with other arguments ({previous}); "
                "use --restart to discard it"
            )
        # Every valid record is kept, also past --n: a rerun with a smaller --n must not throw
        # away finished programs, and the closing message says what the file holds.
        done, good = _read_partial(partial)
        with partial.open("r+b") as f:
            f.truncate(good)
        synth.resume(done)
        if done:
            print(f"resuming after {len(done)} programs in {partial}", file=sys.stderr)
    else:
        partial.write_bytes(b"")
        meta.write_text(json.dumps(config))

    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        total = max(args.n, len(done))
        bar = tqdm(total=total, initial=len(done), unit="prog", desc="synth", file=sys.stderr)
    chunk = max(DEFAULT_CHUNK, 64 * args.threads * args.processes)
    added = 0
    try:
        with partial.open("ab") as f:
            for batch in synth.stream(max(0, args.n - len(done)), chunk=chunk):
                f.write(b"".join(_line(r, args.precision) for r in batch))
                f.flush()
                os.fsync(f.fileno())
                added += len(batch)
                if bar:
                    bar.update(len(batch))
    except UserError:
        if partial.stat().st_size == 0:  # nothing worth resuming
            partial.unlink()
            meta.unlink(missing_ok=True)
        raise
    finally:
        if bar:
            bar.close()
    os.replace(partial, out)
    meta.unlink(missing_ok=True)
    dir_fd = os.open(out.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    print(_written(out, partial, len(done), added, args.n), file=sys.stderr)
    if args.stats:
        print(format_stats(synth.stats()), file=sys.stderr)
    return 0


def _line(record: dict[str, Any], precision: str) -> bytes:
    """One output line: the synthesizer's record and the run's precision mode."""
    return json.dumps({**record, "precision": precision}).encode() + b"\n"


def _written(out: Path, partial: Path, resumed: int, added: int, n: int) -> str:
    """What the output file holds and what this run added to it."""
    if resumed and not added and resumed >= n:
        return (f"{partial} already holds {resumed} programs (>= --n {n}): nothing to do; "
                f"{out} holds those {resumed}")  # fmt: skip
    if resumed:
        return f"wrote {resumed + added} programs to {out} ({resumed} resumed, {added} new)"
    return f"wrote {added} programs to {out}"

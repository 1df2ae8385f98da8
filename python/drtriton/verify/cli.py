"""`drtriton verify` and `drtriton verify-batch`.

Exit codes (DESIGN.md): 0 accepted, 1 rejected, 2 usage error (drtriton.errors.UserError, printed
by the top-level CLI without a traceback) or nothing judged (ResourceError: the harness ran out of
GPU memory). verify-batch exits 0 once every pair has a verdict, and 2 while a pair has an
`error` (its task or candidate is unusable) or was not judged (run it again).
"""

from __future__ import annotations

import argparse
import os
import sys

from drtriton.cli_checks import (
    add_precision,
    device,
    non_negative_float,
    non_negative_int,
    output_file,
    positive_float,
    positive_int,
)
from drtriton.errors import UserError
from drtriton.verify.options import Options


def _read(path: str, what: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError as exc:
        raise UserError(f"cannot read {what} {path!r}: {exc.strerror}") from exc


def _add_common(p: argparse.ArgumentParser, *, from_records: bool = False) -> None:
    # Ranges are checked while parsing (drtriton.cli_checks): before any candidate runs.
    p.add_argument("--device", type=device, default="cpu",
                   help="cpu (Triton interpreter, correctness only), cuda or cuda:N")  # fmt: skip
    p.add_argument(
        "--trials", type=positive_int, default=5, help="fresh input sets, >= 1 (default 5)"
    )
    p.add_argument("--timeout", type=positive_float, default=None,
                   help="wall-clock seconds per candidate, > 0 (default 120 on cpu, 300 on cuda)")  # fmt: skip
    add_precision(p, from_records=from_records)  # pairs say their own mode (verify-batch)
    p.add_argument("--atol", type=non_negative_float, default=None,
                   help=">= 0; default: the precision's (1e-4 fp32, 1e-2 otherwise)")  # fmt: skip
    p.add_argument("--rtol", type=non_negative_float, default=None,
                   help=">= 0; default: the precision's (1e-4 fp32, 1e-2 otherwise)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="base seed of inputs and initialisation")
    p.add_argument("--input-seed", type=non_negative_int, default=None,
                   help="draw the input sets from this seed, >= 0 (default: fresh per "
                   "verification; a verdict's input_seed reproduces its sets)")  # fmt: skip
    p.add_argument("--sandbox", default="auto", choices=["auto", "bwrap", "unshare", "none"])
    p.add_argument(
        "--runs",
        type=positive_int,
        default=30,
        help="GPU timing rounds at least, >= 1 (one call each of the candidate, eager and "
        "torch.compile, interleaved; more until the medians settle, up to 100)",
    )
    p.add_argument("--warmup", type=non_negative_int, default=3,
                   help="untimed calls of each before timing, >= 0")  # fmt: skip
    p.add_argument("--no-baselines", action="store_true", help="skip eager/torch.compile timing")
    p.add_argument("--launch-slack-us", type=non_negative_float,
                   default=Options.launch_slack_us,
                   help="GPU spin (us) between each timed call's L2 flush and its start event, "
                   "the host's time to launch the call before it is charged (default "
                   f"{Options.launch_slack_us:g}; 0: the flush alone, as KernelBench)")  # fmt: skip


def options_from(args: argparse.Namespace):
    from drtriton.verify.harness import Options

    if args.device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise UserError("--device cuda: no CUDA device is visible")
    if args.sandbox not in ("auto", "none"):
        from drtriton.verify import sandbox

        if not sandbox.works(args.sandbox):
            raise UserError(f"--sandbox {args.sandbox} does not work on this machine")
    return Options(
        device=args.device, trials=args.trials, timeout=args.timeout, atol=args.atol,
        rtol=args.rtol, seed=args.seed, sandbox=args.sandbox, runs=args.runs,
        warmup=args.warmup, baselines=not args.no_baselines,
        launch_slack_us=args.launch_slack_us, precision=args.precision or Options.precision,
        input_seed=args.input_seed,
    )  # fmt: skip


def run_verify(args: argparse.Namespace) -> int:
    from drtriton.verify.harness import verify

    task = _read(args.task, "task")
    candidate = _read(args.candidate, "candidate")
    verdict = verify(task, candidate, options_from(args))
    if args.json:
        print(verdict.to_json())
    else:
        line = f"{verdict.status}: {verdict.reason}"
        if verdict.status == "wrong_answer" and "input_seed" in verdict.extra:
            line += f" (--input-seed {verdict.extra['input_seed']} draws these sets again)"
        if verdict.precision != "fp32":
            line += f" [{verdict.precision}]"
        if verdict.time_ms is not None:
            line += f"\ntime {verdict.time_ms:.4f} ms, eager {verdict.eager_ms} ms, "
            line += f"compile {verdict.compile_ms} ms, speedup {verdict.speedup}"
            graph = verdict.extra.get("graph_ms")
            if graph is not None:
                line += f"\nCUDA-graph replay {graph:.4f} ms, eager {verdict.extra.get('eager_graph_ms')} ms"
        print(line)
    return verdict.exit_code


def run_batch(args: argparse.Namespace) -> int:
    from drtriton.verify.batch import pairs_precision, tally
    from drtriton.verify.batch import run_batch as batch

    if not os.path.exists(args.pairs):
        raise UserError(f"cannot read pairs {args.pairs!r}: no such file")
    opts = options_from(args)
    opts.precision = pairs_precision(args.pairs, args.precision)  # before anything is written
    args.out.parent.mkdir(parents=True, exist_ok=True)  # --out's check allows a new directory
    done, _ = batch(args.pairs, str(args.out), opts, workers=args.workers, progress=not args.quiet)
    counts = tally(args.pairs, str(args.out))  # the whole file's state: a resumed run's too
    print(counts.summary(done, str(args.out)), file=sys.stderr)
    return counts.exit_code


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("verify", help="judge one Triton candidate against its task")
    p.add_argument("task", help="task file (functional fused_operator or KernelBench Model)")
    p.add_argument("candidate", help="candidate file (triton_fused_operator or ModelNew)")
    p.add_argument("--json", action="store_true", help="print the verdict as one JSON object")
    _add_common(p)
    p.set_defaults(func=run_verify)

    b = subparsers.add_parser("verify-batch", help="judge many (task, candidate) pairs; resumable")
    b.add_argument(
        "pairs", help="JSONL: id, task or source (text or path), candidate or completion"
    )
    b.add_argument(
        "--out",
        type=output_file,
        required=True,
        help="results JSONL (appended; ids already there are skipped)",
    )
    b.add_argument("--workers", type=positive_int, default=None,
                   help="parallel verifications, >= 1 (default: GPUs visible, or CPU cores)")  # fmt: skip
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_common(b, from_records=True)
    b.set_defaults(func=run_batch)

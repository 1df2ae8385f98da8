"""`drtriton eval kernelbench | synthetic | summarize`: the benchmark that proves the product.

    drtriton eval kernelbench PROBLEMS.jsonl --out DIR [--device cuda] [--levels 1,2] ...
    drtriton eval synthetic PROGRAMS.jsonl --out DIR [--policy template|hf:PATH] ...
    drtriton eval summarize DIR

Each writes DIR/results.jsonl, DIR/summary.md (by level: correct %, fast_p at p = 0, 1, 1.5,
2 against eager and torch.compile, geometric-mean speedups) and DIR/speedup.png.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from drtriton import cli_checks as c
from drtriton.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "eval",
        help="evaluate on KernelBench problems or held-out synthetic programs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="eval_command", metavar="WHAT", required=True)
    _register_kernelbench(sub)
    _register_synthetic(sub)
    s = sub.add_parser("summarize", help="rebuild summary.md and speedup.png from results.jsonl",
                       description="Rebuild DIR/summary.md and DIR/speedup.png from "
                       "DIR/results.jsonl (e.g. after copying results back from a GPU machine).")  # fmt: skip
    s.add_argument("dir", type=_evaluation_dir,
                   help="an evaluation directory (holds results.jsonl)")  # fmt: skip
    s.set_defaults(func=run_summarize)


def _evaluation_dir(text: str) -> Path:
    """An existing directory that summarize can write summary.md and speedup.png into."""
    path = c.output_dir(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: not a directory")
    return path


def _common(p: argparse.ArgumentParser, workers_help: str, *, records: bool = False) -> None:
    """The options of both evaluations; `records`: the inputs are program records, which name
    their own precision mode."""
    # Paths and numbers are checked while parsing: a bad one fails before any problem runs.
    p.add_argument("--out", type=c.output_dir, required=True,
                   help="output directory; a rerun with the same directory resumes")  # fmt: skip
    p.add_argument("--device", type=c.device, default="cpu",
                   help="cpu (default; Triton interpreter, correctness only) or cuda (every visible GPU, "
                   "round-robin) or cuda:N")  # fmt: skip
    p.add_argument("--workers", type=c.positive_int, default=None,
                   help=workers_help + "; >= 1")  # fmt: skip
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    c.add_precision(p, from_records=records)


def _register_kernelbench(sub: argparse._SubParsersAction) -> None:
    from drtriton.evaluate import memory  # no torch at import: --help stays fast
    from drtriton.evaluate.kernelbench import TIMEOUT_S_PER_GB

    k = sub.add_parser(
        "kernelbench",
        help="optimize and measure KernelBench problems",
        description="Optimize each problem with `drtriton optimize`'s search (each in its own "
        "process with a wall-clock limit) and verify the result KernelBench's way.",
    )
    k.add_argument("problems", type=Path,
                   help="KernelBench problems (JSONL: level, problem_id, name, code)")  # fmt: skip
    _common(
        k, "parallel problems, each in its own process (default: one per GPU on cuda, 1 on cpu)"
    )
    k.add_argument("--levels", default=None, help="levels to run, e.g. 1,2 or 1-3 (default: all)")
    k.add_argument("--limit", type=c.positive_int, default=None,
                   help="first N problems of each level, N >= 1")  # fmt: skip
    k.add_argument("--order", default="interleaved", choices=["interleaved", "level"],
                   help="interleaved (default): a problem of each level in turn, so a time budget "
                   "cuts every level alike; level: level by level")  # fmt: skip
    k.add_argument("--problem-timeout", type=c.positive_float, default=600.0,
                   help="wall-clock seconds per problem (> 0; optimize + verify); past it the "
                   "problem is a recorded timeout (default: %(default)g)")  # fmt: skip
    k.add_argument("--timeout-per-gb", type=c.non_negative_float, default=TIMEOUT_S_PER_GB,
                   help="seconds added to a problem's timeout per GB of its inputs, parameters "
                   "and outputs (read on the meta device; moving them is most of a large "
                   "problem's time); 0 turns it off (default: %(default)g)")  # fmt: skip
    k.add_argument("--time-budget", type=c.positive_float, default=None,
                   help="seconds (> 0) after which no new problem starts (the rest is listed as not "
                   "run; the run ends at most one problem timeout later)")  # fmt: skip
    k.add_argument(
        "--max-ops",
        type=c.positive_int,
        default=5,
        help="longest fused fragment, in operators, >= 1 (default: %(default)s); a run of "
        "at most 12 operators is also tried whole",
    )
    k.add_argument(
        "--k",
        type=c.positive_int,
        default=2,
        help="candidates asked of the policy per fragment, >= 1 (default: %(default)s)",
    )
    k.add_argument(
        "--seed", type=int, default=0, help="verifier and search seed (default: %(default)s)"
    )
    k.add_argument("--rerun-oom", action="store_true",
                   help="run again the recorded problems that are not correct and ran out of GPU "
                   "memory somewhere (several problems shared the GPU): resume with fewer "
                   "--workers to give them room; the new record replaces the old")  # fmt: skip
    k.add_argument("--memory-share", type=c.unit_interval, default=memory.SHARE,
                   help="GPU: a problem starts only while the estimated footprints of the "
                   f"problems on its GPU ({memory.COPIES}x their inputs and parameters or "
                   f"{memory.IO_COPIES}x those and the outputs, whichever is larger, read on the "
                   "meta device) fit in this share (0..1) of the GPU's memory; an idle GPU "
                   "takes any problem, and one that runs out of memory beside others runs once "
                   "more alone; 0 turns this off (default: %(default)s)")  # fmt: skip
    k.add_argument("--keep-slower", action="store_true",
                   help="keep a problem's least slow verified kernel when none beats PyTorch "
                   "(KernelBench's correctness counts any correct kernel; fast_p still "
                   "measures speed)")  # fmt: skip
    k.add_argument("--batch-norm-kernels", action=argparse.BooleanOptionalAction, default=None,
                   help="let kernels compute batch norm's batch statistics (OptimizeConfig."
                   "batch_norm_kernels, on by default); --no-batch-norm-kernels keeps them "
                   "PyTorch calls")  # fmt: skip
    k.set_defaults(func=run_kernelbench)


def _register_synthetic(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "synthetic",
        help="a policy on held-out synthetic programs, by level",
        description="Ask a policy for candidates for each program record (from `drtriton "
        "synth`), verify them (verify-batch), and tabulate by level.",
    )
    s.add_argument("programs", type=Path, help="program records (JSONL: id, level, source)")
    _common(
        s,
        "parallel verifications (default: one per GPU on cuda, half the cores on cpu)",
        records=True,
    )
    s.add_argument("--policy", type=c.policy_spec, default="template",
                   help="`template` (the C++ teacher, default) or `hf:PATH` (a local checkpoint)")  # fmt: skip
    s.add_argument("--variants", type=c.positive_int, default=1,
                   help="candidates per program, >= 1; a program counts as its best (default: 1)")  # fmt: skip
    s.add_argument(
        "--timeout",
        type=c.positive_float,
        default=None,
        help="verifier seconds per candidate, > 0 (default: the verifier's)",
    )
    s.set_defaults(func=run_synthetic)


def parse_levels(text: str | None) -> list[int] | None:
    """ "1,2", "1-3" or None (all) → level numbers; a UserError for anything else."""
    if text is None:
        return None
    levels: list[int] = []
    try:
        for part in text.split(","):
            lo, sep, hi = part.strip().partition("-")
            levels += list(range(int(lo), int(hi) + 1)) if sep else [int(lo)]
    except ValueError:
        raise UserError(f"--levels {text!r}: expected numbers like 1,2 or 1-3") from None
    if not levels or any(lv < 1 for lv in levels):
        raise UserError(f"--levels {text!r}: levels are positive numbers")
    return sorted(set(levels))


def run_kernelbench(args: argparse.Namespace) -> int:
    from drtriton.evaluate.kernelbench import RunConfig, load_problems
    from drtriton.evaluate.kernelbench import run_kernelbench as run

    problems = load_problems(args.problems, parse_levels(args.levels), args.limit, args.order)
    cfg = RunConfig(device=args.device, workers=args.workers, problem_timeout=args.problem_timeout,
                    timeout_s_per_gb=args.timeout_per_gb, time_budget=args.time_budget,
                    max_ops=args.max_ops, k=args.k, seed=args.seed,
                    rerun_oom=args.rerun_oom, memory_share=args.memory_share,
                    keep_slower=args.keep_slower, precision=args.precision,
                    batch_norm_kernels=args.batch_norm_kernels)  # fmt: skip
    outcome = run(problems, args.out, cfg, source=str(args.problems), progress=not args.no_progress)
    print(f"ran {outcome.ran} problems now; {outcome.results} results in {args.out}, "
          f"{outcome.not_run} not run; summary: {outcome.summary}")  # fmt: skip
    return 0


def run_synthetic(args: argparse.Namespace) -> int:
    from drtriton.evaluate.synthetic import run_synthetic as run

    summary = run(args.programs, args.out, policy=args.policy, variants=args.variants,
                  device=args.device, workers=args.workers, timeout=args.timeout,
                  progress=not args.no_progress, precision=args.precision)  # fmt: skip
    print(f"summary: {summary}")
    return 0


def run_summarize(args: argparse.Namespace) -> int:
    from drtriton.evaluate.kernelbench import summarize_dir

    if not args.dir.is_dir():
        raise UserError(f"{args.dir}: not a directory")
    print(f"summary: {summarize_dir(args.dir)}")
    return 0

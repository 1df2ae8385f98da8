"""`drtriton optimize MODEL.py`: the product's main command."""

from __future__ import annotations

import argparse
import json
import os
import sys

from drtriton.cli_checks import add_precision, device, output_file, positive_float, positive_int
from drtriton.errors import UserError
from drtriton.files import write_text_atomic

HELP = """\
Optimize a PyTorch model (KernelBench format: Model, get_inputs, get_init_inputs) into a
verified hybrid ModelNew: fused Triton kernels where they pay, PyTorch elsewhere.

Cost model: on a GPU (--device cuda) every candidate kernel is timed by the verifier and the
search keeps the fastest measured cover; the report gives speedups vs eager PyTorch and
torch.compile.  On the CPU (--device cpu) kernels run in Triton's interpreter, which judges
correctness only: costs are modelled memory traffic (bytes), so operators are fused exactly
where that keeps intermediates out of memory, and the report shows modelled bytes, not times.

Shapes: where the chosen kernels have a form that reads sizes at run time, ModelNew's kernels
serve any batch size (dim 0 of the inputs), verified at the example batch b, at 2b+1 and at
1; else the example shapes only. Any call they do not serve (another shape or dtype, the
other train/eval mode where the output depends on it, CPU inputs without TRITON_INTERPRET=1)
runs Model's own forward, with a one-time warning. The report says which shapes are served.

Exit codes: 0 the final ModelNew was verified correct, 1 it was not (or no kernel was
worth it, or on a GPU the whole ModelNew ran slower than Model's eager forward: none is
written unless --keep-slower), 2 a usage error (missing file, not a model task, torch.export
failure)."""


def _atomic_write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_text_atomic(path, text)


def _read_model(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError as exc:
        raise UserError(f"cannot read model {path!r}: {exc.strerror}") from exc


def _check_device(device: str) -> None:
    if device != "cpu" and not device.startswith("cuda"):
        raise UserError(f"--device must be cpu or cuda[:N], not {device!r}")
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise UserError("--device cuda: no CUDA device is visible")


def run_optimize(args: argparse.Namespace) -> int:
    from drtriton.optimize import OptimizeConfig, optimize_source

    code = _read_model(args.model)
    _check_device(args.device)
    chosen = (
        {} if args.batch_norm_kernels is None else {"batch_norm_kernels": args.batch_norm_kernels}
    )
    config = OptimizeConfig(device=args.device, mode=args.mode, max_ops=args.max_ops, k=args.k,
                            time_budget_s=args.time_budget, seed=args.seed,
                            keep_slower=args.keep_slower, precision=args.precision,
                            any_batch=not args.example_shapes_only, **chosen)  # fmt: skip

    def progress(msg: str) -> None:
        if not args.json:
            print(f"[optimize] {msg}", file=sys.stderr, flush=True)

    result = optimize_source(code, config, progress)
    if result.model_new is not None and args.out:
        _atomic_write(args.out, result.model_new)
    if args.report:
        _atomic_write(args.report, result.report_markdown())
    if args.json:
        print(json.dumps({k: v for k, v in vars(result).items() if k != "model_new"}))
    else:
        _print_summary(result, args)
    return 0 if result.correct else 1


def _print_summary(result, args: argparse.Namespace) -> None:
    verdict = result.verdict or {}
    fused = [s for s in result.segments if s["fused"]]
    print(f"{len(fused)} fused fragment(s), {len(result.segments) - len(fused)} segment(s) left "
          f"in PyTorch, {result.seconds:.1f} s")  # fmt: skip
    if result.error:
        print(f"no verified model: {result.error}")
    if verdict:
        line = f"verdict: {verdict['status']}: {verdict.get('reason', '')}"
        if verdict.get("precision", "fp32") != "fp32":
            line += f" [{verdict['precision']}]"
        if verdict.get("speedup") is not None:
            line += f"; speedup {verdict['speedup']:.2f}x vs eager"
            if verdict.get("speedup_vs_compile") is not None:
                line += f", {verdict['speedup_vs_compile']:.2f}x vs torch.compile"
        print(line)
    if result.model_new is not None and args.out:
        print(f"wrote {args.out}")
    if args.report:
        print(f"wrote {args.report}")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "optimize",
        help="a PyTorch model → a verified hybrid ModelNew with fused Triton kernels",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", help="model file: Model, get_inputs, get_init_inputs (KernelBench)")
    # Paths and numbers are checked while parsing: a bad one fails before the search, not after.
    p.add_argument("--out", type=output_file,
                   help="where to write the ModelNew file (written atomically)")  # fmt: skip
    p.add_argument("--report", type=output_file, help="where to write the Markdown report")
    p.add_argument("--device", type=device, default="cpu",
                   help="cpu (interpreter, modelled costs), cuda or cuda:N")  # fmt: skip
    p.add_argument("--mode", default="eval", choices=["eval", "train"],
                   help="export and verify in eval mode (deployment, default) or training mode "
                   "(KernelBench's evaluation)")  # fmt: skip
    p.add_argument("--max-ops", type=positive_int, default=5,
                   help="longest fused fragment, >= 1 (default 5); a run of at most 12 "
                        "operators is also tried whole")  # fmt: skip
    p.add_argument("--k", type=positive_int, default=2,
                   help="candidates per fragment, >= 1 (default 2)")  # fmt: skip
    p.add_argument("--time-budget", type=positive_float, default=None,
                   help="seconds of search, > 0; the best cover found by then is kept")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="initialisation and input seed")
    p.add_argument("--keep-slower", action="store_true",
                   help="when no fused kernel beats PyTorch, keep the verified one that loses "
                   "least (benchmarks count any correct kernel; a deployment should not)")  # fmt: skip
    p.add_argument("--batch-norm-kernels", action=argparse.BooleanOptionalAction, default=None,
                   help="--mode train: batch norm's batch statistics may be computed by kernels "
                   "(the catalog's batch_norm_train; OptimizeConfig.batch_norm_kernels, on by "
                   "default); --no-batch-norm-kernels keeps them a PyTorch call")  # fmt: skip
    p.add_argument("--example-shapes-only", action="store_true",
                   help="skip the kernels that read the batch size at run time (and their "
                   "verifications at other batch sizes): ModelNew then serves the example "
                   "shapes only, other shapes run Model's forward")  # fmt: skip
    add_precision(p)
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=run_optimize)

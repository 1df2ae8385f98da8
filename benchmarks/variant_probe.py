"""Which of the teacher's schedule variants is fastest on a problem? (run on the H200)

    python benchmarks/variant_probe.py --device cuda --ids 34 98 100
    TRITON_INTERPRET=1 python benchmarks/variant_probe.py --ids 40 --cap 64   # the CPU: errors only
    python benchmarks/variant_probe.py --device cuda --problems level2.jsonl --ids 7 8 \
        --precision bf16 --products --pointer    # convolutions: TMA kernel against pointer one

Why: the teacher picks one schedule per shape (core/codegen/heuristics.cc); `--variants` gives
three more (other tiles, warps and row blocks) that the search and RL choose among. Where a
level-1 problem misses torch.compile, the first question is whether another of those schedules
already wins (then the heuristic should pick it) or none does (then the kernel's structure is
the gap). KernelBench L1 34 (instance norm, 7,168 rows of 262,144) ran its default schedule,
8,192-element blocks over 16 warps with 80 registers (one program per SM), at 7.04 ms against
torch.compile's 6.00 (h200-2026-12-03-e).

What it does: for each problem (the frontend's functional program, as memory_bound_speed.py
builds it), every distinct variant's candidate, eager and torch.compile are timed together by
the verifier's `time_tasks` (one exclusive hold, calls interleaved round by round, L2 flushed,
events), in groups of two variants so that the inputs of a 7.5 GB problem fit beside each
other. Each candidate's output on the first input set is compared with eager's: the largest
difference relative to the largest reference magnitude (a screen, not the verifier's rule).
Prints one row per variant: its time, eager / it and compile / it, and the error.

`--precision` times and compares in a verifier mode (bf16: inputs and weights cast, as the
verifier judges). `--products` keeps problems with contractions too. `--pointer` adds, for each
candidate that launches a TMA kernel behind a guard (`kN_tma = ...`), the same candidate with
every such guard forced off (variant `Np`): its pointer-loaded kernels. Why: in bf16 on the
H100 (results/h100-2026-12-06e) KernelBench L2 8's conv3d (8 input channels, 16 output) ran
3.64-4.23 ms against eager's 3.40 on the shifted-rows TMA kernel, where its pointer kernel's
candidate had run 1.47 ms on 12-05; the two had not been timed side by side.
Where a training batch norm takes its statistics from a contraction's tiles on request
(core/codegen/codegen.h CodegenOptions::column_stats), variant 0's candidate with them is
timed too, as variant `0s`.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
# The source tree's package, unless PYTHONPATH names another copy (a private build's _core).
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402

from drtriton.errors import UserError  # noqa: E402
from drtriton.teach import emit  # noqa: E402
from drtriton.verify.measure import time_tasks  # noqa: E402
from drtriton.verify.precision import mode  # noqa: E402
from drtriton.verify.task import load_task  # noqa: E402
from memory_bound_speed import classify, load_problems  # noqa: E402

VARIANTS = (0, 1, 2, 3)  # core/codegen/heuristics.h: kNumVariants
GROUP = 2  # variants timed in one hold beside eager and torch.compile


def inputs_of(program: str) -> str:
    """The `def get_inputs` block of a functional program (the tasks below share it)."""
    return program[program.index("def get_inputs") :]


def as_task(candidate: str, program: str) -> str:
    """A trusted task whose fused_operator is the teacher's candidate (time_tasks times tasks)."""
    return (candidate + "\n\ndef fused_operator(*args):\n    return triton_fused_operator(*args)"
            "\n\n\n" + inputs_of(program))  # fmt: skip


def compiled_task(program: str) -> str:
    return program + "\n\nfused_operator = torch.compile(fused_operator)\n"


def without_tma(candidate: str) -> str | None:
    """The candidate with every TMA guard forced off; None when it has none."""
    forced, count = re.subn(r"^(\s+k\d+_tma = )", r"\1False and ", candidate, flags=re.M)
    return forced if count else None


def relative_error(task: str, program: str, device: str, precision: str = "fp32") -> float:
    """max |candidate - eager| / max |eager| on input set 0 (both in `precision`'s mode)."""
    dev, m = torch.device(device), mode(precision)
    with torch.no_grad():
        reference = load_task(program)
        ref = reference.build_reference(dev, 0, mode=m)
        inputs = reference.make_inputs(0, 0, dev, m)
        # Loaded last: the CPU interpreter reads kernels back from the last task's text.
        got = load_task(task).build_reference(dev, 0, mode=m)
        want = ref(*inputs).double()
        have = got(*inputs).double()
    scale = want.abs().max().item() or 1.0
    return (have - want).abs().max().item() / scale


def candidates(
    program: str, pointer: bool, wanted: tuple[int, ...] = VARIANTS
) -> list[tuple[int | str, str]]:
    """(variant, candidate text) for each distinct variant; with `pointer`, each TMA
    candidate's pointer twin follows it as variant `Np`. UserError when none is emitted."""
    texts: dict[str, int | str] = {}  # candidate text -> the first variant that emits it
    for variant in wanted:
        texts.setdefault(emit(program, variant=variant), variant)
        if variant == 0:  # with column statistics (`0s`), where a batch norm pairs
            texts.setdefault(emit(program, variant=0, column_stats=True), "0s")
    out: list[tuple[int | str, str]] = []
    for text, variant in texts.items():
        out.append((variant, text))
        forced = without_tma(text) if pointer else None
        if forced is not None:
            out.append((f"{variant}p", forced))
    return out


def probe(record: dict[str, Any], opts: argparse.Namespace) -> list[dict[str, Any]]:
    device, runs, precision = opts.device, opts.runs, opts.precision
    kept = classify(record["code"], training=opts.training)
    name = record["name"]
    wanted = ("memory", "product") if opts.products else ("memory",)
    if kept["kind"] not in wanted or not kept.get("program"):
        return [{"problem": name, "status": kept["kind"], "ops": kept.get("opaque")}]
    program = kept["program"]
    try:
        texts = candidates(program, opts.pointer, tuple(opts.variants))
    except UserError as exc:
        return [{"problem": name, "status": "no_kernel", "reason": str(exc)}]
    rows = []
    variants = [(v, as_task(text, program)) for v, text in texts]
    for start in range(0, len(variants), GROUP):
        group = variants[start : start + GROUP]
        if device == "cpu":  # no timing without a GPU
            times = [{} for _ in range(2 + len(group))]
        else:
            times = time_tasks([program, compiled_task(program), *(t for _, t in group)],
                               device, runs=runs, precision=precision)  # fmt: skip
        eager_ms, compile_ms = times[0].get("median"), times[1].get("median")
        for (variant, task), timed in zip(group, times[2:], strict=True):
            ms = timed.get("median")
            rows.append({"problem": name, "variant": variant, "status": "timed" if ms else "run",
                         "ms": ms, "eager_ms": eager_ms, "compile_ms": compile_ms,
                         "vs_eager": eager_ms / ms if ms and eager_ms else None,
                         "vs_compile": compile_ms / ms if ms and compile_ms else None,
                         "precision": precision,
                         "error": relative_error(task, program, device, precision)})  # fmt: skip
        if device != "cpu":
            torch.cuda.empty_cache()
    return rows


def fmt(v: Any, spec: str) -> str:
    width = int(spec.split(".")[0] or 0)
    return "-".rjust(width) if v is None else format(v, spec)


def print_rows(rows: list[dict[str, Any]]) -> None:
    print(f"{'problem':<34} {'var':>3} {'ms':>8} {'eager':>8} {'compile':>8} "
          f"{'vs eager':>8} {'vs comp':>8} {'error':>8}")  # fmt: skip
    for r in rows:
        if "variant" not in r:
            print(f"{r['problem'][:34]:<34}   {r['status']}: {r.get('reason') or r.get('ops')}")
            continue
        print(f"{r['problem'][:34]:<34} {r['variant']!s:>3} {fmt(r['ms'], '8.3f')} "
              f"{fmt(r['eager_ms'], '8.3f')} {fmt(r['compile_ms'], '8.3f')} "
              f"{fmt(r['vs_eager'], '8.3f')} {fmt(r['vs_compile'], '8.3f')} "
              f"{fmt(r['error'], '8.1e')}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--problems",
        type=pathlib.Path,
        default=ROOT / ".devdata" / "kernelbench" / "level1.jsonl",
        help="KernelBench problems (jsonl; default: .devdata's level 1)",
    )
    parser.add_argument("--ids", type=int, nargs="+", required=True, help="problem ids")
    parser.add_argument("--device", default="cpu", help="cuda times; cpu checks only")
    parser.add_argument(
        "--cap", type=int, default=None, help="shrink every dimension to at most this (CPU runs)"
    )
    parser.add_argument("--runs", type=int, default=10, help="minimum timed rounds")
    parser.add_argument("--out", default=None, help="write the rows as JSON here")
    parser.add_argument(
        "--precision",
        default="fp32",
        choices=("fp32", "tf32", "bf16", "fp16"),
        help="the verifier mode timed and compared in (default fp32)",
    )
    parser.add_argument(
        "--variants",
        type=int,
        nargs="+",
        default=list(VARIANTS),
        choices=VARIANTS,
        help="the schedule variants timed (default all)",
    )
    parser.add_argument(
        "--products",
        action="store_true",
        help="keep problems with contractions (GEMMs, convolutions) too",
    )
    parser.add_argument(
        "--training",
        action="store_true",
        help="the module in training mode, as KernelBench's evaluation runs it (batch norm "
        "with batch statistics); default eval mode",
    )
    parser.add_argument(
        "--pointer",
        action="store_true",
        help="also time each TMA candidate with its TMA guards forced off",
    )
    args = parser.parse_args(argv)
    try:
        problems = load_problems(args.problems, args.ids, args.cap)
    except UserError as exc:
        print(f"variant_probe: {exc}", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    for record in problems:
        found = probe(record, args)
        rows += found
        print_rows(found)  # as each problem ends: a long run cut short keeps what it measured
        sys.stdout.flush()
        if args.out:
            pathlib.Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

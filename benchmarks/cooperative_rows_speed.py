"""Softmax and the norms over long rows: the teacher's cooperative kernel (each element read once
and written once; core/codegen/rows_coop.cc) against its two-pass loop (read twice, written
once) and, optionally, the split pair the cooperative kernel falls back to, with eager PyTorch
and torch.compile timed in the same hold (issue 20).

    python benchmarks/cooperative_rows_speed.py --device cuda --out coop.json       # H200
    python benchmarks/cooperative_rows_speed.py --device cpu --cases softmax:2x70000  # smoke

What it settles: heuristics.h kCooperativeMinRow, the row length from which the cooperative
schedule is the teacher's default (65,536 elements, a guess: below it the loop's second read may
come from L2).  The default cases are softmax over rows of 16K to 384K elements, 512M elements
in all (2 GB), and KernelBench L1 23's, 34's and 35's shapes (softmax, instance norm, group
norm; 6.4-7.5 GB).  Schedules, by teacher variant: `coop` (variant 0), `loop` (variant 1, which
never cooperates; below the cooperative row length variant 0 loops too, so its column repeats
the loop's), `split` (variant 0 with the cooperative launch switched off in the wrapper: the
statistics kernel, then the output kernel), `wide` (variant 2: rows of up to 16,384 in one
pass, longer ones looped in blocks of 16,384; what the loop block under the cooperative length
should be is the open question), `fwd` and `loop_fwd` (variants 0 and 1 with the loop's write
pass walking the row forward, as it did before it walked from the row's end).  Predicted on
the H200: the cooperative kernel near the two-transfer bound, ~1.3-1.45x the loop from the rows
the L2 stops serving, and no faster below them.

Each schedule's candidate goes to the verifier (drtriton.verify with the torch.compile baseline:
L2 flushed before every call, CUDA events, trimmed means), so a time is printed only for a
candidate judged correct. GB/s counts each input element read once and each output element
written once; `% copy` is that against the copy bandwidth measured in the same run. On the CPU
(Triton's interpreter) nothing is timed, and the cooperative kernel cannot run there (programs
run one after another: tests/teach/test_cooperative_rows.py runs it on threads): the smoke mode
verifies the candidates of small cases, which take the split pair. Prints one table; --out
writes the rows as JSON (atomically, after every case). Exit 1 when a candidate is rejected,
2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from drtriton.errors import UserError  # noqa: E402
from drtriton.program import parse  # noqa: E402
from drtriton.teach import emit  # noqa: E402
from drtriton.verify import Options, verify  # noqa: E402
from memory_bound_speed import copy_bandwidth, fmt, write_json  # noqa: E402

# op -> its program line over x0.  instance_norm's rows are (sample, channel) planes: ROWSxR is
# read as (ROWS, 1, R), one channel.
OPS = {
    "softmax": "torch.softmax(x0, -1)",
    "log_softmax": "torch.log_softmax(x0, -1)",
    "instance_norm": "F.instance_norm(x0)",
}
# KernelBench L1 23, 34, 35 at their own shapes (programs as the frontend maps them).
KERNELBENCH = {
    "L1_23_softmax": ("t0 = torch.softmax(x0, 1)", "x0", "torch.rand(4096, 393216)"),
    "L1_34_instance_norm": (
        "t0 = F.instance_norm(x0)",
        "x0",
        "torch.rand(112, 64, 512, 512)",
    ),
    "L1_35_group_norm": (
        "t0 = F.group_norm(x0, 8, x1, x2)",
        "x0, x1, x2",
        "torch.rand(112, 64, 512, 512), torch.rand(64), torch.rand(64)",
    ),
}
DEFAULT_CASES = [
    f"softmax:{(1 << 29) // r}x{r}" for r in (16384, 32768, 65536, 131072, 262144, 393216)
]
SCHEDULES = ("coop", "loop", "split", "wide", "fwd", "loop_fwd")
# Teacher variant per schedule (split is variant 0 with the cooperative launch switched off;
# fwd and loop_fwd are variants 0 and 1 with the loop's write pass walking forward).
VARIANT = {"coop": 0, "loop": 1, "split": 0, "wide": 2, "fwd": 0, "loop_fwd": 1}
# The wrapper's switch between the cooperative kernel and the split pair (rows_coop.cc).
COOP_SWITCH = "_coop = "
# The write pass's block start, walking from the row's end (emit_rows.cc WriteBlocks), and
# the forward walk's (block r0) that `fwd` puts in its place: whether the reversed walk's
# reads from L2 pay is what the pair measures.
FROM_END = re.compile(r"rb = \d+ - r0$", re.MULTILINE)


def program(lines: str, args: str, inputs: str) -> str:
    return (
        "import torch\nimport torch.nn.functional as F\n\n"
        f"def fused_operator({args}):\n    {lines}\n    return t0\n\n"
        f"def get_inputs():\n    return [{inputs}]\n"
    )


def case_program(case: str) -> tuple[str, str]:
    """(label, program) of `op:ROWSxR` or a KernelBench shape's name."""
    if case in KERNELBENCH:
        return case, program(*KERNELBENCH[case])
    op, _, shape = case.partition(":")
    rows, _, r = shape.partition("x")
    if op not in OPS or not rows.isdigit() or not r.isdigit():
        known = ", ".join([*OPS, *KERNELBENCH])
        raise UserError(f"case {case!r}: expected OP:ROWSxR (OP one of {known})")
    line = OPS[op]
    inputs = f"torch.rand({rows}, 1, {r})" if op == "instance_norm" else f"torch.rand({rows}, {r})"
    return case, program(f"t0 = {line}", "x0", inputs)


def candidate(source: str, schedule: str) -> str:
    """The teacher's candidate for one schedule (VARIANT; `split` switched off)."""
    text = emit(source, variant=VARIANT[schedule])
    if schedule in ("fwd", "loop_fwd"):
        return FROM_END.sub("rb = r0", text)
    if schedule != "split":
        return text
    lines = text.splitlines()
    switched = [
        line.split(COOP_SWITCH)[0] + COOP_SWITCH + "False" if COOP_SWITCH in line else line
        for line in lines
    ]
    return "\n".join(switched) + "\n"


def measure(source: str, schedules: list[str], opts: Options) -> dict[str, Any]:
    row: dict[str, Any] = {"bytes": parse(source).bytes}
    for schedule in schedules:
        text = candidate(source, schedule)
        verdict = verify(source, text, options=opts)
        row[f"{schedule}_status"] = verdict.status
        row[f"{schedule}_ms"] = verdict.time_ms if verdict.correct else None
        if verdict.eager_ms is not None:
            row["eager_ms"], row["compile_ms"] = verdict.eager_ms, verdict.compile_ms
        if not verdict.correct:
            row[f"{schedule}_reason"] = verdict.reason[:300]
    return row


def print_table(rows: list[dict[str, Any]], schedules: list[str], copy_gbs: float | None,
                device: str) -> None:  # fmt: skip
    copy = f"{copy_gbs:.0f} GB/s" if copy_gbs else "not measured"
    print(f"long rows, device {device}, copy bandwidth {copy}; ms (x torch.compile)")
    head = f"{'case':<26} {'MB':>7}" + "".join(f" {s + ' ms':>16}" for s in schedules)
    print(head + f" {'eager ms':>9} {'compile ms':>10} {'coop % copy':>11}")
    for r in rows:
        cells = ""
        for s in schedules:
            ms, compiled = r.get(f"{s}_ms"), r.get("compile_ms")
            ratio = f" ({compiled / ms:.2f}x)" if ms and compiled else ""
            cells += f" {fmt(ms) + ratio if ms else r.get(f'{s}_status', '-'):>16}"
        coop_ms = r.get("coop_ms")
        pct = 100 * r["bytes"] / (coop_ms * 1e6) / copy_gbs if coop_ms and copy_gbs else None
        print(
            f"{r['case'][:26]:<26} {r['bytes'] / 1e6:>7.0f}{cells} {fmt(r.get('eager_ms')):>9} "
            f"{fmt(r.get('compile_ms')):>10} {fmt(pct, '.0f'):>11}"
        )
        for s in schedules:
            if r.get(f"{s}_reason"):
                print(f"  {s}: {r[f'{s}_reason'][:160]}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--device", default="cpu", help="cuda[:N] (timings) or cpu (smoke test)")
    ap.add_argument(
        "--cases",
        nargs="+",
        help="OP:ROWSxR (OP: softmax, log_softmax, instance_norm) or a KernelBench shape "
        f"({', '.join(KERNELBENCH)}); default: softmax over rows of 16K-384K, 512M elements "
        "each, then the KernelBench shapes",
    )
    ap.add_argument("--schedules", nargs="+", default=["coop", "loop"], choices=SCHEDULES)
    ap.add_argument("--runs", type=int, default=30, help="timed rounds at least (GPU)")
    ap.add_argument("--trials", type=int, default=2, help="correctness input sets per candidate")
    ap.add_argument("--copy-gbs", type=float, help="copy bandwidth in GB/s instead of measuring")
    ap.add_argument("--out", help="write the rows as JSON here")
    args = ap.parse_args(argv)
    if args.trials < 1 or args.runs < 1:
        raise UserError("--trials and --runs must be positive")
    if args.cases is None:
        if not args.device.startswith("cuda"):
            raise UserError("--cases is required on the CPU (the default cases move 2-7.5 GB)")
        args.cases = [*DEFAULT_CASES, *KERNELBENCH]
    return args


def run(args: argparse.Namespace) -> int:
    cases = [case_program(c) for c in args.cases]  # every case checked before any runs
    cuda = args.device.startswith("cuda")
    opts = Options(device=args.device, runs=args.runs, compile_baseline=True, trials=args.trials)
    copy_gbs = args.copy_gbs or (copy_bandwidth(args.device, args.runs) if cuda else None)
    rows: list[dict[str, Any]] = []
    for label, source in cases:
        rows.append({"case": label, **measure(source, args.schedules, opts)})
        print(f"{label}: " + ", ".join(rows[-1][f"{s}_status"] for s in args.schedules),
              file=sys.stderr)  # fmt: skip
        if args.out:
            write_json(args.out, {"device": args.device, "copy_gbs": copy_gbs, "rows": rows})
    print_table(rows, args.schedules, copy_gbs, args.device)
    rejected = [r for r in rows for s in args.schedules if r[f"{s}_status"] != "correct"]
    return 1 if rejected else 0


def main(argv: list[str] | None = None) -> int:
    try:
        return run(parse_args(argv))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

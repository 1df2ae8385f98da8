"""Teacher kernels on KernelBench's memory-bound level-1 problems against eager PyTorch and
torch.compile, as achieved bandwidth against the GPU's measured copy bandwidth (issue 20).

    python benchmarks/memory_bound_speed.py --device cuda --out memory_bound.json    # H200
    python benchmarks/memory_bound_speed.py --device cpu --ids 23 34 47              # smoke test

Problems: every problem of the dev split's level 1 (--problems) whose operators include no
matrix product or convolution.  That is decided by operator, not by name: the frontend maps
the module to catalog operators, and a problem is left out when one of them has the catalog
trait contraction, conv or conv_transpose, or when an operator it leaves opaque is an ATen
product, convolution or attention (PRODUCT_ATEN).  A problem the frontend cannot map fully
(an operator outside the catalog) is listed with its opaque operators and no kernel.

Each kept problem: its functional program (frontend) -> the teacher's candidate
(drtriton.teach.emit, no search) -> drtriton.verify with the torch.compile baseline, which
times candidate, eager and torch.compile interleaved round by round in one exclusive hold of
the GPU (verify/measure.py: L2 flushed before every call, CUDA events, trimmed means).  Bytes
are the program's minimum traffic, every input read and every output written once
(drtriton.program.parse(...).bytes), so GB/s = bytes / time is what each implementation
achieves of the work that must be done.  The reference is the copy bandwidth measured in the
same run through verify.time_tasks (a 1 GiB clone: 2 GiB moved; --copy-gbs skips it), 4.3 TB/s
on the H200 of 2026-11-30.  The issue's goal per problem: at least as fast as torch.compile, or
at least 90% of the copy bandwidth ("goal met" column).

On the CPU (Triton's interpreter) nothing is timed: the smoke mode shrinks every problem
(module-level integers capped at --cap, benchmarks/shrink_kernelbench.py) and checks that
classification, emission and verification run and that each candidate is accepted; a problem
still over --cpu-max-mb (its sizes are expressions the shrinking does not touch) is listed as
too_big.

A GPU run of the whole list is long (23 of its problems move 6-8.6 GB, and a verification
copies every output set to the host and back): --jobs verifies several problems at once, each
in its own process (the GPU's lock keeps the timed sections apart; a problem starts only while
the estimated footprints fit in the GPU's memory, and one that runs out of memory beside others
runs again alone), --trials takes fewer correctness sets than the verifier's five and
--no-graph skips the graph replays; the JSON records both settings. --resume continues a run
cut short (a call's time limit) from its --out file.

Prints one table and, with --out, writes the rows and the copy bandwidth as JSON
(atomically, after every problem).  Exit 1 when a kept problem's candidate is rejected, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import pathlib
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The source tree's package, unless PYTHONPATH names another copy (a private build's _core).
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

from drtriton.catalog import op as catalog_op  # noqa: E402
from drtriton.errors import ResourceError, UserError  # noqa: E402
from drtriton.evaluate import memory  # noqa: E402
from drtriton.evaluate.scheduler import AdmittedRun  # noqa: E402
from drtriton.frontend import from_module_source  # noqa: E402
from drtriton.program import parse  # noqa: E402
from drtriton.teach import emit  # noqa: E402
from drtriton.verify import Options, verify  # noqa: E402
from drtriton.verify.measure import time_tasks  # noqa: E402

LEVEL1 = pathlib.Path("/work/shared/kernelbench/level1.jsonl")
# Catalog traits of compute-bound operators, and the ATen operators (overload packets) of the
# same kind that the frontend may leave opaque.
PRODUCT_TRAITS = frozenset({"contraction", "conv", "conv_transpose"})
PRODUCT_ATEN = frozenset(
    "mm bmm addmm addbmm baddbmm matmul linear convolution conv1d conv2d conv3d "
    "conv_transpose1d conv_transpose2d conv_transpose3d scaled_dot_product_attention "
    "_scaled_dot_product_flash_attention _scaled_dot_product_efficient_attention "
    "_scaled_dot_product_flash_attention_for_cpu".split()
)
GOAL_FRACTION = 0.9  # of the copy bandwidth
COPY_ELEMENTS = 1 << 28  # float32: 1 GiB read and 1 GiB written
COPY_TASK = (
    "import torch\n\n"
    "def fused_operator(x0):\n    return x0.clone()\n\n"
    f"def get_inputs():\n    return [torch.randn({COPY_ELEMENTS})]\n"
)


def aten_name(call: str) -> str:
    """`torch.ops.aten.mm.default(x0, x1)` -> "mm"."""
    head = call.split("(")[0]
    parts = head.split(".")
    if "aten" in parts:
        return parts[parts.index("aten") + 1]
    return parts[-1]


def classify(code: str, training: bool = False) -> dict[str, Any]:
    """The frontend's view of a problem: `kind` is "product" (left out here), "opaque" (not
    fully mapped), "error" (export failed) or "memory" (kept); `program` is the functional
    program of a fully mapped one, product or memory (variant_probe's --products times both).
    `training`: the module in training mode, as KernelBench's evaluation runs it (batch norm
    with the batch's statistics)."""
    try:
        # Fake inputs: the mapping reads shapes only, and the dev split's inputs reach 8.6 GB
        # (18-24 s of random numbers each on a CPU before the export began).
        result = from_module_source(code, training=training, fake_inputs=True)
    except Exception as exc:  # a problem the frontend cannot export is listed, not fatal
        return {"kind": "error", "reason": f"{type(exc).__name__}: {str(exc)[:200]}"}
    ops = [line.op for line in result.lines if line.op is not None]
    opaque = [aten_name(line.call) for line in result.lines if line.op is None]
    record: dict[str, Any] = {"ops": list(dict.fromkeys(ops)), "opaque": opaque}
    traits = {t for name in ops for t in catalog_op(name)["traits"]}
    if traits & PRODUCT_TRAITS or PRODUCT_ATEN & set(opaque):
        program = {"program": result.program_text} if result.fully_mapped else {}
        return {**record, "kind": "product", **program}
    if not result.fully_mapped:
        return {**record, "kind": "opaque"}
    return {**record, "kind": "memory", "program": result.program_text}


def measure(program: str, opts: Options, max_bytes: float) -> dict[str, Any]:
    """The teacher's candidate for `program`, verified and (on a GPU) timed with eager and
    torch.compile in the same hold; not verified when it moves more than `max_bytes`."""
    row: dict[str, Any] = {"bytes": parse(program).bytes}
    if row["bytes"] > max_bytes:
        return {**row, "status": "too_big", "reason": f"over {max_bytes / 1e6:.0f} MB here"}
    try:
        candidate = emit(program)
    except UserError as exc:
        return {**row, "status": "no_kernel", "reason": str(exc)}
    began = time.monotonic()
    try:
        verdict = verify(program, candidate, options=opts)
    # The harness out of GPU memory (ResourceError; several --jobs share the GPU) or torch's own
    # (a RuntimeError): the row says so and the other problems go on.
    except (ResourceError, RuntimeError) as exc:
        return {**row, "status": "error", "reason": f"{type(exc).__name__}: {exc}"[:300]}
    row["verify_s"] = round(time.monotonic() - began, 1)
    row.update(status=verdict.status, reason=verdict.reason, kernel_ms=verdict.time_ms,
               eager_ms=verdict.eager_ms, compile_ms=verdict.compile_ms)  # fmt: skip
    for name in ("kernel", "eager", "compile"):
        ms = row[f"{name}_ms"]
        row[f"{name}_gbs"] = row["bytes"] / (ms * 1e6) if ms else None
    return row


def copy_bandwidth(device: str, runs: int) -> float:
    """GB/s of a 1 GiB device-to-device clone, timed as eager baselines are (time_tasks)."""
    stats = time_tasks([COPY_TASK], device, runs=runs)[0]
    return 2 * 4 * COPY_ELEMENTS / (stats["trimmed"] * 1e6)


def goal_met(row: dict[str, Any], copy_gbs: float | None) -> bool | None:
    """At least as fast as torch.compile, or at least 90% of the copy bandwidth."""
    if row.get("kernel_ms") is None:
        return None
    if row.get("compile_ms") is not None and row["kernel_ms"] <= row["compile_ms"]:
        return True
    return bool(copy_gbs) and row["kernel_gbs"] >= GOAL_FRACTION * copy_gbs


def shrinker() -> Any:
    """benchmarks/shrink_kernelbench.py's `shrink` (a script, not a package)."""
    path = ROOT / "benchmarks" / "shrink_kernelbench.py"
    spec = importlib.util.spec_from_file_location("shrink_kernelbench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.shrink


def load_problems(path: pathlib.Path, ids: list[int] | None, cap: int | None) -> list[dict]:
    if not path.is_file():
        raise UserError(f"no KernelBench problems at {path}")
    shrink = shrinker() if cap else None
    problems = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if ids and record["problem_id"] not in ids:
            continue
        if shrink is not None:
            record["code"] = shrink(record["code"], cap)
        problems.append(record)
    return problems


def fmt(v: float | None, spec: str = ".3f") -> str:
    return "-" if v is None else format(v, spec)


def print_table(rows: list[dict[str, Any]], copy_gbs: float | None, device: str) -> None:
    copy = f"{copy_gbs:.0f} GB/s" if copy_gbs else "not measured"
    print(f"KernelBench level 1, memory-bound problems, device {device}, copy bandwidth {copy}")
    head = (
        f"{'problem':<34} {'status':<12} {'MB':>9} {'kernel ms':>10} {'eager ms':>9} "
        f"{'compile ms':>10} {'kernel GB/s':>11} {'eager GB/s':>10} {'compile GB/s':>12} "
        f"{'% copy':>7} {'goal met':>8}"
    )
    print(head)
    for r in rows:
        pct = 100 * r["kernel_gbs"] / copy_gbs if r.get("kernel_gbs") and copy_gbs else None
        met = {True: "yes", False: "no", None: "-"}[r.get("goal_met")]
        mb = r["bytes"] / 1e6 if "bytes" in r else None
        print(
            f"{r['name'][:34]:<34} {r['status']:<12} {fmt(mb, '.4g'):>9} "
            f"{fmt(r.get('kernel_ms')):>10} {fmt(r.get('eager_ms')):>9} "
            f"{fmt(r.get('compile_ms')):>10} {fmt(r.get('kernel_gbs'), '.0f'):>11} "
            f"{fmt(r.get('eager_gbs'), '.0f'):>10} {fmt(r.get('compile_gbs'), '.0f'):>12} "
            f"{fmt(pct, '.0f'):>7} {met:>8}"
        )
        if r["status"] not in ("correct", "not_mapped"):
            print(f"  reason: {r.get('reason', '')[:160]}")
        elif r["status"] == "not_mapped":
            print(f"  opaque: {', '.join(dict.fromkeys(r['opaque']))}")


def write_json(path: str, payload: dict[str, Any]) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(payload, f, indent=2)
    os.replace(tmp, path)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--device", default="cpu", help="cuda[:N] (timings) or cpu (smoke test)")
    ap.add_argument("--problems", type=pathlib.Path, default=LEVEL1, help="KernelBench JSONL")
    ap.add_argument("--ids", type=int, nargs="+", help="only these problem ids")
    ap.add_argument(
        "--cap",
        type=int,
        help="shrink module-level integers to at most this (default: 16 on cpu, none on cuda)",
    )
    ap.add_argument("--runs", type=int, default=30, help="timed rounds at least (GPU)")
    ap.add_argument(
        "--cpu-max-mb",
        type=float,
        default=256.0,
        help="on the CPU, list problems that move more than this and do not verify them",
    )
    ap.add_argument(
        "--trials",
        type=int,
        default=Options.trials,
        help="correctness input sets per problem (default: the verifier's %(default)s; fewer "
        "make a GPU run of 6-8 GB problems fit a short call, and the JSON records it)",
    )
    ap.add_argument(
        "--no-graph", action="store_true", help="no CUDA-graph replays (times are events only)"
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="problems verified at once, each in its own process (the GPU's lock keeps every "
        "timed section alone; memory is shared: 2-3 for 8 GB problems on an H200)",
    )
    ap.add_argument("--copy-gbs", type=float, help="copy bandwidth in GB/s instead of measuring")
    ap.add_argument("--out", help="write the rows as JSON here")
    ap.add_argument(
        "--resume",
        action="store_true",
        help="keep the rows --out already holds and measure only the problems it lacks or that "
        "ran out of GPU memory (a GPU run of the whole list takes several calls); its copy "
        "bandwidth is kept too",
    )
    args = ap.parse_args(argv)
    if args.resume and not args.out:
        raise UserError("--resume needs --out (the file to resume)")
    if args.trials < 1 or args.jobs < 1 or args.runs < 1:
        raise UserError("--trials, --jobs and --runs must be positive")
    return args


def kept_row(problem: dict[str, Any], opts: Options, max_bytes: float,
             copy_gbs: float | None) -> dict[str, Any] | None:  # fmt: skip
    """The row of one problem (None: left out as a product); in a --jobs worker process."""
    view = classify(problem["code"])
    base = {"problem_id": problem["problem_id"], "name": problem["name"]}
    if view["kind"] == "product":
        return None
    if view["kind"] == "error":
        return {**base, "status": "export_error", "reason": view["reason"]}
    base.update(ops=view["ops"], opaque=view["opaque"])
    if view["kind"] == "opaque":
        return {**base, "status": "not_mapped"}
    row = {**base, **measure(view["program"], opts, max_bytes)}
    row["goal_met"] = goal_met(row, copy_gbs)
    return row


def earlier_run(path: str | None) -> dict[str, Any]:
    """What an interrupted run wrote to --out (rows, left_out, copy_gbs); empty when none."""
    if not path or not os.path.exists(path):
        return {}
    try:
        payload = json.loads(pathlib.Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot resume from {path}: {exc}") from exc
    if not isinstance(payload, dict) or not isinstance(payload.get("rows"), list):
        raise UserError(f"cannot resume from {path}: not memory_bound_speed's JSON")
    return payload


def admission(args: argparse.Namespace) -> memory.Admission:
    """Memory admission on a GPU (evaluate/memory.py: each problem's footprint estimated from
    its KernelBench module on the meta device, with --trials input sets); none on the CPU."""
    budgets = memory.gpu_budgets([args.device]) if args.device.startswith("cuda") else {}
    return memory.Admission(budgets, lambda p: memory.footprint(p["code"], args.trials))


def out_of_memory(row: dict[str, Any]) -> bool:
    return "out of memory" in str(row.get("reason", "")).lower()


def run(args: argparse.Namespace) -> int:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    cuda = args.device.startswith("cuda")
    cap = args.cap if args.cap is not None else (None if cuda else 16)
    problems = load_problems(args.problems, args.ids, cap)
    earlier = earlier_run(args.out) if args.resume else {}
    # A row that ran out of GPU memory failed for want of room beside the other jobs, not on
    # its kernel: a resumed run measures it again (as `eval kernelbench --rerun-oom` does).
    rows = [r for r in earlier.get("rows", []) if not out_of_memory(r)]
    left_out: list[str] = list(earlier.get("left_out", []))
    done = {r["name"] for r in rows} | set(left_out)
    problems = [p for p in problems if p["name"] not in done]
    if earlier:
        print(f"resuming: {len(done)} problems recorded, {len(problems)} to go", file=sys.stderr)
    opts = Options(device=args.device, runs=args.runs, compile_baseline=True,
                   trials=args.trials, graph=not args.no_graph)  # fmt: skip
    copy_gbs = args.copy_gbs or earlier.get("copy_gbs")
    if copy_gbs is None and cuda:
        copy_gbs = copy_bandwidth(args.device, args.runs)
    # Problems whose sizes are expressions escape the shrinking (L1 5: M = 16384 * 4, 8.6 GB).
    max_bytes = math.inf if cuda else args.cpu_max_mb * 1e6
    settings = {"device": args.device, "copy_gbs": copy_gbs, "cap": cap, "trials": args.trials,
                "graph": not args.no_graph}  # fmt: skip

    def record(problem: dict[str, Any], row: dict[str, Any] | None) -> None:
        if row is None:
            left_out.append(problem["name"])
        else:
            rows.append(row)
            rows.sort(key=lambda r: r["problem_id"])  # the table reads as the split
            print(f"{problem['name']}: {row['status']}", file=sys.stderr)
        if args.out:  # after every problem: a run cut short keeps what it measured
            write_json(args.out, {**settings, "rows": rows, "left_out": left_out})

    if args.jobs == 1:
        for problem in problems:
            record(problem, kept_row(problem, opts, max_bytes, copy_gbs))
    else:
        # Processes, not threads: the GPU lock (verify/gpu_lock.py), which keeps every timed
        # section alone on the GPU, is one per process and serializes a process's threads.
        # Problems start only while their estimated footprints fit in the GPU's memory, as in
        # the evaluation: three 7 GB problems at once ran six of 25 out of memory (2026-12-03).
        spawn = multiprocessing.get_context("spawn")  # no CUDA state forked
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=spawn) as pool:

            def submit(device: str, problem: dict[str, Any]) -> Any:
                return pool.submit(kept_row, problem, opts, max_bytes, copy_gbs)

            admitted = AdmittedRun(problems, {args.device: args.jobs}, admission(args), submit,
                                   retry_alone=lambda _p, f: out_of_memory(f.result() or {}))  # fmt: skip
            # Recorded as they finish: a call that ends mid-list keeps every finished problem.
            for problem, future in admitted:
                try:
                    row = future.result()
                except Exception as exc:  # the job's process died (a broken pool): not a row
                    print(f"{problem['name']}: not measured ({type(exc).__name__}: {exc})"[:300],
                          file=sys.stderr)  # fmt: skip
                    continue  # unrecorded, so --resume measures it
                record(problem, row)
    print_table(rows, copy_gbs, args.device)
    print(f"left out (a matrix product or convolution): {len(left_out)} problems")
    if args.out:
        write_json(args.out, {**settings, "rows": rows, "left_out": left_out})
    judged = [r for r in rows if "kernel_ms" in r]  # a candidate went to the verifier
    return 0 if all(r["status"] == "correct" for r in judged) else 1


def main(argv: list[str] | None = None) -> int:
    try:
        return run(parse_args(argv))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""The teacher's GEMMs and convolutions against eager strict fp32 and torch.compile (issue 19).

    python benchmarks/contraction_speed.py --device cuda --out contraction_speed.json   # H200
    python benchmarks/contraction_speed.py --device cuda --levels 1 --limit 5           # a few
    python benchmarks/contraction_speed.py --dry-run                                    # CPU smoke

Which problems: every KernelBench dev-split problem (--problems, default
/work/shared/kernelbench/level{1,2}.jsonl) whose program, as the frontend lowers it, holds a
GEMM (matmul, bmm, linear), a convolution or a transposed convolution, chosen by the catalog's
traits (search/lazy.fragment_class), not by name; for each such operator, its one-operator task
at the problem's shape (the search's single-operator fragment, with its own inputs). Level 1
then gives its GEMM and conv problems, level 2 the GEMM or conv of each problem.

What is measured, per operator:
- the teacher's candidate (drtriton.teach.emit) verified by drtriton.verify on --device: the
  verdict, and on a GPU its time against eager PyTorch in strict fp32 (TF32 off, cuBLAS SGEMM
  and cuDNN) and torch.compile, all timed in the same run, interleaved (verify/measure.py);
- TFLOP/s of the teacher and of eager from the IR's FLOPs (2 per multiply-add), and the
  teacher's as a fraction of CEILING_TFLOPS;
- the relative L2 error against float64 of the teacher's output and of eager's strict fp32 one,
  on one of the verifier's input sets (task.make_inputs), computed here: the teacher's kernels
  are trusted code, and this is not timing, so nothing here times anything; on a GPU it runs
  under a shared hold of the GPU lock, like the verifier's correctness calls.
- the tl.dot precision the kernel ran with (the wrapper's choice: the split on a GPU, "ieee"
  in the CPU interpreter).

--precision bf16|fp16|tf32 runs the same in that mode (issue 21): inputs cast as KernelBench
casts them, eager and torch.compile in the mode too; the schedule column says "+ TMA" where the
candidate has the half-precision TMA kernel (heuristics.h ChooseTmaContraction).

--dry-run (= --device cpu --cap 8 --limit 2): KernelBench's module-level integers capped
(benchmarks/shrink_kernelbench.py), Triton's interpreter, correctness and errors only (no
times). Prints one table and, with --out, writes the rows as JSON (after every problem, so an
interrupted run keeps what it measured). Exit status 1 when a teacher kernel is rejected, 2 on a
usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import re
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The source tree's package, unless PYTHONPATH names another copy (a private build's _core).
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks"))  # shrink_kernelbench

from drtriton.errors import ResourceError, UserError  # noqa: E402

KERNELBENCH = pathlib.Path("/work/shared/kernelbench")
# cuBLAS SGEMM with TF32 off on the H200 (torch 2.11): 51 TFLOP/s on 4096^3, 8192x8192x1024 and
# 2048x2048x16384 (issue 19). The strict-fp32 ceiling the split is measured against: bf16x6
# reached 65.6 (1.28x) in a plain Triton matmul of 4096^3.
CEILING_TFLOPS = 51.0
HEAVY = ("contraction", "conv", "conv_transpose")  # search/lazy.fragment_class's classes
TMA_LAUNCH = "_tma_kernel["  # the half-precision TMA kernel (emit_contraction.cc, TmaPlanOf)
DRY_CAP = 8  # --dry-run: module-level integers capped at this
DRY_LIMIT = 2  # --dry-run: problems per level
# The float64 error is skipped above this many input bytes (the float64 copies and the
# reference's float64 run would double the memory the verification itself needed).
ERROR_MAX_BYTES = 4 << 30


def load_problems(path: pathlib.Path) -> list[dict[str, Any]]:
    with path.open() as f:
        return [json.loads(line) for line in f if line.strip()]


def contraction_tasks(code: str) -> list[tuple[str, str]]:
    """(operator class, one-operator task) for each GEMM or convolution of a KernelBench
    module, at its shape: the single-operator fragments of the frontend's catalog runs."""
    from drtriton import _core
    from drtriton.frontend import from_module_source
    from drtriton.search.lazy import fragment_class

    out = []
    for run in from_module_source(code).runs():
        if run.task is None:
            continue
        for fragment in _core.fragments(run.task, 1):
            if fragment["end"] - fragment["start"] > 1:  # the whole run, offered as well
                continue
            cls = fragment_class(fragment)
            if cls in HEAVY:
                out.append((cls, fragment["source"]))
    return out


def kernel_shape(candidate: str) -> str:
    """The contraction as the teacher's kernel sees it: "M x N x K" (and "batch b")."""
    found = re.search(r"# \w+: M=(\S+) N=(\S+) K=(\S+) batch=([^\s,]+)", candidate)
    if not found:
        return "?"
    m, n, k, batch = found.groups()
    return f"{m}x{n}x{k}" + ("" if batch == "1" else f" b{batch}")


def dot_precision(candidate: str, device: str) -> str | None:
    """The tl.dot precision the candidate's wrapper passes on `device` (wrapper.cc)."""
    found = re.search(r'dot_precision = "(\w+)"', candidate)
    if not found:
        return None
    return found.group(1) if device.startswith("cuda") else "ieee"


def schedule(candidate: str) -> str:
    """How the teacher cut the contraction (heuristics.cc): "tile" (one kernel of tl.dot tiles),
    "narrow" (M or N at most 4: products and tl.sum, no tl.dot), either with "+ split-K S"."""
    kind = "tile" if "tl.dot(" in candidate else "narrow"
    found = re.search(r"split_k=(\d+)", candidate)
    return kind + (f" + split-K {found.group(1)}" if found else "")


def operand_layout(candidate: str) -> str:
    """The string "channels-last" when the wrapper copies a convolution's operands channels-last
    first (heuristics.h, ConvChannelsLast), "as given" otherwise."""
    return "channels-last" if "_cl_kernel[" in candidate else "as given"


def relative_error(out: Any, ref64: Any) -> float:
    scale = float(ref64.norm())
    return float((out.double() - ref64).norm()) / scale if scale > 0 else float("nan")


def float64_errors(source: str, candidate: str, device: str, folder: str,
                   name: str) -> dict[str, float | None]:  # fmt: skip
    """Relative L2 errors against float64 of the teacher's output and of eager strict fp32, on
    the verifier's first input set of seed 0 (the task's own distribution)."""
    import torch

    from drtriton.verify import gpu_lock
    from drtriton.verify.precision import strict_fp32
    from drtriton.verify.references import tensor_bytes
    from drtriton.verify.task import import_file, load_task

    task = load_task(source)
    dev = torch.device(device)
    path = pathlib.Path(folder) / f"{name}.py"
    path.write_text(candidate)
    module = import_file(str(path), name)
    cuda = device.startswith("cuda")
    lock = gpu_lock.hold(device, gpu_lock.SHARED) if cuda else contextlib.nullcontext()
    with lock, torch.no_grad():
        inputs = task.make_inputs(0, 0, dev)
        if tensor_bytes(inputs) > ERROR_MAX_BYTES:
            return {"err64": None, "eager_err64": None}
        reference = task.build_reference(dev, 0)
        ref64 = reference(*[x.double() for x in inputs])
        with strict_fp32():
            eager = reference(*inputs)
        out = module.triton_fused_operator(*inputs)
        return {"err64": relative_error(out, ref64), "eager_err64": relative_error(eager, ref64)}


def tflops(flops: float, ms: float | None) -> float | None:
    return None if not ms else flops / (ms * 1e-3) / 1e12


def measure(record: dict[str, Any], cls: str, source: str, args: argparse.Namespace,
            folder: str, index: int) -> dict[str, Any]:  # fmt: skip
    from drtriton.teach import emit
    from drtriton.verify import Options, verify

    row = _task_row((record, cls, source))
    try:
        candidate = emit(source, variant=args.variant)
    except UserError as exc:
        return {**row, "status": "unsupported", "reason": str(exc)}
    row["shape"] = kernel_shape(candidate)
    half = args.precision in ("bf16", "fp16")
    # Half inputs multiply in their own dtype (wrapper.cc), through TMA where the operands allow.
    row["precision"] = args.precision if half else dot_precision(candidate, args.device)
    row["schedule"] = schedule(candidate) + (" + TMA" if half and TMA_LAUNCH in candidate else "")
    row["layout"] = operand_layout(candidate)
    opts = Options(device=args.device, runs=args.runs, compile_baseline=not args.no_compile,
                   precision=args.precision)  # fmt: skip
    began = time.monotonic()
    try:
        verdict = verify(source, candidate, options=opts)
    # torch.OutOfMemoryError is a RuntimeError; the harness's own out-of-memory a ResourceError
    # (several --jobs processes share the GPU's memory): the row says so, the others go on.
    except (UserError, RuntimeError, ResourceError) as exc:
        return {**row, "status": "error", "reason": f"{type(exc).__name__}: {exc}"[:300]}
    row.update(
        status=verdict.status,
        reason=verdict.reason,
        time_ms=verdict.time_ms,
        eager_ms=verdict.eager_ms,
        compile_ms=verdict.compile_ms,
        speedup=verdict.speedup,
        verify_s=round(time.monotonic() - began, 1),
    )
    row["vs_compile"] = (
        verdict.compile_ms / verdict.time_ms if verdict.compile_ms and verdict.time_ms else None
    )
    row["tflops"] = tflops(row["flops"], verdict.time_ms)
    row["eager_tflops"] = tflops(row["flops"], verdict.eager_ms)
    row["of_ceiling"] = row["tflops"] / CEILING_TFLOPS if row["tflops"] else None
    if verdict.correct and args.precision == "fp32":  # the float64 errors are strict fp32's
        name = f"contraction_speed_{index}"
        try:
            row.update(float64_errors(source, candidate, args.device, folder, name))
        except RuntimeError as exc:  # out of memory beside the GPU's other work: no error figure
            row["err64_reason"] = f"{type(exc).__name__}: {exc}"[:300]
    return row


def fmt(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_table(rows: list[dict[str, Any]], unexported: list[dict[str, Any]]) -> None:
    print(
        f"ceiling {CEILING_TFLOPS:g} TFLOP/s (cuBLAS SGEMM, TF32 off); times in ms; "
        "err: relative L2 error against float64"
    )
    print(
        "| L | problem | op | M x N x K | GFLOP | status | ms | eager | compile | x eager "
        "| x compile | TFLOP/s | of ceiling | err | eager err | precision | schedule | layout |"
    )
    print("|" + "---|" * 18)
    for r in rows:
        cells = [
            str(r["level"]),
            r["name"][:40],
            r["op"],
            r.get("shape", "-"),
            fmt(r["flops"] / 1e9, ".2f"),
            r["status"],
            fmt(r.get("time_ms"), ".3f"),
            fmt(r.get("eager_ms"), ".3f"),
            fmt(r.get("compile_ms"), ".3f"),
            fmt(r.get("speedup"), ".2f"),
            fmt(r.get("vs_compile"), ".2f"),
            fmt(r.get("tflops"), ".1f"),
            fmt(r.get("of_ceiling"), ".2f"),
            fmt(r.get("err64"), ".1e"),
            fmt(r.get("eager_err64"), ".1e"),
            r.get("precision") or "-",
            r.get("schedule") or "-",
            r.get("layout") or "-",
        ]
        print("| " + " | ".join(cells) + " |")
    for r in rows:
        if r["status"] != "correct":
            print(f"  L{r['level']} {r['name']} {r['op']}: {r['status']}: {r.get('reason', '')}")
    if unexported:
        print(f"not exported by the frontend (operators unknown): {len(unexported)} problems")
        for r in unexported:
            print(f"  L{r['level']} {r['name']}: {r['reason']}")


def write_rows(path: str, rows: list[dict[str, Any]], unexported: list[dict[str, Any]]) -> None:
    from drtriton.files import write_text_atomic

    data = {"ceiling_tflops": CEILING_TFLOPS, "rows": rows, "unexported": unexported}
    write_text_atomic(path, json.dumps(data, indent=1))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--device", default="cuda", help="cuda[:N] (timings) or cpu (interpreter)")
    ap.add_argument("--dry-run", action="store_true",
                    help=f"--device cpu --cap {DRY_CAP} --limit {DRY_LIMIT}")  # fmt: skip
    ap.add_argument("--levels", type=int, nargs="+", default=[1, 2], choices=[1, 2])
    ap.add_argument("--problems", type=pathlib.Path, default=KERNELBENCH,
                    help="folder with level1.jsonl and level2.jsonl")  # fmt: skip
    ap.add_argument(
        "--limit", type=int, help="at most this many problems with a contraction per level"
    )
    ap.add_argument("--cap", type=int, help="cap module-level integers (shrink_kernelbench)")
    ap.add_argument("--ids", type=int, nargs="+", help="only these problem ids")
    ap.add_argument(
        "--jobs", type=int, default=1,
        help="operators verified at once, each in its own process (timings still hold the GPU "
             "alone)",
    )  # fmt: skip
    ap.add_argument("--runs", type=int, default=30, help="timed rounds at least (GPU)")
    ap.add_argument(
        "--variant",
        type=int,
        default=0,
        help="the teacher's configuration variant (heuristics.h; 1 keeps convolutions NCHW)",
    )
    ap.add_argument("--no-compile", action="store_true", help="no torch.compile baseline")
    ap.add_argument(
        "--precision",
        default="fp32",
        choices=["fp32", "tf32", "bf16", "fp16"],
        help="the verifier's mode: inputs cast, eager and torch.compile in it too (README, "
        "Precision modes); the float64 error columns are for fp32 only",
    )
    ap.add_argument("--out", help="write the rows as JSON here")
    args = ap.parse_args(argv)
    if args.dry_run:
        args.device = "cpu"
        args.cap = DRY_CAP if args.cap is None else args.cap
        args.limit = DRY_LIMIT if args.limit is None else args.limit
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be positive, got {args.limit}")
    if args.jobs < 1:
        raise UserError(f"--jobs must be positive, got {args.jobs}")
    for level in args.levels:
        if not (args.problems / f"level{level}.jsonl").is_file():
            raise UserError(f"no problems at {args.problems / f'level{level}.jsonl'}")
    return args


def selected_tasks(args: argparse.Namespace,
                   unexported: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str, str]]:  # fmt: skip
    """(record, operator class, one-operator task) of every selected problem's contractions;
    problems the frontend cannot export go to `unexported`."""
    from shrink_kernelbench import shrink

    out = []
    for level in args.levels:
        taken = 0
        for record in load_problems(args.problems / f"level{level}.jsonl"):
            if args.limit is not None and taken >= args.limit:
                break
            if args.ids and record["problem_id"] not in args.ids:
                continue
            code = record["code"] if args.cap is None else shrink(record["code"], args.cap)
            try:
                tasks = contraction_tasks(code)
            except Exception as exc:  # any export failure: listed, the run goes on
                reason = f"{type(exc).__name__}: {exc}"[:300]
                unexported.append({**_identity(record), "reason": reason})
                continue
            taken += bool(tasks)
            out.extend((record, cls, source) for cls, source in tasks)
    return out


def _task_row(task: tuple[dict[str, Any], str, str]) -> dict[str, Any]:
    """A row's identity and the operator's facts, before anything is measured."""
    from drtriton import _core

    record, cls, source = task
    facts = _core.parse(source)[1]
    return {
        **_identity(record),
        "class": cls,
        "op": facts["ops"][0],
        "inputs": [facts["shapes"][n] for n in facts["inputs"]],
        "flops": float(facts["flops"]),
    }


def _measure_in_pool(tasks: list[tuple[dict[str, Any], str, str]], pending: list[int],
                     rows: list[dict[str, Any] | None], jobs: int, args: argparse.Namespace,
                     folder: str, unexported: list[dict[str, Any]]) -> bool:  # fmt: skip
    """Measure tasks[pending] in `jobs` processes into rows; False when a process died (the
    pool is then broken and the unfinished stay None)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    # Processes, not threads: the GPU lock (verify/gpu_lock.py), which keeps every timed
    # section alone on the GPU, is one per process and serializes a process's threads.
    spawn = multiprocessing.get_context("spawn")  # no CUDA state forked
    with ProcessPoolExecutor(max_workers=jobs, mp_context=spawn) as pool:
        futures = {
            pool.submit(measure, tasks[i][0], tasks[i][1], tasks[i][2], args, folder, i): i
            for i in pending
        }
        for future in as_completed(futures):
            i = futures[future]
            try:
                rows[i] = future.result()
            except BrokenProcessPool:
                return False
            if args.out:
                write_rows(args.out, [r for r in rows if r is not None], unexported)
            record = tasks[i][0]
            print(f"L{record['level']} {record['name']}: {rows[i]['status']}", file=sys.stderr)
    return True


def measure_all(tasks: list[tuple[dict[str, Any], str, str]], args: argparse.Namespace,
                folder: str, unexported: list[dict[str, Any]]) -> list[dict[str, Any] | None]:  # fmt: skip
    """A row per task, measured in --jobs processes.  A process the host kills (2026-12-04:
    four processes on L1 7, 76, 11 and 13, with 8.6 GB inputs and float64 references on the
    128 GB host) breaks the pool: the unfinished go again with half the processes; with one,
    the task it died on (the first not done: one process runs them in order) is recorded as
    crashed and the rest go on."""
    rows: list[dict[str, Any] | None] = [None] * len(tasks)
    jobs = args.jobs
    while pending := [i for i, row in enumerate(rows) if row is None]:
        if _measure_in_pool(tasks, pending, rows, jobs, args, folder, unexported):
            break
        if jobs == 1:
            culprit = next(i for i in pending if rows[i] is None)
            rows[culprit] = {**_task_row(tasks[culprit]), "status": "crashed",
                             "reason": "its process was killed (host memory?)"}  # fmt: skip
        jobs = max(1, jobs // 2)
        print(f"a process died: retrying the unfinished with {jobs}", file=sys.stderr)
    return rows


def run(args: argparse.Namespace) -> int:
    if args.device == "cpu":  # before Triton's first import: the teacher's kernels run here too
        os.environ["TRITON_INTERPRET"] = "1"
    unexported: list[dict[str, Any]] = []
    tasks = selected_tasks(args, unexported)
    with tempfile.TemporaryDirectory(prefix="drtriton-speed-") as folder:
        rows = measure_all(tasks, args, folder, unexported)
    measured = [r for r in rows if r is not None]
    print_table(measured, unexported)
    if args.out:
        write_rows(args.out, measured, unexported)
    if not measured:  # every problem failed to export, or none has a contraction: nothing measured
        print("error: no contraction was measured", file=sys.stderr)
        return 1
    return 0 if all(r["status"] == "correct" for r in measured) else 1


def _identity(record: dict[str, Any]) -> dict[str, Any]:
    return {k: record[k] for k in ("level", "problem_id", "name")}


def main(argv: list[str] | None = None) -> int:
    try:
        return run(parse_args(argv))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

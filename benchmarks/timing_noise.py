"""How reproducible and how fair is the verifier's GPU timing? Three measurements for the H200.

    python benchmarks/timing_noise.py --device cuda --out timing_noise.json       # all parts
    python benchmarks/timing_noise.py --device cuda --parts a --workers 6 --repeats 5
    python benchmarks/timing_noise.py --parts c --eval-dir runs/kernelbench       # files only
    python benchmarks/timing_noise.py --device cpu --parts b                      # CPU smoke test

(a) Reproducibility under concurrency. Teacher kernels for KernelBench dev problems (some
    shrunk, see shrink_kernelbench.py, so that microsecond kernels exist too), one per bin of
    estimated time over 10 us .. 10 ms, each verified --repeats times by --workers harness
    processes sharing the GPU (six: the evaluation's concurrency). Per kernel: the median
    time and max/min over repeats of the kernel time, eager's time, the speed-up and the
    CUDA-graph time when the verdict has one. It passes when time max/min <= 1.05 (median
    >= 0.05 ms) or <= 1.15 (below, where a launch is most of the time). The selection is
    computed, never a fixed list: first problem in file order per bin. Verdicts stay in
    --work, so an interrupted run resumes.
(b) Fairness. Four hand-written kernels doing exactly one operator's work (relu, multiply by
    2.5, row sum, row softmax) against their one-operator tasks at 1 MB and 256 MB of float32
    input: equal work should time equal, eager / kernel within 0.95 .. 1.05. Row sum and
    softmax are reductions whose schedules differ from torch's, so there the ratio also
    measures the kernels; each op's A/A row ("op=") separates the harness: the task itself
    launches the same Triton kernel, so eager and candidate are one program, timed once on the
    harness's side and once on the sandboxed worker's, and any ratio away from 1.0 is the
    harness's (GPU only: on the CPU the harness's own process would run Triton's interpreter,
    which works only where Triton was first imported in that mode). On the CPU (interpreter,
    no timing, 4 x 64 inputs) it only checks that each kernel is judged correct.
(c) Evaluation throughput. From a `drtriton eval kernelbench` directory (--eval-dir):
    problems per minute = records with started_at and finished_at / wall span in minutes,
    per run of a resumed evaluation (a record starting after all earlier ones finished opens
    one) and over all runs (their spans summed),
    and the count of each status. Reads files only.

Prints a short table per part; --out writes {"a": ..., "b": [...], "c": ...} as JSON
(atomically, after each part). Exit status 0 when the measuring finished (the figures are the
result, pass or not), 2 on a usage error (a missing file, a bad flag).
"""

from __future__ import annotations

import argparse
import ast
import collections
import importlib.util
import json
import math
import os
import pathlib
import statistics
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from tqdm import tqdm

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The source tree's package, unless PYTHONPATH names another copy (a private build's _core).
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

from drtriton.errors import ResourceError, UserError  # noqa: E402
from drtriton.files import write_text_atomic  # noqa: E402

PARTS = ("a", "b", "c")

# ---- (a) reproducibility under concurrency ------------------------------------------------

# Time estimate of a kernel from the program's facts. 3e12 B/s is what a streaming kernel
# reaches of the H200's 4.8 TB/s HBM3e; 2e13 FLOP/s is a strict-fp32 (no TF32) rate the
# teacher's kernels can approach (peak fp32 is 67 TFLOP/s); 5 us is a launch plus the
# timer's floor. It only spreads the selection over decades: the measured times are the result.
HBM_BYTES_PER_S = 3e12
FP32_FLOPS_PER_S = 2e13
LAUNCH_MS = 5e-3
BIN_LO_MS, BIN_HI_MS = 1e-2, 1e1
CAPS: tuple[int | None, ...] = (None, 4096, 1024, 256, 64)  # None: the problem as published
# Six verifications share the GPU during an evaluation, and the float64 envelope doubles a
# task's inputs again: larger programs would measure memory pressure, not timing.
MAX_INPUT_GB = 2.0
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int64": 8, "int32": 4,
               "bool": 1}  # fmt: skip


class Pick(NamedTuple):
    """One selected kernel: a KernelBench problem (maybe shrunk), its task and candidate."""

    id: str  # L{level}_{problem_id}[@cap{N}]
    name: str
    cap: int | None
    estimate_ms: float
    flops: float
    bytes: float
    input_bytes: int
    task: str
    candidate: str

    def summary(self) -> dict[str, Any]:
        return {k: v for k, v in self._asdict().items() if k not in ("task", "candidate")}


def estimate_ms(flops: float, nbytes: float) -> float:
    return (nbytes / HBM_BYTES_PER_S + flops / FP32_FLOPS_PER_S) * 1e3 + LAUNCH_MS


def time_bin(ms: float, bins: int) -> int | None:
    """Index of `ms` among `bins` equal log10 bins over [BIN_LO_MS, BIN_HI_MS]; None outside."""
    if not BIN_LO_MS <= ms <= BIN_HI_MS:
        return None
    lo, hi = math.log10(BIN_LO_MS), math.log10(BIN_HI_MS)
    return min(int((math.log10(ms) - lo) / (hi - lo) * bins), bins - 1)


def load_shrink() -> Callable[[str, int], str]:
    """shrink_kernelbench.shrink, from the script beside this one (benchmarks/ is no package)."""
    path = ROOT / "benchmarks" / "shrink_kernelbench.py"
    spec = importlib.util.spec_from_file_location("shrink_kernelbench", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.shrink


def meta_input_bytes(code: str) -> int | None:
    """Bytes of a KernelBench problem's inputs and parameters, built on the meta device (no
    memory, no random numbers); None when the problem cannot be built there."""
    import torch

    namespace: dict[str, Any] = {"__name__": "timing_noise_task"}
    try:
        exec(compile(code, "<problem>", "exec"), namespace)  # a trusted KernelBench file
        with torch.device("meta"):
            inputs = list(namespace["get_inputs"]())
            model = namespace["Model"](*namespace["get_init_inputs"]())
    except Exception:  # e.g. .item() in a constructor: the lowered program decides
        return None
    tensors = [*inputs, *model.parameters(), *model.buffers()]
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


def lower(code: str) -> tuple[str, str | None]:
    """("ok", functional task text) of a problem; ("opaque", None) when an operator is outside
    the catalog (at every size: the caller skips the problem), ("failed", None) when it does
    not export (a shrunk model may be invalid at this size only)."""
    from drtriton.frontend import from_module_source

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            text = from_module_source(code).program_text
    except Exception:  # torch.export and a shrunk model fail in many ways: not a candidate
        return "failed", None
    return ("opaque", None) if text is None else ("ok", text)


def program_input_bytes(program: Any) -> int:
    return sum(
        math.prod(program.shapes[name]) * DTYPE_BYTES.get(program.dtypes.get(name, ""), 4)
        for name in program.inputs
    )


def problems(kernelbench: pathlib.Path, limit: int) -> list[dict[str, Any]]:
    from drtriton.jsonl import read_jsonl

    records: list[dict[str, Any]] = []
    for level in (1, 2):
        records += read_jsonl(kernelbench / f"level{level}.jsonl", ("problem_id", "code"))
    return records[:limit] if limit else records


def variants(record: dict[str, Any], caps: tuple[int | None, ...],
             shrink: Callable[[str, int], str]) -> Iterator[tuple[str, int | None, str]]:  # fmt: skip
    """(id, cap, code) of a problem at each cap, skipping caps that change nothing."""
    seen: set[str] = set()
    base = f"L{record.get('level', '?')}_{record['problem_id']}"
    for cap in caps:
        code = record["code"] if cap is None else shrink(record["code"], cap)
        key = ast.dump(ast.parse(code))
        if key not in seen:
            seen.add(key)
            yield (base if cap is None else f"{base}@cap{cap}"), cap, code


def select(kernelbench: pathlib.Path, kernels: int = 12, caps: tuple[int | None, ...] = CAPS,
           limit: int = 0, max_input_gb: float = MAX_INPUT_GB,
           progress: bool = True) -> list[Pick]:  # fmt: skip
    """The first problem variant (file order, then caps in order) in each of `kernels` bins of
    estimated time. A problem fills at most one bin (twelve different kernels, not one kernel
    at four sizes) and a program text at most once; the scan stops when every bin is full."""
    import drtriton
    from drtriton.teach import emit

    taken: dict[int, Pick] = {}
    seen_programs: set[str] = set()
    max_bytes, shrink = int(max_input_gb * 1e9), load_shrink()
    records = problems(kernelbench, limit)
    bar = tqdm(records, desc="select", unit="problem", disable=not progress)
    for record in bar:
        for kid, cap, code in variants(record, caps, shrink):
            meta = meta_input_bytes(code)
            if meta is not None and meta > max_bytes:
                continue  # too large: skipped before its inputs are drawn
            outcome, text = lower(code)
            if outcome == "opaque":
                break  # the same operators at every cap
            if text is None:
                continue
            program = drtriton.parse(text)
            est, nbytes = estimate_ms(program.flops, program.bytes), program_input_bytes(program)
            slot = time_bin(est, kernels)
            if slot is None or slot in taken or nbytes > max_bytes or text in seen_programs:
                continue
            try:
                candidate = emit(text)
            except UserError:
                continue
            seen_programs.add(text)
            taken[slot] = Pick(kid, str(record.get("name", "")), cap, est, program.flops,
                               program.bytes, nbytes, text, candidate)  # fmt: skip
            bar.set_postfix(bins=len(taken))
            break  # one bin per problem
        if len(taken) == kernels:
            break
    bar.close()
    return [taken[k] for k in sorted(taken)]


def write_pairs(picks: list[Pick], repeats: int, path: pathlib.Path) -> None:
    lines = [
        json.dumps({"id": f"{p.id}#{r}", "task": p.task, "candidate": p.candidate}) + "\n"
        for p in picks
        for r in range(repeats)
    ]
    write_text_atomic(path, "".join(lines))


def ratio(values: list[float | None]) -> float | None:
    """max / min of the present values; None when none is present or one is not positive."""
    vals = [v for v in values if v is not None]
    if not vals or min(vals) <= 0:
        return None
    return max(vals) / min(vals)


def kernel_stats(pick_id: str, verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """Spread of one kernel's repeated verdicts and whether it passes (see the docstring)."""
    statuses = [str(v.get("status") or f"error: {str(v.get('error'))[:80]}") for v in verdicts]
    times = [v.get("time_ms") for v in verdicts]
    all_correct = bool(verdicts) and all(v.get("status") == "correct" for v in verdicts)
    timed = [t for t in times if t is not None]
    median = statistics.median(timed) if timed else None
    time_ratio = ratio(times)
    passed = None
    if all_correct and median is not None and time_ratio is not None:
        passed = time_ratio <= (1.05 if median >= 0.05 else 1.15)
    peaks = [sum(v["peak_gb"].values()) for v in verdicts if v.get("peak_gb")]
    iqr = [v["time_q3_ms"] / v["time_q1_ms"] for v in verdicts
           if v.get("time_q1_ms") and v.get("time_q3_ms")]  # fmt: skip
    return {
        "id": pick_id,
        "repeats": len(verdicts),
        "statuses": statuses,
        "all_correct": all_correct,
        "median_ms": median,
        "time_ratio": time_ratio,
        "eager_ratio": ratio([v.get("eager_ms") for v in verdicts]),
        "speedup_ratio": ratio([v.get("speedup") for v in verdicts]),
        "graph_ratio": ratio([v.get("graph_ms") for v in verdicts]),
        "median_iqr_ratio": statistics.median(iqr) if iqr else None,  # within one verdict
        "time_ms": times,
        # GPU memory the harness and its worker reserved at most together (verdict peak_gb),
        # beside the admission's estimate: what the estimate is checked against
        "peak_gb": max(peaks, default=None),
        "pass": passed,
    }


def part_a(args: argparse.Namespace) -> dict[str, Any]:
    from drtriton.evaluate.memory import footprint
    from drtriton.evaluate.store import read_results
    from drtriton.verify import Options
    from drtriton.verify.batch import run_batch

    picks = select(args.kernelbench, args.kernels, limit=args.limit,
                   max_input_gb=args.max_input_gb)  # fmt: skip
    if not picks:
        raise UserError(f"{args.kernelbench}: no problem lowers to a teacher kernel")
    print(f"(a) {len(picks)} kernels selected, {args.repeats} repeats, {args.workers} workers")
    pairs, out = args.work / "pairs.jsonl", args.work / "results.jsonl"
    selection = json.dumps([p.summary() for p in picks], indent=1) + "\n"
    write_text_atomic(args.work / "selection.json", selection)
    write_pairs(picks, args.repeats, pairs)
    run_batch(str(pairs), str(out), Options(device=args.device), workers=args.workers)
    wanted = {f"{p.id}#{r}" for p in picks for r in range(args.repeats)}
    by_id: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for record in read_results(out):  # an earlier run's other kernels or repeats left out
        if str(record["id"]) in wanted:
            by_id[str(record["id"]).rpartition("#")[0]].append(record)
    kernels = {p.id: {**p.summary(), **kernel_stats(p.id, by_id[p.id]),
                      "footprint_gb": footprint(p.task) / 1e9} for p in picks}  # fmt: skip
    judged = [k for k in kernels.values() if k["pass"] is not None]
    return {"device": args.device, "workers": args.workers, "repeats": args.repeats,
            "kernels": kernels, "passed": sum(bool(k["pass"]) for k in judged),
            "judged": len(judged),
            "not_correct": {k["id"]: k["statuses"] for k in kernels.values()
                            if not k["all_correct"]}}  # fmt: skip


def print_a(a: dict[str, Any]) -> None:
    print(f"{'kernel':<18} {'est ms':>8} {'median ms':>10} {'time':>6} {'eager':>6} "
          f"{'speedup':>7} {'graph':>6} {'peak GB':>7} {'est GB':>6}  pass")  # fmt: skip
    for k in a["kernels"].values():
        print(f"{k['id']:<18} {k['estimate_ms']:8.3f} {fmt(k['median_ms'], 10)} "
              f"{fmt(k['time_ratio'], 6)} {fmt(k['eager_ratio'], 6)} "
              f"{fmt(k['speedup_ratio'], 7)} {fmt(k['graph_ratio'], 6)} "
              f"{fmt(k.get('peak_gb'), 7)} {fmt(k.get('footprint_gb'), 6)}  "
              f"{'-' if k['pass'] is None else 'yes' if k['pass'] else 'NO'}")  # fmt: skip
    print(f"max/min over repeats; passed {a['passed']} of {a['judged']} timed, correct kernels")
    for kid, statuses in a["not_correct"].items():
        print(f"  not correct in every repeat: {kid}: {', '.join(statuses)}")


# ---- (b) fairness: one operator's work, hand-written ---------------------------------------

_POINTWISE = """import torch
import triton
import triton.language as tl


@triton.jit
def {name}_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, {expr}, mask=mask)


def triton_fused_operator(x0):
    assert x0.is_contiguous(), "a contiguous input"
    out = torch.empty_like(x0)
    n_elements = x0.numel()
    # 1024 per program at 4 warps (8 floats a thread, 128-bit accesses): on the H200 it
    # streams 256 MB as fast as eager (0.131 ms), 4096 at 8 warps takes 0.137 ms; a 1 MB
    # input still spreads over 256 programs, about two per SM.
    block = 1024
    grid = (triton.cdiv(n_elements, block),)
    {name}_kernel[grid](x0, out, n_elements, BLOCK=block, num_warps=4)
    return out
"""

_ROWWISE = """import torch
import triton
import triton.language as tl


@triton.jit
def {name}_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs_col = tl.arange(0, BLOCK)
    mask = offs_col < n_cols
{body}


def triton_fused_operator(x0):
    assert x0.is_contiguous(), "a contiguous input"
    n_cols = x0.shape[-1]
    n_rows = x0.numel() // n_cols
    out = torch.empty({out_shape}, device=x0.device, dtype=x0.dtype)
    # One program per row, the whole row in one block (1024 floats: 8 a thread at 4 warps).
    block = triton.next_power_of_2(n_cols)
    {name}_kernel[(n_rows,)](x0, out, n_rows, n_cols, x0.stride(-2), BLOCK=block, num_warps=4)
    return out
"""

_ROW_SUM = """\
    x = tl.load(x_ptr + row * stride_row + offs_col, mask=mask, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0), mask=row < n_rows)"""

_SOFTMAX = """\
    x = tl.load(x_ptr + row * stride_row + offs_col, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * stride_row + offs_col, num / den, mask=mask)"""

# name -> (the task's operator line, the candidate)
FAIR_OPS: dict[str, tuple[str, str]] = {
    "relu": ("torch.relu(x0)", _POINTWISE.format(name="relu", expr="tl.where(x > 0, x, 0.0)")),
    "mul": ("torch.mul(x0, 2.5)", _POINTWISE.format(name="mul", expr="x * 2.5")),
    "row_sum": ("torch.sum(x0, dim=-1)",
                _ROWWISE.format(name="row_sum", body=_ROW_SUM, out_shape="x0.shape[:-1]")),
    "softmax": ("torch.softmax(x0, dim=-1)",
                _ROWWISE.format(name="softmax", body=_SOFTMAX, out_shape="x0.shape")),
}  # fmt: skip
# float32 sizes: a launch-bound 1 MB and a bandwidth-bound 256 MB, rows of 1024.
GPU_SHAPES = {"1MB": (256, 1024), "256MB": (65536, 1024)}
CPU_SHAPES = {"4x64": (4, 64)}


def fair_task(op: str, shape: tuple[int, ...], same_kernel: bool = False) -> str:
    """The one-operator task of `op` at `shape`; `same_kernel`: the task is the candidate's
    own Triton kernel (the A/A row), so that eager and candidate are the same program."""
    dims = ", ".join(map(str, shape))
    inputs = f"\n\ndef get_inputs():\n    return [torch.randn({dims})]\n"
    if same_kernel:
        kernel = FAIR_OPS[op][1].replace("def triton_fused_operator(", "def fused_operator(")
        return kernel + inputs
    line = FAIR_OPS[op][0]
    return f"import torch\n\n\ndef fused_operator(x0):\n    t0 = {line}\n    return t0\n{inputs}"


def fair_row(op: str, size: str, verdict: dict[str, Any], cuda: bool) -> dict[str, Any]:
    events = _div(verdict.get("eager_ms"), verdict.get("time_ms"))
    graphs = _div(verdict.get("eager_graph_ms"), verdict.get("graph_ms"))
    correct = verdict.get("status") == "correct"
    passed = correct
    if cuda:
        passed = correct and events is not None and 0.95 <= events <= 1.05
    keys = ("status", "reason", "time_ms", "eager_ms", "graph_ms", "eager_graph_ms")
    # Each side's spread too: equal minima with unequal means put a gap on the host's side
    # (launches late for some calls), unequal minima on the GPU's (every call slower).
    spread = [f"{side}_{q}_ms" for side in ("time", "eager") for q in ("min", "q1", "median", "q3")]
    return {"op": op, "size": size, **{k: verdict.get(k) for k in (*keys, *spread)},
            "events_ratio": events, "graph_ratio": graphs, "pass": passed}  # fmt: skip


def part_b(args: argparse.Namespace) -> list[dict[str, Any]]:
    from drtriton.verify import Options, verify

    cuda = args.device.startswith("cuda")
    # torch.compile is not the comparison here, and costs seconds per task.
    opts = Options(device=args.device, compile_baseline=False)
    jobs = [(op, size, shape, same) for size, shape in (GPU_SHAPES if cuda else CPU_SHAPES).items()
            for same in ((False, True) if cuda else (False,)) for op in FAIR_OPS]  # fmt: skip
    rows = []
    for op, size, shape, same in tqdm(jobs, desc="fairness", unit="kernel"):
        try:
            verdict = verify(fair_task(op, shape, same), FAIR_OPS[op][1], opts).to_dict()
        except ResourceError as exc:  # the harness ran out of GPU memory: not a verdict
            verdict = {"status": "not_judged", "reason": str(exc)}
        rows.append(fair_row(op + ("=" if same else ""), size, verdict, cuda))
    return rows


def print_b(rows: list[dict[str, Any]]) -> None:
    print(f"{'op':<8} {'size':<6} {'status':<13} {'ms':>8} {'eager ms':>9} {'eager/ms':>8} "
          f"{'graph ms':>9} {'eager/graph':>11}  pass")  # fmt: skip
    for r in rows:
        print(f"{r['op']:<8} {r['size']:<6} {r['status']:<13} {fmt(r['time_ms'], 8)} "
              f"{fmt(r['eager_ms'], 9)} {fmt(r['events_ratio'], 8)} {fmt(r['graph_ms'], 9)} "
              f"{fmt(r['graph_ratio'], 11)}  {'yes' if r['pass'] else 'NO'}")  # fmt: skip
        if r["status"] != "correct":
            print(f"  reason: {r['reason']}")


# ---- (c) evaluation throughput --------------------------------------------------------------


def results_path(eval_dir: pathlib.Path) -> pathlib.Path:
    return eval_dir if eval_dir.is_file() else eval_dir / "results.jsonl"


def runs(stamped: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The records split into the runs that wrote them: a resumed evaluation copies the earlier
    calls' records into its results.jsonl, and a record that starts after every earlier one has
    finished opens a new run (within a run the other workers are still busy when one starts)."""
    out: list[list[dict[str, Any]]] = []
    last_finish = -math.inf
    for record in sorted(stamped, key=lambda r: r["started_at"]):
        if record["started_at"] >= last_finish:
            out.append([])
        out[-1].append(record)
        last_finish = max(last_finish, record["finished_at"])
    return out


def _span_s(run: list[dict[str, Any]]) -> float:
    return max(r["finished_at"] for r in run) - min(r["started_at"] for r in run)


def throughput(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Problems per minute over the records that carry started_at and finished_at: each run's
    records over its own span, and all of them over the spans' sum (the idle time between the
    calls of a resumed evaluation is not the evaluation's)."""
    stamped = [r for r in records if _number(r.get("started_at")) and _number(r.get("finished_at"))]
    per_run = [{"records": len(run), "span_s": round(_span_s(run), 1),
                "per_minute": _per_minute(len(run), _span_s(run))} for run in runs(stamped)]  # fmt: skip
    span_s = sum(run["span_s"] for run in per_run) if per_run else None
    return {"records": len(records), "stamped": len(stamped), "span_s": span_s,
            "per_minute": _per_minute(len(stamped), span_s or 0.0), "runs": per_run,
            "statuses": dict(collections.Counter(str(r.get("status")) for r in records))}  # fmt: skip


def _per_minute(n: int, span_s: float) -> float | None:
    return n / (span_s / 60) if span_s > 0 else None


def part_c(args: argparse.Namespace) -> dict[str, Any]:
    from drtriton.evaluate.store import read_results

    path = results_path(args.eval_dir)
    return {"results": str(path), **throughput(read_results(path))}


def print_c(c: dict[str, Any]) -> None:
    if "skipped" in c:
        print(f"(c) skipped: {c['skipped']}")
        return
    span = "-" if c["span_s"] is None else f"{c['span_s'] / 60:.1f} min"
    print(f"(c) {c['results']}: {c['records']} records, {c['stamped']} with start and finish "
          f"times, {len(c.get('runs', []))} runs over {span}: {fmt(c['per_minute'], 0)} "
          "problems/minute")  # fmt: skip
    for i, run in enumerate(c.get("runs", []), 1):
        print(f"  run {i}: {run['records']} records over {run['span_s'] / 60:.1f} min: "
              f"{fmt(run['per_minute'], 0)} problems/minute")  # fmt: skip
    for status, n in sorted(c["statuses"].items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {status:<16} {n:>4}")


# ---- driver ---------------------------------------------------------------------------------


def fmt(v: float | None, width: int) -> str:
    return f"{'-':>{width}}" if v is None else f"{v:{width}.3f}"


def _div(a: Any, b: Any) -> float | None:
    return a / b if _number(a) and _number(b) and b > 0 else None


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--parts", default="a,b,c", help="comma-separated parts to run (a,b,c)")
    ap.add_argument("--device", default="cuda", help="cuda[:N], or cpu (interpreter: no timing)")
    ap.add_argument("--kernelbench", type=pathlib.Path, default=ROOT.parent / "shared/kernelbench",
                    help="(a) KernelBench dev split: level1.jsonl, level2.jsonl")  # fmt: skip
    ap.add_argument("--kernels", type=int, default=12, help="(a) time bins, one kernel each")
    ap.add_argument("--limit", type=int, default=0, help="(a) scan only the first N problems")
    ap.add_argument("--max-input-gb", type=float, default=MAX_INPUT_GB,
                    help="(a) skip programs whose inputs exceed this (the GPU is shared)")  # fmt: skip
    ap.add_argument("--repeats", type=int, default=5, help="(a) verifications per kernel")
    ap.add_argument("--workers", type=int, default=6, help="(a) harness processes on the GPU")
    ap.add_argument("--work", type=pathlib.Path,
                    default=pathlib.Path(tempfile.gettempdir()) / "timing_noise",
                    help="(a) pairs and verdicts (kept: a rerun resumes; default %(default)s)")  # fmt: skip
    ap.add_argument(
        "--eval-dir",
        type=pathlib.Path,
        help="(c) a `drtriton eval kernelbench` directory (or its results.jsonl)",
    )
    ap.add_argument("--out", type=pathlib.Path, help="write the figures here as JSON")
    return ap.parse_args(argv)


def check_args(args: argparse.Namespace) -> None:
    """Every usage error before any work is done."""
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    bad = [p for p in parts if p not in PARTS]
    if bad or not parts:
        raise UserError(f"--parts takes a comma-separated subset of a,b,c, got {args.parts!r}")
    args.parts = [p for p in PARTS if p in parts]
    if not (args.device == "cpu" or args.device.startswith("cuda")):
        raise UserError(f"--device must be cpu or cuda[:N], got {args.device!r}")
    if args.kernels < 2 or args.repeats < 1 or args.workers < 1 or args.limit < 0:
        raise UserError("--kernels must be at least 2, --repeats and --workers at least 1")
    if args.max_input_gb <= 0:
        raise UserError(f"--max-input-gb must be positive, got {args.max_input_gb}")
    if args.device.startswith("cuda") and {"a", "b"} & set(args.parts):
        import torch

        if not torch.cuda.is_available():
            raise UserError(f"--device {args.device}: no GPU here (--device cpu: correctness)")
    if args.out is not None and not args.out.parent.resolve().is_dir():
        raise UserError(f"--out {args.out}: no directory {args.out.parent}")
    if "a" in args.parts:
        for level in (1, 2):
            if not (args.kernelbench / f"level{level}.jsonl").is_file():
                raise UserError(f"--kernelbench {args.kernelbench}: no level{level}.jsonl")
        if args.work.exists() and not args.work.is_dir():
            raise UserError(f"--work {args.work}: not a directory")
        try:  # the frontend, the teacher and the program facts are C++
            import drtriton._core  # noqa: F401
        except ImportError as exc:
            raise UserError(f"part a needs drtriton._core ({exc}): install drtriton, copy its "
                            "_core next to the sources (as kernelbench_eval.sh does) or set "
                            "PYTHONPATH") from None  # fmt: skip
    if "c" in args.parts and args.eval_dir is not None:
        if not results_path(args.eval_dir).is_file():
            raise UserError(f"--eval-dir {args.eval_dir}: no results.jsonl")


def run(args: argparse.Namespace) -> dict[str, Any]:
    data: dict[str, Any] = {}

    def save() -> None:  # after each part: a run cut short keeps what it measured
        if args.out is not None:
            write_text_atomic(args.out, json.dumps(data, indent=1) + "\n")

    if "a" in args.parts:
        args.work.mkdir(parents=True, exist_ok=True)
        data["a"] = part_a(args)
        save()
        print_a(data["a"])
    if "b" in args.parts:
        data["b"] = part_b(args)
        save()
        print(f"(b) one operator's work, hand-written kernel vs eager, device {args.device}")
        print_b(data["b"])
    if "c" in args.parts:
        data["c"] = part_c(args) if args.eval_dir else {"skipped": "no --eval-dir"}
        save()
        print_c(data["c"])
    return data


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        check_args(args)
        run(args)
    except UserError as exc:
        print(f"timing_noise: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

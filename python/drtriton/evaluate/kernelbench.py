"""`drtriton eval kernelbench`: optimize every KernelBench problem and measure the result.

KernelBench's method lives in the verifier (five correctness trials with fresh inputs, CUDA
events, L2 flush, warm-ups, eager and torch.compile timed in the same run); this module
schedules problems and records what `drtriton.optimize` and its final verification found.

    problems.jsonl ─► plan.json (the selection) ─► one child process per problem
        (python -m drtriton.evaluate.worker, wall-clock limit, device round-robin)
      ─► results.jsonl (appended, resumable) ─► summary.md + speedup.png

Failures are results: a problem whose worker crashes, hangs past --problem-timeout or whose
optimizer raises is recorded with its status and error, and the run goes on. --time-budget
stops starting problems once spent; the rest is "not run" in the summary (and a rerun with
the same --out picks it up).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import json
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from drtriton.errors import UserError
from drtriton.evaluate import memory
from drtriton.evaluate.metrics import speedup
from drtriton.evaluate.scheduler import AdmittedRun
from drtriton.evaluate.store import ResultStore, read_results
from drtriton.evaluate.summary import (
    Column,
    fmt_ms,
    fmt_text,
    fmt_x,
    precision_line,
    record_precision,
    write_summary,
)
from drtriton.evaluate.worker import DEFAULT_OPTIMIZER
from drtriton.files import write_text_atomic
from drtriton.jsonl import read_jsonl
from drtriton.supervisor import Child

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding drtriton/
PLAN_JSON = "plan.json"
RESULTS_JSONL = "results.jsonl"
# The search's calibration, shared by the problems of one evaluation (search.lazy.Calibration):
# a problem's search depends on what ran before it; delete the file to search one afresh.
CALIBRATION_JSON = "calibration.json"
TERM_GRACE_S = 10.0  # SIGTERM → SIGKILL: time for the verifier to kill its own workers
# The optimizer is asked to finish its search within this share of the problem timeout, so
# that the end-to-end verification of its answer fits in the rest. On the H200 (240 s per
# problem, seven problems per GPU) that verification took 20-107 s, and 0.7 left too little:
# L2 37 was verified correct at 241.6 s. On 2026-12-01 (six problems per H200, every GPU step
# under the lock) five level-2 convolution models at 240 s found and checked a hybrid, but their
# searches ended 10-60 s past the 144 s deadline (a fragment in flight, then the hybrid check)
# and the final verification, started at 139-203 s, did not finish.  On 2026-12-04 (level 3)
# ResNet101, GoogleNet and DenseNet201 timed out in their final verification's torch.compile
# of the whole model; that compilation now runs first, inside this share (optimize/pipeline.py:
# _compile_baseline_first), so the search of a large model is shorter by it.
SEARCH_SHARE = 0.5
# Seconds added to the problem timeout per GB of the problem's inputs, parameters and outputs
# (memory.problem_bytes): moving them is most of a large problem's time (each verification
# draws, copies to the host, writes, reads and compares every output set). H200, 2026-12-03,
# strict fp32, six per GPU: level-1 GEMMs of 0.2 GB took 88-127 s, L1 7 and L1 11 (4.3 GB
# each) 199 and 236 s, and L1 19 (ReLU, 12.9 GB) timed out at 240 s with its final
# verification started at 118 s (its search's single verification alone took 88 s).
TIMEOUT_S_PER_GB = 25.0


@dataclass
class RunConfig:
    device: str = "cpu"  # "cpu" or "cuda" (all visible GPUs) or "cuda:N" (that one)
    workers: int | None = None  # default: visible GPUs on cuda, 1 on cpu
    problem_timeout: float = 600.0  # wall-clock seconds per problem, optimize + verify
    timeout_s_per_gb: float = TIMEOUT_S_PER_GB  # added per GB moved (problem_timeout_s)
    time_budget: float | None = None  # no new problem starts after this many seconds
    max_ops: int = 5
    k: int = 2
    seed: int = 0
    optimizer: str = DEFAULT_OPTIMIZER  # "module:function"; tests inject a fake
    rerun_oom: bool = False  # recorded failures that ran out of GPU memory run again
    # Problems share a GPU while their estimated footprints fit in this share of its memory
    # (evaluate/memory.py); 0 turns the admission off.
    memory_share: float = memory.SHARE
    keep_slower: bool = False  # OptimizeConfig.keep_slower: a correct kernel counts, even slower
    precision: str = "fp32"  # the verifier's precision mode (OptimizeConfig.precision)
    # OptimizeConfig.batch_norm_kernels where set; None leaves OptimizeConfig's default.
    batch_norm_kernels: bool | None = None
    extra_pythonpath: list[str] = field(default_factory=list)


def problem_id(record: dict[str, Any]) -> str:
    return f"L{record['level']}_{record['problem_id']}"


def load_problems(
    path: Path,
    levels: Sequence[int] | None = None,
    limit: int | None = None,
    order: str = "interleaved",
) -> list[dict[str, Any]]:
    """The selected problems; `limit` applies per level.  Order "level": by level then problem
    id.  "interleaved" (default): one problem of each level in turn, so that a run cut short by
    --time-budget has reached every level (the first H200 run, in level order, reached nine
    level-1 matmuls and nothing else)."""
    records = list(read_jsonl(path, ("level", "problem_id", "name", "code"), "KernelBench problem"))
    present = sorted({int(r["level"]) for r in records})
    if levels:
        missing = [lv for lv in levels if lv not in present]
        if missing:
            raise UserError(f"{path}: no problems of level {missing} (levels present: {present})")
        records = [r for r in records if int(r["level"]) in levels]
    records.sort(key=lambda r: (int(r["level"]), int(r["problem_id"])))
    if limit is not None:
        count: dict[int, int] = {}
        kept = []
        for r in records:
            count[r["level"]] = count.get(r["level"], 0) + 1
            if count[r["level"]] <= limit:
                kept.append(r)
        records = kept
    if not records:
        raise UserError(f"{path}: no problems selected")
    if order == "interleaved":
        return _interleave(records)
    if order != "level":
        raise UserError(f"--order must be interleaved or level, not {order!r}")
    return records


def _interleave(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_level: dict[int, list[dict[str, Any]]] = {}
    for r in records:  # already sorted by (level, problem id)
        by_level.setdefault(int(r["level"]), []).append(r)
    queues = list(by_level.values())
    out: list[dict[str, Any]] = []
    for i in range(max(len(q) for q in queues)):
        out += [q[i] for q in queues if i < len(q)]
    return out


def devices_for(device: str, workers: int | None) -> list[str]:
    """The device of each worker slot: GPUs round-robin (cuda:0, cuda:1, ...) or cpu."""
    if device == "cpu":
        return ["cpu"] * (workers or 1)
    if device.startswith("cuda:"):
        return [device] * (workers or 1)
    if device != "cuda":
        raise UserError(f"--device must be cpu, cuda or cuda:N, not {device!r}")
    import torch

    gpus = torch.cuda.device_count()
    if gpus == 0:
        raise UserError("--device cuda: no CUDA device is visible")
    return [f"cuda:{i % gpus}" for i in range(workers or gpus)]


def plan_entries(problems: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": problem_id(p), "level": p["level"], "problem_id": p["problem_id"],
             "name": p["name"]} for p in problems]  # fmt: skip


def not_run(
    plan: Sequence[dict[str, Any]], results: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    done = {str(r["id"]) for r in results}
    return [p for p in plan if p["id"] not in done]


# --- one problem ---------------------------------------------------------------------------


def _unfused(segments: list[Any]) -> list[str]:
    """Why runs stayed in PyTorch, with what the search's fragments got (at most 12 lines)."""
    lines: list[str] = []
    for seg in segments:
        if isinstance(seg, dict) and not seg.get("fused"):
            lines.append(f"{'+'.join(map(str, seg.get('ops', [])))}: {seg.get('why', '')}")
            lines += [f"  {t}" for t in seg.get("tried", [])]
    return lines[:12]


def _tried(segments: list[Any]) -> list[str]:
    """What each fragment the search verified got, in every run (at most 24 lines): why a
    fused cover left an operator in PyTorch (L2 31 in bf16 kept its convolution there)."""
    lines: list[str] = []
    for seg in segments:
        if isinstance(seg, dict):
            lines += seg.get("tried", [])
    return lines[:24]


def build_record(problem: dict[str, Any], outcome: dict[str, Any], device: str,
                 seconds: float, precision: str = "fp32") -> dict[str, Any]:  # fmt: skip
    """The result record of one problem from its worker's outcome (or a failure's)."""
    verdict = outcome.get("verdict") or {}
    extra = verdict.get("extra") if isinstance(verdict.get("extra"), dict) else {}
    flat = {**extra, **verdict}  # the verifier's JSON flattens `extra` into the top level
    frontend = outcome.get("frontend") or {}
    segments = outcome.get("segments") or []
    opaque = frontend.get("opaque_calls")
    error = outcome.get("error")
    if verdict:
        status = str(verdict.get("status"))
    elif outcome.get("status"):
        status = outcome["status"]  # timeout / crashed (the parent), unsupported (the worker)
    else:
        status = "optimize_error" if outcome.get("traceback") else "no_kernel"
    return {
        "id": problem_id(problem),
        "level": problem["level"],
        "problem_id": problem["problem_id"],
        "name": problem["name"],
        "device": device,
        # The mode the problem was judged and timed in (a failure before any verdict: the
        # mode it was asked in).
        "precision": flat.get("precision") or precision,
        "status": status,
        "correct": bool(verdict.get("correct")) and status == "correct",
        "time_ms": flat.get("time_ms"),
        "eager_ms": flat.get("eager_ms"),
        "compile_ms": flat.get("compile_ms"),
        "speedup": flat.get("speedup"),
        "speedup_vs_compile": flat.get("speedup_vs_compile"),
        "eager_tf32_ms": flat.get("eager_tf32_ms"),
        "speedup_vs_tf32": speedup(flat.get("eager_tf32_ms"), flat.get("time_ms")),
        "compile_error": flat.get("compile_error"),
        "n_ops": frontend.get("n_ops"),
        "n_catalog": frontend.get("n_catalog"),
        "fully_mapped": frontend.get("fully_mapped"),
        "fused_segments": sum(1 for s in segments if isinstance(s, dict) and s.get("fused")),
        "segments": len(segments),
        "opaque_ops": len(opaque) if isinstance(opaque, list | tuple) else opaque,
        "opaque_calls": opaque if isinstance(opaque, list | tuple) else None,
        "reason": verdict.get("reason"),
        # Input sets judged correct only as no less exact than eager in the mode, where eager
        # is itself outside the tolerance (verify/compare.py _less_exact_than_baseline).
        "baseline_error_sets": flat.get("baseline_error_sets"),
        "unfused": _unfused(segments),
        "tried": _tried(segments),
        "kernel": outcome.get("kernel"),
        "seconds": round(seconds, 2),
        # Seconds the problem's process waited for the GPU's lock and held it exclusively.
        "lock_wait_s": (outcome.get("gpu_lock") or {}).get("wait_s"),
        "exclusive_s": (outcome.get("gpu_lock") or {}).get("exclusive_s"),
        "optimize_seconds": outcome.get("optimize_seconds"),
        # Where the final verification's time went (verdict extras): its wall and lock
        # seconds, each worker request's seconds, its timing rounds and phases.
        "verification": {k: flat[k] for k in VERIFICATION_COSTS if k in flat} or None,
        # And the search's own verifications, summed (search.costs_summed).
        "search_verifications": outcome.get("search_costs"),
        "error": error,
        "traceback": outcome.get("traceback"),
    }


VERIFICATION_COSTS = ("wall_s", "lock_wait_s", "exclusive_s", "request_s", "timing", "timing_s")


def problem_timeout_s(problem: dict[str, Any], cfg: RunConfig) -> float:
    """The problem's wall-clock limit: --problem-timeout plus cfg.timeout_s_per_gb per GB of
    its inputs, parameters and outputs (read on the meta device; 0 where they cannot be)."""
    moved = memory.problem_bytes(problem["code"]).moved if cfg.timeout_s_per_gb else 0
    return cfg.problem_timeout + cfg.timeout_s_per_gb * moved / 1e9


class Stopped(Exception):
    """The run was interrupted while this problem ran: it is left for the next run."""


def run_problem(problem: dict[str, Any], device: str, cfg: RunConfig, out_dir: Path,
                stop: threading.Event) -> dict[str, Any]:  # fmt: skip
    """Runs one problem in a child process; returns its record (failures included)."""
    pid = problem_id(problem)
    kernel = out_dir / "kernels" / f"{pid}.py"
    log = out_dir / "logs" / f"{pid}.log"
    timeout = problem_timeout_s(problem, cfg)
    config = {"device": device, "mode": "train", "max_ops": cfg.max_ops, "k": cfg.k,
              "seed": cfg.seed, "time_budget_s": round(SEARCH_SHARE * timeout, 1),
              "calibration_file": str(out_dir / CALIBRATION_JSON),
              "verdicts_file": str(out_dir / "verdicts" / f"{pid}.jsonl"),
              "keep_slower": cfg.keep_slower, "precision": cfg.precision,
              # KernelBench judges the example shapes: no exports and verifications at other
              # batches, which would double the inputs of problems that already fill a GPU.
              "any_batch": False}  # fmt: skip
    if cfg.batch_norm_kernels is not None:
        config["batch_norm_kernels"] = cfg.batch_norm_kernels
    job = {"problem": problem, "optimizer": cfg.optimizer, "config": config,
           "kernel_path": str(kernel)}  # fmt: skip
    start, started_at = time.monotonic(), time.time()
    with tempfile.TemporaryDirectory(prefix="drtriton-eval-") as tmp:
        job_path, result_path = Path(tmp) / "job.json", Path(tmp) / "result.json"
        job_path.write_text(json.dumps(job))
        # Its own session (supervisor.Child): a stop takes the verifier's workers with it.
        child = Child([sys.executable, "-m", "drtriton.evaluate.worker", str(job_path),
                       str(result_path)], log, env=_child_env(cfg))  # fmt: skip
        ended = child.wait(deadline=start + timeout, stop=stop)
        if ended != "exited":
            child.stop(grace=TERM_GRACE_S)  # SIGTERM first: the verifier kills its workers
        timed_out = ended == "deadline"
        seconds = time.monotonic() - start
        if stop.is_set() and not timed_out and child.returncode != 0:
            raise Stopped(pid)
        outcome = _outcome(child.returncode, timed_out, result_path, log, timeout)
    if kernel.exists():
        outcome["kernel"] = str(kernel.relative_to(out_dir))
    record = build_record(problem, outcome, device, seconds, cfg.precision)
    # When it ran (unix seconds): throughput over a run is records / (last end - first start).
    record["started_at"], record["finished_at"] = round(started_at, 3), round(time.time(), 3)
    record["timeout_s"] = round(timeout, 1)
    return record


def _child_env(cfg: RunConfig) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(PACKAGE_ROOT), *cfg.extra_pythonpath, env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


def _outcome(returncode: int | None, timed_out: bool, result_path: Path, log: Path,
             timeout: float) -> dict[str, Any]:  # fmt: skip
    if timed_out:
        # The worker writes its result atomically before it exits; an exit that then hangs
        # (Inductor's compile pool shutting down: L2 49 on the H200, verified correct at 230 s
        # and killed at 240 s) does not undo the result.
        with contextlib.suppress(OSError, json.JSONDecodeError):
            return json.loads(result_path.read_text())
        return {"status": "timeout", "error": f"no result within the problem timeout of "
                f"{timeout:g} s{_log_tail(log)}"}  # fmt: skip
    if returncode == 0 and result_path.exists():
        try:
            return json.loads(result_path.read_text())
        except json.JSONDecodeError:
            pass
    return {"status": "crashed",
            "error": f"the problem's worker exited with code {returncode}{_log_tail(log)}"}  # fmt: skip


def _log_tail(log: Path, limit: int = 800) -> str:
    with contextlib.suppress(OSError):
        data = log.read_bytes()[-limit:].decode(errors="replace").strip()
        if data:
            return f"; log tail: {data}"
    return ""


# --- the run -------------------------------------------------------------------------------


@dataclass
class RunOutcome:
    ran: int  # problems run now
    results: int  # records in results.jsonl
    not_run: int  # selected problems with no record
    summary: Path


def run_kernelbench(problems: Sequence[dict[str, Any]], out_dir: Path, cfg: RunConfig,
                    *, source: str = "", progress: bool = True) -> RunOutcome:  # fmt: skip
    """Runs every selected problem that has no record in out_dir/results.jsonl yet."""
    devices = devices_for(cfg.device, cfg.workers)
    _same_precision(out_dir / RESULTS_JSONL, cfg.precision)
    for sub in ("kernels", "logs"):
        (out_dir / sub).mkdir(parents=True, exist_ok=True)
    plan = plan_entries(problems)
    write_text_atomic(out_dir / PLAN_JSON, json.dumps(
        {"source": source, "config": asdict(cfg), "problems": plan}, indent=1))  # fmt: skip
    with ResultStore(out_dir / RESULTS_JSONL) as store:
        again = out_of_memory_ids(out_dir / RESULTS_JSONL) if cfg.rerun_oom else set()
        todo = [p for p in problems if problem_id(p) not in store.done or problem_id(p) in again]
        ran = _schedule(todo, devices, cfg, out_dir, store, progress)
    outcome_summary = summarize_dir(out_dir)
    results = read_results(out_dir / RESULTS_JSONL)
    return RunOutcome(ran, len(results), len(not_run(plan, results)), outcome_summary)


def _same_precision(path: Path, precision: str) -> None:
    """A resumed run must be in the precision of the records it resumes: a directory with
    both would compare kernels judged and timed in different modes in one table."""
    if not path.exists():
        return
    found = sorted({record_precision(r) for r in read_results(path)} - {precision})
    if found:
        raise UserError(f"{path.parent} holds results in precision {', '.join(found)}, "
                        f"not {precision}: resume with that --precision or use another "
                        "--out")  # fmt: skip


def out_of_memory_ids(path: Path) -> set[str]:
    """Problems recorded as not correct whose record mentions running out of GPU memory
    anywhere (the final verification, a fragment, the reference): with six problems on one
    H200, 13 of 63 records were such failures of sharing, not of the kernels."""
    return {str(r["id"]) for r in read_results(path) if ran_out_of_memory(r)}


def ran_out_of_memory(record: dict[str, Any]) -> bool:
    """A record not correct that mentions running out of GPU memory anywhere."""
    return not record.get("correct") and "out of memory" in json.dumps(record).lower()


def lost_a_candidate_to_memory(record: dict[str, Any]) -> bool:
    """A correct record whose search could not judge a candidate for want of GPU memory (twice:
    search.py VerdictCache), so that a slower one may stand. H100, bf16, six problems at once
    (results h100-2026-12-07c): L2 34's first candidate ran out of memory and its second, 3.01
    ms, was kept, where the first had run 1.64 ms alone before (0.48x torch.compile, not
    0.90x)."""
    tried = record.get("tried") or []
    return bool(record.get("correct")) and any(
        "out_of_memory" in t or "out of memory" in t.lower() for t in tried
    )


def _schedule(todo: Sequence[dict[str, Any]], devices: list[str], cfg: RunConfig,
              out_dir: Path, store: ResultStore, progress: bool) -> int:  # fmt: skip
    """Keeps one problem per worker slot in flight until the work or the time budget ends;
    a problem that ran out of GPU memory beside others runs once more, alone, and one whose
    search lost a candidate to memory runs again alone after the rest (its record is stored
    first and the second run's, where it finishes, replaces it)."""
    from tqdm import tqdm

    start = time.monotonic()
    stop = threading.Event()
    ran = correct = 0
    bar = tqdm(total=len(todo), disable=not progress, unit="problem", desc="kernelbench")
    with cf.ThreadPoolExecutor(max_workers=len(devices)) as pool:

        def submit(device: str, problem: dict[str, Any]) -> cf.Future[dict[str, Any]]:
            return pool.submit(run_problem, problem, device, cfg, out_dir, stop)

        run = AdmittedRun(todo, dict(Counter(devices)), _admission(devices, cfg), submit,
                          keep_starting=lambda: _within(cfg.time_budget, start),
                          retry_alone=lambda _p, f: ran_out_of_memory(f.result()),
                          rerun_alone_later=lambda p, f: _rerun_alone(p, f.result(), cfg, start))  # fmt: skip
        stored: dict[int, bool] = {}  # id() of each problem recorded -> its record's correct
        try:
            for problem, future in run:
                record = future.result()
                store.append(record)
                first = id(problem) not in stored
                correct += record["correct"] - stored.get(id(problem), False)
                stored[id(problem)] = record["correct"]
                ran += first
                bar.update(int(first))
                bar.set_postfix(correct=correct, last=record["status"])
        except BaseException:
            stop.set()  # children are killed; problems in flight stay unrecorded (not run)
            for future in run.in_flight:
                with contextlib.suppress(Exception):
                    future.result()  # waits for the child to be killed
            raise
        finally:
            bar.close()
    return ran


def _admission(devices: list[str], cfg: RunConfig) -> memory.Admission:
    """GPU memory admission (evaluate/memory.py); none on the CPU or with memory_share 0."""
    on_gpu = any(d.startswith("cuda") for d in devices)
    budgets = memory.gpu_budgets(devices, cfg.memory_share) if on_gpu and cfg.memory_share else {}
    return memory.Admission(budgets, lambda problem: memory.footprint(problem["code"]))


def _rerun_alone(problem: dict[str, Any], record: dict[str, Any], cfg: RunConfig,
                 start: float) -> bool:  # fmt: skip
    """Whether to run `problem` once more with the GPU to itself after the rest: it is correct
    but lost a candidate to memory, and a whole run alone still fits the time budget (a run
    cut off is not recorded, and the correct record stands)."""
    if not lost_a_candidate_to_memory(record):
        return False
    left = None if cfg.time_budget is None else cfg.time_budget - (time.monotonic() - start)
    return left is None or left > problem_timeout_s(problem, cfg)


def _within(budget: float | None, start: float) -> bool:
    return budget is None or time.monotonic() - start < budget


# --- the summary ---------------------------------------------------------------------------

COLUMNS = (
    Column("level", "level"),
    Column("id", "problem_id"),
    Column("name", "name", fmt_text(40)),
    Column("status", "status"),
    Column("kernel ms", "time_ms", fmt_ms),
    Column("eager ms", "eager_ms", fmt_ms),
    Column("compile ms", "compile_ms", fmt_ms),
    Column("vs eager", "speedup", fmt_x),
    Column("vs compile", "speedup_vs_compile", fmt_x),
    Column("ops", "n_ops", lambda v: "" if v is None else str(v)),
    Column("fused", "fused_segments", lambda v: "" if v is None else str(v)),
    Column("opaque", "opaque_ops", lambda v: "" if v is None else str(v)),
    Column("s", "seconds", lambda v: "" if v is None else f"{v:.0f}"),
    Column("error", "error", fmt_text(80)),
)


def summarize_dir(out_dir: Path) -> Path:
    """Rebuilds out_dir/summary.md and speedup.png from results.jsonl (and plan.json)."""
    results_path = out_dir / RESULTS_JSONL
    if not results_path.exists():
        raise UserError(f"{out_dir}: no {RESULTS_JSONL} (run `drtriton eval kernelbench` first)")
    results = read_results(results_path)
    plan: dict[str, Any] = {}
    if (out_dir / PLAN_JSON).exists():
        plan = json.loads((out_dir / PLAN_JSON).read_text())
    missing = not_run(plan.get("problems", []), results)
    config = plan.get("config", {})
    devices = sorted({str(r.get("device")) for r in results})
    preamble = [
        precision_line(results, config.get("precision", "fp32")),
        f"Problems: `{plan.get('source', '?')}`; devices: {', '.join(devices) or '-'}; "
        f"results: {len(results)}; search: max_ops={config.get('max_ops', '?')}, "
        f"k={config.get('k', '?')}; problem timeout {config.get('problem_timeout', '?')} s"
        f"{_per_gb(config)}.",
        "Method: the verifier's (five correctness trials with fresh inputs; on a GPU CUDA events, "
        "L2 flush, warm-ups, eager and torch.compile timed in the same run as the kernel).",
    ]
    if config.get("keep_slower"):
        preamble.append("--keep-slower: where no kernel beat PyTorch, the least slow verified "
                        "one was kept, so correct counts kernels slower than eager too.")  # fmt: skip
    if config.get("batch_norm_kernels") is False:  # None: OptimizeConfig's default (on)
        preamble.append("--no-batch-norm-kernels: batch norm's batch statistics stayed "
                        "PyTorch calls (batch_norm_train was not searched).")  # fmt: skip
    return write_summary(out_dir, results, missing, title="KernelBench evaluation",
                         preamble=preamble, columns=COLUMNS)  # fmt: skip


def _per_gb(config: dict[str, Any]) -> str:
    per_gb = config.get("timeout_s_per_gb")
    return f" + {per_gb:g} s per GB of inputs, parameters and outputs" if per_gb else ""

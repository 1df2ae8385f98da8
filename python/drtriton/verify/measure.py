"""GPU timing of a verification, and of a trusted task alone (the search's operator costs).

One hold of the GPU's lock, exclusive, covers all of a verification's timed calls:
1. warm-ups of the candidate (in its worker) and of eager and torch.compile (here);
2. rounds: one call each of candidate, eager, eager with PyTorch's TF32 defaults (fp32 mode,
   tasks with a convolution or a product) and torch.compile, in rotating order (rounds.py), every
   call after an L2 flush and bracketed by CUDA events (timing.py), until every median is known
   to within Options.target_ci or the round or time budget is spent (or, with
   Options.stop_when_decided, until the candidate's and eager's medians are told apart:
   rounds.py);
3. the same for CUDA-graph replays of the candidate and of eager (Options.graph), in a second
   exclusive hold.
The checked calls' outputs (and one graph replay's) are copied to the host right after each
exclusive hold, under a shared one, written and read between holds (file work holds no lock:
gpu_lock.py), and compared with the references under a shared hold. Every figure is
re-measured for every candidate: nothing is cached but the compiled baseline (baselines.py).

Which time decides. `time_ms`, `eager_ms` and `speedup` (the verdict's DESIGN.md fields, and
what the search, the RL reward and the evaluation use) are the KernelBench method: events
around each call after the flush, plus the launch slack (timing.py), and of those times their
10% trimmed mean (timing.TRIM says why; `*_median_ms` and the quartiles are beside it). That is
what a user who calls the kernel from Python in a loop pays: when the launches of one call take
longer than the flush and the slack (~0.56 ms), the GPU waits for them and the wait is charged.
`graph_ms` and `eager_graph_ms` (extra fields) replay a captured graph instead, so no launch
cost is in them; `time_ms - graph_ms` is what the slack leaves of the candidate's launch
overhead. They are reported, not used: a graph hides the host cost a Triton launcher adds
(10-30 us per launch, more on a loaded host) that an eager user pays once it exceeds the
slack, and a candidate that cannot be captured would have no time at all.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from drtriton.verify import compare as cmp
from drtriton.verify import gpu_lock
from drtriton.verify.baselines import (
    Baselines,
    in_mode_of,
    needs_tf32_series,
    with_tf32_defaults,
)
from drtriton.verify.channel import Rejected, WorkerChannel
from drtriton.verify.inputs import InputSets
from drtriton.verify.options import Options
from drtriton.verify.precision import STRICT, mode
from drtriton.verify.references import fetch_output, guard_task, onto, tensor_bytes
from drtriton.verify.rounds import Series, interleave, relative_halfwidth
from drtriton.verify.task import Task, load_task
from drtriton.verify.timing import Bench, Flush, summarize
from drtriton.verify.verdict import Verdict

SUSPICIOUS_SPEEDUP = 50.0
# Checked timed outputs stay on the GPU until the rounds end, then go to the host inside the
# exclusive hold (~0.1 s a GB): at most this many bytes of them (two 1 GB KernelBench outputs).
CHECK_BYTES = 2 << 30
DECISION = "events"  # the time decisions use (module docstring)


class Timing:
    """The timing of one verified candidate (its worker has passed every correctness trial)."""

    def __init__(self, worker: WorkerChannel, task: Task, reference: Any, inputs: InputSets,
                 refs: list[cmp.Expected], opts: Options, baselines: Baselines,
                 seen_ops: set[str]) -> None:  # fmt: skip
        self.worker, self.task, self.reference = worker, task, reference
        self.inputs, self.refs, self.opts = inputs, refs, opts
        self.baselines, self.seen_ops = baselines, seen_ops
        self.count = inputs.timing_count(opts.trials)  # sets the timed calls rotate through
        self.mode = mode(opts.precision)  # eager and torch.compile run in it, as the candidate
        self.extra: dict[str, Any] = {}
        self.checked: list[int] = []  # the candidate's checked calls, then its graph replay's
        self.graph_checked: list[int] = []

    def run(self, verdict: Verdict) -> None:
        opts = self.opts
        hold = self.worker.hold
        with torch.no_grad():
            with hold(opts.device, gpu_lock.SHARED):
                benches = self._baseline_benches()
                with hold(opts.device, gpu_lock.EXCLUSIVE):
                    series, rounds = self._event_rounds(benches)
                # The checked outputs go to the host after the exclusive hold, under the shared
                # one: a copy disturbs no timing, and inside the hold every other process's
                # timing waited for it (H200, 2026-12-03: 3.4 s for a 4.3 GB output, L1 7).
                self._end_rounds()
            # Between holds (file work), and before the graph phase, whose failure may stop
            # the worker and its directory.
            kept = fetch_output(self.worker, "timed.pt")
            graphs: list[Series] = []
            if opts.graph:
                with hold(opts.device, gpu_lock.SHARED):
                    with hold(opts.device, gpu_lock.EXCLUSIVE):
                        graphs = self._graph_rounds(benches)
                        for bench in benches.values():
                            bench.graph = None  # its memory pool goes before the comparison
                    graphs = self._end_graph(graphs)  # shared, as above (3.0 s for L1 7)
            graph_kept = fetch_output(self.worker, "graph.pt") if graphs else []
            del benches
            with hold(opts.device, gpu_lock.SHARED):
                self._check_outputs(verdict, kept, "timed call")
                if verdict.status != "correct":
                    return
                if graphs and self._graph_output_ok(graph_kept):
                    self._record_graphs(graphs)
        self._record(verdict, series, rounds)

    # -- the rounds ------------------------------------------------------------------------
    def _baseline_benches(self) -> dict[str, Bench]:
        opts = self.opts
        flush = Flush(opts.launch_slack_us)
        if not opts.baselines:
            return {}
        with self.worker.harness_work():
            sets = [self.inputs.make(i) for i in range(self.count)]
            eager = Bench(in_mode_of(self.mode, self.reference), sets, flush)
            benches = {"eager": eager}
            if self.mode == STRICT and needs_tf32_series(self.seen_ops):
                benches["eager_tf32"] = Bench(with_tf32_defaults(self.reference), sets, flush,
                                              eager.buffers)  # fmt: skip
            if opts.compile_baseline:
                compiled, error = self.baselines.compiled(self.task.source, self.reference,
                                                          sets[0], opts.device, opts.eval_mode,
                                                          self.mode)  # fmt: skip
                if compiled is not None:
                    benches["compile"] = Bench(in_mode_of(self.mode, compiled), sets, flush,
                                               eager.buffers)  # fmt: skip
                else:
                    self.extra["compile_error"] = error
        return benches

    def _event_rounds(self, benches: dict[str, Bench]) -> tuple[list[Series], int]:
        opts = self.opts
        out_bytes = tensor_bytes(self.refs[0].values)
        # Seconds of each phase of the exclusive hold (verdict extra "timing_s"): the hold
        # outlasted the rounds' budget on the H200 (2026-12-01: 2.75 s on average against 2 s).
        stamps = [time.monotonic()]
        self.worker.request({
            "op": "time_begin", "sets": [self.inputs.spec(i) for i in range(self.count)],
            "warmup": opts.warmup, "slack_us": opts.launch_slack_us,
            "check_p": min(1.0, opts.check_timed / max(opts.runs, 1)),
            "check_max": max(1, min(2 * opts.check_timed, CHECK_BYTES // max(out_bytes, 1))),
        })  # fmt: skip
        stamps.append(time.monotonic())
        with self.worker.harness_work():
            for bench in benches.values():
                bench.warm(opts.warmup)
        stamps.append(time.monotonic())
        series = [Series("candidate", lambda r: self._candidate("time_run", r))]
        series += [Series(name, self._harness(bench.timed)) for name, bench in benches.items()]
        decide = ("candidate", "eager") if opts.stop_when_decided else None
        rounds = interleave(series, min_rounds=opts.runs, max_rounds=opts.max_runs,
                            target=opts.target_ci, budget_s=opts.timing_budget_s,
                            decide=decide)  # fmt: skip
        stamps.append(time.monotonic())
        phases = ("worker_begin", "harness_warm", "rounds")
        spans = zip(phases, stamps, stamps[1:], strict=False)  # stamps: one more than phases
        self.extra["timing_s"] = {name: round(b - a, 3) for name, a, b in spans}
        return series, rounds

    def _end_rounds(self) -> None:
        """The worker copies the checked calls' outputs to the host (after the exclusive hold;
        timing_s "worker_end")."""
        began = time.monotonic()
        self.checked = self.worker.request({"op": "time_end", "output": "timed.pt"})["check"]
        self.extra["timing_s"]["worker_end"] = round(time.monotonic() - began, 3)

    def _graph_rounds(self, benches: dict[str, Bench]) -> list[Series]:
        """Graph replays of the candidate and of eager; [] when the candidate's graph could
        not be captured (the reason is recorded). A failure here leaves the event times and
        the verdict alone, unless it is a verdict on genuineness (torch computing)."""
        opts = self.opts
        try:
            reply = self.worker.request({"op": "graph_begin", "rounds": graph_rounds(opts)})
            if not reply.get("graph"):
                self.extra["graph_error"] = str(reply.get("reason", ""))[:300]
                return []
            series = [Series("graph", lambda r: self._candidate("graph_run", r))]
            eager = benches.get("eager")
            if eager is not None:
                with self.worker.harness_work():
                    problem = eager.capture()
                if problem is None:
                    series.append(Series("eager_graph", self._harness(eager.replayed)))
                else:
                    self.extra["eager_graph_error"] = problem
            rounds = graph_rounds(opts)
            interleave(series, min_rounds=rounds, max_rounds=rounds, target=0.0, budget_s=math.inf)
            return series
        except Rejected as rejected:
            return self._graph_failed(rejected)

    def _end_graph(self, graphs: list[Series]) -> list[Series]:
        """The checked replay's output to the host (after the exclusive hold); the graph
        series, or [] when that failed."""
        if not graphs:
            return []
        try:
            reply = self.worker.request({"op": "graph_end", "output": "graph.pt"})
        except Rejected as rejected:
            return self._graph_failed(rejected)
        self.graph_checked = reply["check"]
        return graphs

    def _graph_failed(self, rejected: Rejected) -> list[Series]:
        """A failure in the graph phase leaves the event times and the verdict alone, unless
        it is a verdict on genuineness (torch computing, timers patched)."""
        if rejected.kwargs.get("status") in ("not_genuine", "forbidden"):
            raise rejected
        self.extra["graph_error"] = f"{rejected.kwargs.get('status')}: {rejected}"[:300]
        return []

    def _candidate(self, op: str, index: int) -> float | None:
        reply = self.worker.request({"op": op, "run": index})
        ms = reply.get("ms")
        if not isinstance(ms, int | float) or not math.isfinite(ms) or ms <= 0:
            raise Rejected({"status": "crashed", "reason": "the worker's timings are malformed"})
        return None if reply.get("checked") else float(ms)

    def _harness(self, timed: Callable[[int], tuple[float, Any]]) -> Callable[[int], float]:
        def run(index: int) -> float:
            with self.worker.harness_work():
                return timed(index)[0]

        return run

    # -- outputs -----------------------------------------------------------------------------
    def _check_outputs(self, verdict: Verdict, kept: list[Any], what: str) -> None:
        if len(kept) != len(self.checked):
            raise Rejected({"status": "crashed", "reason": "timed outputs are missing"})
        with self.worker.harness_work():
            problem = self._first_mismatch(self.checked, kept)
        if problem:
            verdict.status, verdict.reason = "wrong_answer", f"{what} {problem}"

    def _graph_output_ok(self, kept: list[Any]) -> bool:
        problem = self._first_mismatch(self.graph_checked, kept)
        if problem:
            self.extra["graph_error"] = f"graph replay {problem}"[:300]
        return problem is None

    def _first_mismatch(self, runs: list[int], kept: list[Any]) -> str | None:
        """'RUN: why' of the first kept output that differs from its set's reference."""
        for run, out in zip(runs, kept, strict=False):
            expected = self.refs[int(run) % self.count]
            problem = cmp.judge(onto(out, torch.device(self.opts.device)), expected,
                                *self.opts.tolerances())  # fmt: skip
            if problem:
                return f"{run}: {problem}"
        return None

    # -- the verdict's fields ----------------------------------------------------------------
    def _record_graphs(self, graphs: list[Series]) -> None:
        times = {s.name: s.times for s in graphs if s.times}
        if "graph" in times:
            self.extra.update(_fields("graph", times["graph"]))
        if "eager_graph" in times:
            self.extra.update(_fields("eager_graph", times["eager_graph"]))
        if "graph" in times and "eager_graph" in times:
            self.extra["speedup_graph"] = self.extra["eager_graph_ms"] / self.extra["graph_ms"]

    def _record(self, verdict: Verdict, series: list[Series], rounds: int) -> None:
        times = {s.name: s.times for s in series if s.times}
        extra = verdict.extra
        extra.update(self.extra)
        extra["timing"] = {"rounds": rounds, "series": [s.name for s in series],
                           "decision": DECISION}  # fmt: skip
        if "candidate" not in times:
            return
        cand = _fields("time", times["candidate"])
        extra.update({k: v for k, v in cand.items() if k != "time_ms"})
        extra["time_series"] = _series(next(s for s in series if s.name == "candidate"),
                                       self.count)  # fmt: skip
        verdict.time_ms = cand["time_ms"]
        if "eager" not in times:
            return
        eager = _fields("eager", times["eager"])
        extra.update({k: v for k, v in eager.items() if k != "eager_ms"})
        verdict.eager_ms = eager["eager_ms"]
        tf32 = times.get("eager_tf32")
        if self.mode == STRICT:  # the other modes have no strict-fp32 comparison to report
            extra["eager_tf32_ms"] = summarize(tf32)["trimmed"] if tf32 else verdict.eager_ms
        if "compile" in times:
            comp = _fields("compile", times["compile"])
            extra.update({k: v for k, v in comp.items() if k != "compile_ms"})
            verdict.compile_ms = comp["compile_ms"]
            extra["speedup_vs_compile"] = verdict.compile_ms / verdict.time_ms
        verdict.speedup = verdict.eager_ms / verdict.time_ms
        # KernelBench PR 82: implausible speedups are how timing exploits show. Flag, not reject:
        # a fused kernel can legitimately beat a chain of eager operators by a large factor.
        if verdict.speedup > SUSPICIOUS_SPEEDUP:
            extra["suspicious"] = f"speedup {verdict.speedup:.1f}x over eager"


def _series(series: Series, sets: int) -> dict[str, list[Any]]:
    """Every counted time of `series` (us, 3 decimals) with its round and input set: where a
    median moved between verifications, whether one set or one stretch of rounds moved it."""
    return {"us": [round(t * 1000, 3) for t in series.times], "round": list(series.counted),
            "set": [r % sets for r in series.counted]}  # fmt: skip


def graph_rounds(opts: Options) -> int:
    return max(5, opts.runs // 3)


def _fields(prefix: str, times: list[float]) -> dict[str, float]:
    """`prefix`_ms (the trimmed mean: timing.TRIM says why) and its spread: median, mean,
    quartiles, extremes, count, and the 95% interval of the median relative to it
    (`prefix`_ci, what the rounds' stopping rule reads)."""
    stats = summarize(times)
    out = {f"{prefix}_ms": stats["trimmed"]}
    for key in ("median", "mean", "q1", "q3", "min", "max"):
        out[f"{prefix}_{key}_ms"] = stats[key]
    out[f"{prefix}_runs"] = int(stats["n"])
    ci = relative_halfwidth(times)
    out[f"{prefix}_ci"] = ci if math.isfinite(ci) else None
    return out


def time_task(source: str, device: str, *, runs: int = 10, warmup: int = 3, seed: int = 0,
              eval_mode: bool = False, options: Options | None = None,
              precision: str = "fp32") -> dict[str, float]:  # fmt: skip
    """Eager time of a trusted task alone: time_tasks of that one task."""
    return time_tasks([source], device, runs=runs, warmup=warmup, seed=seed,
                      eval_mode=eval_mode, options=options, precision=precision)[0]  # fmt: skip


def time_tasks(sources: Sequence[str], device: str, *, runs: int = 10, warmup: int = 3,
               seed: int = 0, eval_mode: bool = False, options: Options | None = None,
               precision: str = "fp32") -> list[dict[str, float]]:  # fmt: skip
    """Eager times of trusted tasks (the search's costs of leaving operators in PyTorch), each
    measured as a candidate's eager baseline is: in Options.precision (strict float32 by
    default), L2 flushed, launch slack,
    events, rounds until every median is known to Options.target_ci. All tasks are timed in one
    exclusive hold, their calls interleaved round by round: one wait for the GPU instead of one
    per operator (the search timed a program's operators one hold each, and on the H200
    "operator costs timed in" took up to 33 s of a problem, mostly waiting for the lock).
    Returns timing.summarize's figures (ms) per task, in order. UserError when a task fails;
    torch.OutOfMemoryError passes through."""
    # At most 3x the minimum rounds and a quarter of a verification's budget per task.
    opts = options or Options(device=device, max_runs=3 * runs, precision=precision,
                              timing_budget_s=Options.timing_budget_s / 4 * len(sources))  # fmt: skip
    dev = torch.device(device)
    m = mode(opts.precision)  # the search's costs are in the mode its candidates are judged in
    with torch.no_grad(), torch.cuda.device(dev), gpu_lock.hold(device, gpu_lock.SHARED):
        flush = Flush(opts.launch_slack_us)
        benches = []
        for source in sources:
            task = load_task(source)
            reference = guard_task(lambda t=task: t.build_reference(dev, seed, eval_mode, m), m)
            sets = [guard_task(lambda k=k, t=task: t.make_inputs(k, seed, dev, m), m)
                    for k in range(2)]  # fmt: skip
            benches.append(Bench(in_mode_of(m, reference), sets, flush))
        series = [Series(f"task{i}", lambda r, b=bench: b.timed(r)[0])
                  for i, bench in enumerate(benches)]  # fmt: skip
        with gpu_lock.hold(device, gpu_lock.EXCLUSIVE):
            for bench in benches:
                bench.warm(warmup)
            interleave(series, min_rounds=runs, max_rounds=opts.max_runs,
                       target=opts.target_ci, budget_s=opts.timing_budget_s)  # fmt: skip
    return [summarize(s.times) for s in series]

"""The interleaved timing rounds (rounds.py) and the verification's timing phase (measure.py)
with the GPU faked: which calls run in which order, under which hold, and what the verdict
reports. The real timing runs in tests/verify/test_gpu.py on a GPU."""

from __future__ import annotations

import contextlib
import math
import statistics
from collections.abc import Iterator
from typing import Any

import pytest
import torch

from drtriton.verify import compare as cmp
from drtriton.verify import gpu_lock, measure
from drtriton.verify.baselines import Baselines
from drtriton.verify.channel import Rejected
from drtriton.verify.options import Options
from drtriton.verify.rounds import Series, disjoint, interleave, median_ci, relative_halfwidth
from drtriton.verify.task import load_task
from drtriton.verify.verdict import Verdict

# --- rounds.py ---------------------------------------------------------------------------


def _constant(name: str, log: list[tuple[int, str]], ms: float = 1.0) -> Series:
    def run(r: int) -> float:
        log.append((r, name))
        return ms

    return Series(name, run)


def test_rounds_rotate_which_series_goes_first() -> None:
    log: list[tuple[int, str]] = []
    series = [_constant(n, log) for n in ("cand", "eager", "compile")]
    rounds = interleave(series, min_rounds=4, max_rounds=4, target=0.0, budget_s=1e9)
    assert rounds == 4
    assert [n for _, n in log] == [
        "cand", "eager", "compile",
        "eager", "compile", "cand",
        "compile", "cand", "eager",
        "cand", "eager", "compile",
    ]  # fmt: skip
    assert all(len(s.times) == 4 for s in series)


def test_a_round_a_series_does_not_count_is_left_out() -> None:
    checked = {1, 3}
    cand = Series("cand", lambda r: None if r in checked else 2.0)
    rounds = interleave([cand], min_rounds=5, max_rounds=5, target=0.0, budget_s=1e9)
    assert rounds == 5 and cand.times == [2.0, 2.0, 2.0]


def test_rounds_stop_once_every_median_is_known_or_the_budget_is_spent() -> None:
    steady = Series("steady", lambda r: 1.0)
    rounds = interleave([steady], min_rounds=10, max_rounds=100, target=0.01, budget_s=1e9)
    assert rounds == 10  # already known to 0% after the minimum

    noisy_times = iter(range(1, 10_000))
    noisy = Series("noisy", lambda r: float(next(noisy_times)))  # never settles
    rounds = interleave([noisy], min_rounds=10, max_rounds=50, target=0.01, budget_s=1e9)
    assert rounds == 50

    ticks = iter(range(1000))
    noisy = Series("noisy", lambda r: float(r % 7 + 1))
    rounds = interleave([noisy], min_rounds=10, max_rounds=500, target=0.0, budget_s=14.5,
                        clock=lambda: float(next(ticks)))  # fmt: skip
    # The clock is read at the start and after each round from the minimum on (one tick per
    # read): after round k it reads k - 9, which passes 14.5 after round 24.
    assert rounds == 24


def test_rounds_asked_to_decide_stop_once_the_two_medians_are_told_apart() -> None:
    # Noisy enough that no median reaches 1%, yet 3x apart: decided after the minimum rounds.
    def jittery(name: str, base: float) -> Series:
        return Series(name, lambda r: base * (1.0 + 0.1 * (r % 5)))

    cand, eager = jittery("candidate", 3.0), jittery("eager", 1.0)
    rounds = interleave([cand, eager], min_rounds=10, max_rounds=100, target=0.01,
                        budget_s=1e9, decide=("candidate", "eager"))  # fmt: skip
    assert rounds == 10
    cand, eager = jittery("candidate", 3.0), jittery("eager", 1.0)
    rounds = interleave([cand, eager], min_rounds=10, max_rounds=100, target=0.01,
                        budget_s=1e9)  # fmt: skip
    assert rounds == 100  # without `decide`, the 1% target is never met
    # Overlapping intervals (the same distribution) never decide: the target or budget ends it.
    cand, eager = jittery("candidate", 1.0), jittery("eager", 1.0)
    rounds = interleave([cand, eager], min_rounds=10, max_rounds=40, target=0.01,
                        budget_s=1e9, decide=("candidate", "eager"))  # fmt: skip
    assert rounds == 40


def test_disjoint_needs_eight_times_a_side() -> None:
    assert not disjoint([1.0] * 7, [5.0] * 7)
    assert disjoint([1.0] * 8, [5.0] * 8)
    assert not disjoint([1.0, 5.0] * 8, [2.0, 6.0] * 8)


def test_the_decisive_time_is_a_trimmed_mean_that_a_mode_flip_barely_moves() -> None:
    from drtriton.verify.timing import TRIM, summarize, trimmed_mean

    assert TRIM == 0.1
    assert trimmed_mean([1.0, 2.0, 3.0, 4.0, 100.0]) == pytest.approx(22.0)  # n=5: nothing cut
    ten = [1.0] * 9 + [1000.0]  # one stalled launch in ten: cut
    assert trimmed_mean(sorted(ten)) == pytest.approx(1.0)
    # A bimodal kernel (77 or 84 us), 45% or 55% of calls in the low mode: the median jumps
    # between the modes, the trimmed mean moves by an eighth of the gap (0.9 of 7 us).
    low, high = [77.0] * 45 + [84.0] * 55, [77.0] * 55 + [84.0] * 45
    medians = summarize(low)["median"], summarize(high)["median"]
    trimmed = summarize(low)["trimmed"], summarize(high)["trimmed"]
    assert medians == (84.0, 77.0)
    assert abs(trimmed[0] - trimmed[1]) < 0.02 * 80


def test_the_median_interval_is_the_order_statistics_of_its_ranks() -> None:
    times = [float(i) for i in range(1, 31)]  # n = 30: ranks 9 and 22 (1-based)
    assert median_ci(times) == (9.0, 22.0)
    assert relative_halfwidth(times) == pytest.approx((22 - 9) / 2 / 16)
    assert relative_halfwidth([1.0] * 7) == math.inf  # too few to say


# --- measure.Timing with a fake worker and fake benches ------------------------------------


class Log:
    def __init__(self) -> None:
        self.mode: list[str] = []
        self.events: list[tuple[str, str | None]] = []  # (what, hold mode at the time)
        self.messages: list[dict[str, Any]] = []  # the requests to the worker
        self.modes_taken: list[str] = []  # every hold asked for, in order

    def note(self, what: str) -> None:
        self.events.append((what, self.mode[-1] if self.mode else None))

    @contextlib.contextmanager
    def hold(self, device: str, mode: str) -> Iterator[None]:
        self.modes_taken.append(mode)
        self.mode.append(gpu_lock.EXCLUSIVE if gpu_lock.EXCLUSIVE in self.mode else mode)
        try:
            yield
        finally:
            self.mode.pop()


class FakeBench:
    """timing.Bench's interface: each call notes itself; eager takes 2 ms, compile 1 ms."""

    def __init__(self, call: Any, sets: Any, flush: Any, buffers: Any = None) -> None:
        self.name = getattr(call, "bench_name", "?")
        self.graph: Any = None
        self.buffers = buffers if buffers is not None else [object()]
        self.ms = {"eager": 2.0, "eager_tf32": 1.5, "compile": 1.0}.get(self.name, 3.0)

    log: Log

    def warm(self, count: int) -> None:
        FakeBench.log.note(f"warm {self.name}")

    def timed(self, index: int, keep: bool = False) -> tuple[float, Any]:
        FakeBench.log.note(self.name)
        return self.ms, None

    def capture(self) -> str | None:
        return None

    def replayed(self, index: int, keep: bool = False) -> tuple[float, Any]:
        FakeBench.log.note(f"graph {self.name}")
        return self.ms / 2, None


class FakeWorker:
    """The worker's side of the timing protocol: candidate calls of 0.5 ms, round 2 checked."""

    def __init__(self, log: Log) -> None:
        self.log, self.workdir = log, "/nonexistent"
        self.deadline = 1e18

    @contextlib.contextmanager
    def harness_work(self) -> Iterator[None]:
        yield

    def hold(self, device: str, mode: str) -> Any:
        return self.log.hold(device, mode)

    def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        op = msg["op"]
        self.log.note(op)
        self.log.messages.append(msg)
        if op == "time_run":
            return {"ok": True, "ms": 0.5 + 0.001 * msg["run"], "checked": msg["run"] == 2}
        if op == "graph_run":
            return {"ok": True, "ms": 0.25}
        if op == "graph_begin":
            return {"ok": True, "graph": True}
        if op in ("time_end", "graph_end"):
            return {"ok": True, "check": [2] if op == "time_end" else [0]}
        return {"ok": True}


def _timing(monkeypatch: pytest.MonkeyPatch, **opts: Any) -> tuple[measure.Timing, Log]:
    log = Log()
    FakeBench.log = log
    monkeypatch.setattr(measure, "Flush", lambda slack_us: None)
    monkeypatch.setattr(measure, "Bench", FakeBench)

    def fetch(worker: Any, name: str) -> list[Any]:
        log.note(f"fetch {name}")
        return [[torch.ones(2)]]

    monkeypatch.setattr(measure, "fetch_output", fetch)
    monkeypatch.setattr(measure, "onto", lambda values, device: values)  # no GPU here

    def named(name: str) -> Any:
        def wrap(call: Any) -> Any:
            call.bench_name = name
            return call

        return wrap

    def in_mode_of(mode: Any, call: Any) -> Any:
        log.note(f"mode {mode.name}")  # the mode each baseline runs in
        return named("compile" if call == "compiled" else "eager")(lambda *a: None)

    monkeypatch.setattr(measure, "in_mode_of", in_mode_of)
    monkeypatch.setattr(measure, "with_tf32_defaults", lambda call: named("eager_tf32")(
        lambda *a: None))  # fmt: skip
    baselines = Baselines()
    monkeypatch.setattr(baselines, "compiled", lambda *a: ("compiled", None))
    task = load_task("import torch\ndef fused_operator(x0):\n    return torch.relu(x0)\n\n"
                     "def get_inputs():\n    return [torch.randn(2)]\n")  # fmt: skip

    class Inputs:
        seed = 0

        def timing_count(self, trials: int) -> int:
            return 2

        def spec(self, i: int) -> dict[str, Any]:
            return {"index": i, "seed": 0}

        def make(self, i: int) -> list[Any]:
            log.note(f"draw {i}")
            return [torch.ones(2)]

    refs = [cmp.Expected([torch.ones(2)], None), cmp.Expected([torch.ones(2)], None)]
    options = Options(device="cuda", runs=6, max_runs=6, **opts)
    seen = {"convolution"}  # a task whose eager speed depends on TF32: that series is timed too
    timing = measure.Timing(FakeWorker(log), task, torch.relu, Inputs(), refs, options,
                            baselines, seen)  # type: ignore[arg-type]  # fmt: skip
    return timing, log


def test_every_timed_call_is_interleaved_inside_one_exclusive_hold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    timing, log = _timing(monkeypatch)
    verdict = Verdict("correct")
    timing.run(verdict)
    timed = [(w, m) for w, m in log.events if w in ("time_run", "eager", "eager_tf32", "compile")]
    assert len(timed) == 4 * 6 and all(m == gpu_lock.EXCLUSIVE for _, m in timed)
    graph = [(w, m) for w, m in log.events if w in ("graph_run", "graph eager")]
    assert len(graph) == 2 * 5 and all(m == gpu_lock.EXCLUSIVE for _, m in graph)  # max(5, 6 // 3)
    order = [w for w, _ in timed]
    assert order[:4] == ["time_run", "eager", "eager_tf32", "compile"]
    assert order[4:8] == ["eager", "eager_tf32", "compile", "time_run"]  # rotated
    # The checked outputs are copied to the host after each exclusive hold, under a shared one
    # (a copy disturbs no timing; inside the hold every other process waited for it), and
    # their files are read between holds.
    ends = {w: m for w, m in log.events if w in ("time_end", "graph_end")}
    assert ends == {"time_end": gpu_lock.SHARED, "graph_end": gpu_lock.SHARED}
    fetched = [(w, m) for w, m in log.events if w.startswith("fetch")]
    assert fetched == [("fetch timed.pt", None), ("fetch graph.pt", None)]
    draws = [m for w, m in log.events if w.startswith("draw")]
    assert draws and all(m == gpu_lock.SHARED for m in draws)  # the sets, before the rounds

    unchecked = [0.5 + 0.001 * r for r in range(6) if r != 2]
    # The trimmed mean (5 times: floor(0.5) = 0 cut at each end, so the mean), the median beside.
    assert verdict.time_ms == pytest.approx(statistics.fmean(unchecked))
    assert verdict.extra["time_median_ms"] == pytest.approx(statistics.median(unchecked))
    assert verdict.eager_ms == 2.0 and verdict.compile_ms == 1.0
    assert verdict.speedup == pytest.approx(2.0 / verdict.time_ms)
    extra = verdict.extra
    assert extra["time_runs"] == 5 and extra["eager_runs"] == 6
    assert extra["eager_tf32_ms"] == 1.5
    assert extra["time_q1_ms"] <= verdict.time_ms <= extra["time_q3_ms"]
    assert extra["speedup_vs_compile"] == pytest.approx(1.0 / verdict.time_ms)
    assert extra["timing"]["rounds"] == 6 and extra["timing"]["decision"] == "events"
    phases = extra["timing_s"]  # where the exclusive hold's seconds went
    assert list(phases) == ["worker_begin", "harness_warm", "rounds", "worker_end"]
    assert all(isinstance(v, float) and v >= 0 for v in phases.values())
    # Each counted candidate time with its round and the input set it ran on (2 sets here).
    assert extra["time_series"] == {"us": [500.0, 501.0, 503.0, 504.0, 505.0],
                                    "round": [0, 1, 3, 4, 5], "set": [0, 1, 1, 0, 1]}  # fmt: skip
    assert extra["graph_ms"] == 0.25 and extra["eager_graph_ms"] == 1.0
    assert extra["speedup_graph"] == pytest.approx(4.0)


def test_the_baselines_run_in_the_candidates_precision_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """bf16: eager and torch.compile run in bf16 like the candidate, and there is no series
    with PyTorch's TF32 defaults (nor an eager_tf32_ms): no strict-fp32 comparison is made."""
    timing, log = _timing(monkeypatch, graph=False, precision="bf16")
    verdict = Verdict("correct")
    timing.run(verdict)
    assert [w for w, _ in log.events if w.startswith("mode ")] == ["mode bf16", "mode bf16"]
    assert not [w for w, _ in log.events if w == "eager_tf32"]
    assert verdict.eager_ms == 2.0 and verdict.compile_ms == 1.0
    assert "eager_tf32_ms" not in verdict.extra


def test_without_compile_baseline_torch_compile_is_neither_built_nor_timed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    timing, log = _timing(monkeypatch, compile_baseline=False, graph=False)
    timing.baselines.compiled = lambda *a: pytest.fail("compiled")  # type: ignore[method-assign]
    verdict = Verdict("correct")
    timing.run(verdict)
    assert not any(w == "compile" for w, _ in log.events)
    assert not any(w.startswith("graph") for w, _ in log.events)
    assert verdict.compile_ms is None and verdict.eager_ms == 2.0
    assert "graph_ms" not in verdict.extra


def test_a_verification_asked_to_decide_ends_its_rounds_once_candidate_and_eager_differ(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The fake candidate (0.5 ms) and eager (2 ms) are apart from the first rounds: with
    # stop_when_decided the rounds end at 9 (8 unchecked candidate times), else at max_runs
    # (a zero target is never met by the candidate's drifting times).
    for decided, want in ((True, 9), (False, 40)):
        timing, _ = _timing(monkeypatch, graph=False, stop_when_decided=decided, target_ci=0.0)
        timing.opts.max_runs = 40
        verdict = Verdict("correct")
        timing.run(verdict)
        assert verdict.extra["timing"]["rounds"] == want


def test_the_worker_is_told_the_launch_slack_the_harness_uses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slacks: list[float] = []
    timing, log = _timing(monkeypatch, graph=False, launch_slack_us=250.0)
    monkeypatch.setattr(measure, "Flush", lambda slack_us: slacks.append(slack_us))
    timing.run(Verdict("correct"))
    begin = [m for m in log.messages if m["op"] == "time_begin"]
    assert [m["slack_us"] for m in begin] == [250.0] and slacks == [250.0]


def test_a_flush_zeroes_its_buffer_then_spins_for_the_slack(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from drtriton.verify import timing

    spins: list[int] = []
    monkeypatch.setattr(timing, "_SLEEP", spins.append)
    monkeypatch.setattr(timing.torch, "empty", lambda n, **kw: torch.ones(4, dtype=torch.int32))
    flush = timing.Flush(500.0)
    flush()
    assert int(flush.buffer.sum()) == 0 and spins == [500 * timing.SM_CYCLES_PER_US]
    timing.Flush(0.0)()  # no slack: no spin
    assert len(spins) == 1


def test_the_baselines_share_one_copy_of_the_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    timing, _ = _timing(monkeypatch)
    benches = timing._baseline_benches()
    assert set(benches) == {"eager", "eager_tf32", "compile"}
    assert all(b.buffers is benches["eager"].buffers for b in benches.values())


def test_the_collector_is_off_through_a_timed_call_and_restored_after() -> None:
    import gc

    from drtriton.verify.timing import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():  # a caller that turned it off keeps it off
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("the call raised")
    assert gc.isenabled()


def test_time_tasks_times_every_task_inside_one_exclusive_hold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The search's operator costs: one wait for the GPU for all of a program's operators,
    # their calls interleaved round by round.
    log = Log()
    FakeBench.log = log
    monkeypatch.setattr(measure, "Bench", FakeBench)
    monkeypatch.setattr(measure, "Flush", lambda slack_us: None)
    monkeypatch.setattr(measure.torch.cuda, "device", lambda dev: contextlib.nullcontext())
    monkeypatch.setattr(measure.gpu_lock, "hold", log.hold)
    modes: list[str] = []

    def in_mode_of(mode: Any, call: Any) -> Any:
        modes.append(mode.name)
        call.bench_name = "eager"
        return call

    monkeypatch.setattr(measure, "in_mode_of", in_mode_of)
    relu = ("import torch\ndef fused_operator(x0):\n    return torch.relu(x0)\n\n"
            "def get_inputs():\n    return [torch.randn(4)]\n")  # fmt: skip
    stats = measure.time_tasks([relu, relu.replace("relu", "tanh")], "cpu", runs=10)
    assert len(stats) == 2 and all(s["median"] == 2.0 and s["n"] == 10 for s in stats)
    timed = [(w, m) for w, m in log.events if w in ("eager", "warm eager")]
    assert len(timed) == 2 * (1 + 10)  # the warm-up and ten rounds of each
    assert all(m == gpu_lock.EXCLUSIVE for _, m in timed)
    holds = [m for m in log.modes_taken]
    assert holds == [gpu_lock.SHARED, gpu_lock.EXCLUSIVE]  # one hold of each, not one per task
    assert modes == ["fp32", "fp32"]  # strict float32 unless a mode is asked for
    measure.time_tasks([relu], "cpu", runs=10, precision="fp16")
    assert modes[-1] == "fp16"


@pytest.mark.parametrize("status", ["crashed", "not_genuine"])
def test_a_failed_graph_output_copy_drops_the_graphs_unless_it_is_a_verdict(
    monkeypatch: pytest.MonkeyPatch, status: str
) -> None:
    # graph_end now runs after the exclusive hold: a worker that fails it there loses only the
    # graph figures, unless its failure is itself a verdict (torch computing in a replay).
    timing, log = _timing(monkeypatch)
    answer = timing.worker.request

    def request(msg: dict[str, Any]) -> dict[str, Any]:
        if msg["op"] == "graph_end":
            raise Rejected({"status": status, "reason": "the copy failed"})
        return answer(msg)

    timing.worker.request = request  # type: ignore[method-assign]
    verdict = Verdict("correct")
    if status == "not_genuine":
        with pytest.raises(Rejected):
            timing.run(verdict)
        return
    timing.run(verdict)
    assert verdict.status == "correct" and verdict.time_ms is not None
    assert "graph_ms" not in verdict.extra
    assert verdict.extra["graph_error"].startswith("crashed: the copy failed")
    assert not any(w == "fetch graph.pt" for w, _ in log.events)

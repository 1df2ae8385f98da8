"""GPU timing of one callable, shared by the candidate's worker and the harness's baselines.

A `Bench` times one callable (the candidate, eager, torch.compile) the same way for all three;
measure.py interleaves their calls round by round inside one hold of the GPU's lock.

- Inputs live in fixed buffers; before every call the next input set's values are copied in
  (untimed). A result cached across calls (keyed on shapes or data pointers) is then stale, and
  the sampled outputs catch it.
- Warm-ups first (JIT compilation, autotuning and torch.compile's runtime work happen there).
- The KernelBench method (`timed`): before each call a 256 MB buffer is zeroed, which evicts the
  H200's 50 MB L2 (no call reads inputs a previous call left in the cache); CUDA events on the
  current stream bracket the call; the host waits for the end event.
- The launch slack: after the flush the GPU spins for `Options.launch_slack_us` (500 us) before
  it reaches the start event, so the host has the flush's 60-80 us plus the slack to enqueue
  the call. A call whose launches fit in that is timed as GPU work, as in a loop whose host runs
  ahead of the GPU (a training step's usual state); one whose launches take longer is charged
  the rest. Why: with the flush alone as slack, a 22 us Triton max-pool timed 22 us in one
  H200 session and 40-98 us (median of a verification) in the next, its CUDA-graph replay 22 us
  in both and eager steady at 45 us: the host (16 cores shared by six verifications compiling
  kernels) sometimes took over 100 us to run the Triton launcher, and the events charged that
  to the kernel. `time_ms - graph_ms` still shows launch cost beyond the slack.
- Each timed call is primed: the same call runs once, untimed, on the next input set, just
  before the timed set is loaded and the flush runs. In KernelBench's loop of back-to-back trials each call
  finds its launch path warm from the previous one; timed in rounds, a call would otherwise
  come right after its process woke from waiting for the round's other series, with the
  launcher's code and data out of the CPU's caches. On the H200 (2026-12-01, unprimed) a 1 MB
  Triton relu timed 13-47 us by events against 4.5 us as a CUDA graph, while torch's relu,
  whose C++ launch fits in the flush's slack, timed 4.5 us both ways. The priming call gets
  another set's values, so a candidate that returns a cached output in the call after a real
  one returns the wrong set's answer (caught on the checked calls); with a single set (inputs
  over 8 GB, whose calls take milliseconds) there is no priming.
- CUDA-graph replay (`capture`, `replayed`): the call captured once, each replay bracketed the
  same way after the same flush. No Python launch cost is in it: the difference to `timed` is
  the launch overhead on its own.
- Python's garbage collector is off through each timed call (`gc_paused`, as `timeit` does).
- `keep=True` returns a copy of that call's output (taken after the end event, untimed), so the
  caller can compare it with the reference of that call's input set.

Timer integrity: `torch.cuda.Event`, `Event.record`, `Event.elapsed_time` and
`torch.cuda.synchronize` are captured when this module is imported, which the worker does before
it imports the candidate; after the candidate loads, the worker checks that they are unchanged. The
static checks ban the names a candidate would need to patch them (timers, torch.cuda.Event, any
assignment into torch). Limits: a candidate that rewrites memory through a native extension could
defeat this; the static import allow-list is what prevents loading one.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

FLUSH_BYTES = 256 * 1024 * 1024
# torch.cuda._sleep spins for a count of SM clock cycles: the H200's boost clock is 1.98 GHz, so
# a slack of N us spins N * 1980 cycles (longer at a lower clock: a slack is a lower bound).
SM_CYCLES_PER_US = 1980
_EVENT = torch.cuda.Event
_RECORD = torch.cuda.Event.record
_ELAPSED = torch.cuda.Event.elapsed_time
_SYNC = torch.cuda.synchronize
_SLEEP = torch.cuda._sleep


def timers_intact() -> bool:
    return (
        torch.cuda.Event is _EVENT
        and torch.cuda.Event.record is _RECORD
        and torch.cuda.Event.elapsed_time is _ELAPSED
        and torch.cuda.synchronize is _SYNC
        and torch.cuda._sleep is _SLEEP
    )


class Flush:
    """What runs on the GPU before each timed call: the L2 flush, then the launch slack (a
    spin of `slack_us`, module docstring). One per process, shared by its Benches."""

    def __init__(self, slack_us: float) -> None:
        self.buffer = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
        self.cycles = int(slack_us * SM_CYCLES_PER_US)

    def __call__(self) -> None:
        self.buffer.zero_()
        if self.cycles:
            _SLEEP(self.cycles)


class Bench:
    """One callable, its fixed input buffers and its timed calls."""

    def __init__(self, call: Callable[..., Any], input_sets: Sequence[Sequence[Any]],
                 flush: Flush, buffers: list[Any] | None = None) -> None:  # fmt: skip
        """`buffers`: another Bench's, shared (every call loads its set first), so that eager,
        eager with TF32 and torch.compile of one task hold one copy of the inputs."""
        assert input_sets, "a Bench needs at least one input set"
        self.call = call
        self.sets = input_sets
        self.buffers = clone(list(input_sets[0])) if buffers is None else buffers
        self.flush = flush
        self.graph: torch.cuda.CUDAGraph | None = None
        self._graph_out: Any = None

    def load(self, index: int) -> None:
        for buf, val in zip(self.buffers, self.sets[index % len(self.sets)], strict=False):
            if isinstance(buf, torch.Tensor):
                buf.copy_(val)

    def warm(self, count: int) -> None:
        for i in range(count):
            self.load(i)
            self.call(*self.buffers)
        _SYNC()

    def timed(self, index: int, keep: bool = False) -> tuple[float, Any]:
        """Milliseconds of one call on input set `index` (KernelBench's method), and a copy
        of its output when `keep`."""
        with gc_paused():
            if len(self.sets) > 1:  # primes the launch path on another set (module docstring)
                self.load(index + 1)
                self.call(*self.buffers)
            self.load(index)
            return self._bracket(lambda: self.call(*self.buffers), keep)

    def capture(self) -> str | None:
        """Captures one call into a CUDA graph; the reason when it cannot be captured.

        Warmed on a side stream first, as graph capture asks (library handles and workspaces
        are created outside the capture)."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.stream(side):
                self.call(*self.buffers)
            torch.cuda.current_stream().wait_stream(side)
            with torch.cuda.graph(graph):
                self._graph_out = self.call(*self.buffers)
            _SYNC()
        except Exception as exc:  # the graph time is then missing, nothing else
            self._graph_out = None
            return f"{type(exc).__name__}: {exc}"[:300]
        self.graph = graph
        return None

    def replayed(self, index: int, keep: bool = False) -> tuple[float, Any]:
        """Milliseconds of one replay of the captured call on input set `index`."""
        assert self.graph is not None, "capture() first"
        graph = self.graph
        if len(self.sets) > 1:  # primed like timed()
            self.load(index + 1)
            graph.replay()
        self.load(index)
        with gc_paused():
            return self._bracket(lambda: (graph.replay(), self._graph_out)[1], keep)

    def _bracket(self, run: Callable[[], Any], keep: bool) -> tuple[float, Any]:
        self.flush()
        start, end = _EVENT(enable_timing=True), _EVENT(enable_timing=True)
        _RECORD(start)
        out = run()
        _RECORD(end)
        kept = clone(out) if keep else None
        _SYNC()
        return _ELAPSED(start, end), kept


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's garbage collector off through one timed call, as `timeit` does: a collection
    that starts between the flush and a Triton launch (whose Python launcher allocates on every
    call) delays the launch past the flush's slack, and events charge the delay to the call.
    On the H200 (2026-12-01) a 22 us candidate timed 21-22 us in most rounds and 45-200 us in a
    quarter to a half of them, with eager's calls steady; whether collections cause that is
    unmeasured, but they add host pauses only the Python-heavy launcher pays."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def clone(value: Any) -> Any:
    """`value` with every tensor in it (nested lists and tuples too) copied."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (tuple, list)):
        return type(value)(clone(v) for v in value)
    return value


# The share of a series' times left out at each end by its trimmed mean, the figure decisions
# and reports use (`trimmed`). Why not the median: a kernel whose calls are bimodal on the GPU
# itself (the H200's 83 us group norm of 2026-12-01: 77 us or 83-84 us at random, 45% low, in
# graph replays too) has a median that lands in either mode; resampled from its 413 measured
# calls, five verifications of 90 calls differ by more than 5% in 58% of draws by the median, in
# none by the 10% trimmed mean (95th percentile 1.019; the plain mean 1.015). The trim still
# drops the long tail a host stall leaves (a launch past the slack).
TRIM = 0.1


def trimmed_mean(ordered: Sequence[float], trim: float = TRIM) -> float:
    """The mean of a sorted series without its floor(n * trim) lowest and highest times."""
    cut = int(len(ordered) * trim)
    return statistics.fmean(ordered[cut : len(ordered) - cut])


def summarize(times: Sequence[float]) -> dict[str, float]:
    """Trimmed mean, median, mean, quartiles, extremes and count of one series (ms)."""
    ordered = sorted(times)
    q1, _, q3 = statistics.quantiles(ordered, n=4) if len(ordered) > 1 else (ordered * 3)
    return {"trimmed": trimmed_mean(ordered), "median": statistics.median(ordered),
            "mean": statistics.fmean(ordered), "q1": q1, "q3": q3, "min": ordered[0],
            "max": ordered[-1], "n": float(len(ordered))}  # fmt: skip

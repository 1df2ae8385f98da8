"""GPU timing, shared by the candidate's worker and the harness's eager/torch.compile baselines.

One function times all three the same way, in the same run:
- inputs live in fixed buffers; before every call the next input set's values are copied in
  (untimed). A result cached across calls (keyed on shapes or data pointers) is then stale, and the
  sampled outputs below catch it.
- warm-ups first (JIT compilation, autotuning and torch.compile happen there);
- before every timed call a 256 MB buffer is zeroed, which evicts the H200's 50 MB L2, so no call
  reads its inputs from a cache a previous call warmed;
- CUDA events on the current stream bracket each call; the median and the mean are reported.
- `check` names trials whose outputs are kept (cloned after the end event, untimed) so the caller
  can compare them with the reference of that trial's input set. The worker picks them at random,
  so a candidate cannot tell a checked call from an unchecked one.

Timer integrity: `torch.cuda.Event`, `Event.record`, `Event.elapsed_time` and
`torch.cuda.synchronize` are captured when this module is imported, which the worker does before
it imports the candidate; after the candidate loads, the worker checks that they are unchanged. The
static checks ban the names a candidate would need to patch them (timers, torch.cuda.Event, any
assignment into torch). Limits: a candidate that rewrites memory through a native extension could
defeat this; the static import allow-list is what prevents loading one.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

import torch

FLUSH_BYTES = 256 * 1024 * 1024
_EVENT = torch.cuda.Event
_RECORD = torch.cuda.Event.record
_ELAPSED = torch.cuda.Event.elapsed_time
_SYNC = torch.cuda.synchronize


def timers_intact() -> bool:
    return (
        torch.cuda.Event is _EVENT
        and torch.cuda.Event.record is _RECORD
        and torch.cuda.Event.elapsed_time is _ELAPSED
        and torch.cuda.synchronize is _SYNC
    )


def _load(buffers: list[Any], values: Sequence[Any]) -> None:
    for buf, val in zip(buffers, values, strict=False):
        if isinstance(buf, torch.Tensor):
            buf.copy_(val)


def time_cuda(
    call: Callable[..., Any],
    input_sets: Sequence[Sequence[Any]],
    *,
    warmup: int = 3,
    runs: int = 30,
    check: Sequence[int] = (),
) -> tuple[list[float], dict[int, Any]]:
    """Milliseconds of each timed call, and the kept outputs {trial: output}."""
    assert input_sets, "time_cuda needs at least one input set"
    buffers = clone(list(input_sets[0]))
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    keep = set(check)
    for i in range(warmup):
        _load(buffers, input_sets[i % len(input_sets)])
        call(*buffers)
    _SYNC()
    starts = [_EVENT(enable_timing=True) for _ in range(runs)]
    ends = [_EVENT(enable_timing=True) for _ in range(runs)]
    kept: dict[int, Any] = {}
    for t in range(runs):
        _load(buffers, input_sets[t % len(input_sets)])
        flush.zero_()
        _RECORD(starts[t])
        out = call(*buffers)
        _RECORD(ends[t])
        if t in keep:
            kept[t] = clone(out)
    _SYNC()
    times = [_ELAPSED(s, e) for s, e in zip(starts, ends, strict=False)]
    return times, kept


def clone(value: Any) -> Any:
    """`value` with every tensor in it (nested lists and tuples too) copied."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (tuple, list)):
        return type(value)(clone(v) for v in value)
    return value


def summarize(times: Sequence[float]) -> dict[str, float]:
    return {"median": statistics.median(times), "mean": statistics.fmean(times)}

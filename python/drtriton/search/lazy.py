"""GPU search with optimistic bounds: verify only fragments that can still win.

Verifying a fragment on a GPU costs seconds (a sandboxed worker, five correctness trials, timed
runs), and a program of n operators has up to 5n fragments.  Most cannot win: a fragment whose
best possible time is above what PyTorch takes for its operators is never worth a candidate.

- PyTorch's cost of each operator is measured by the verifier (verify.time_task), on the
  operator's one-operator task (our own catalog spelling: trusted code), the way it times every
  eager baseline (CUDA events, L2 flushed, warm-ups, rounds until the median is stable).
- A fragment's lower bound is what the hardware cannot beat: its memory traffic (inputs and
  outputs once, IR `bytes`) at peak bandwidth, its FLOPs at the peak of the arithmetic its kernel
  runs, plus one kernel launch. A GEMM or convolution multiplies on the tensor cores in the
  teacher's tl.dot precision (core/codegen/heuristics.h, kDefaultDotPrecision: fp16x3, three
  fp16 products per fp32 one), so its FLOPs are bounded at the 16-bit tensor-core peak over the
  split's product count (`dot_peak_flops`: 330 TFLOP/s for fp16x3, 165 for bf16x6); other
  fragments at the fp32 CUDA-core peak. Why not the CUDA-core peak for all (as while tl.dot ran
  "ieee"): on the H200 a plain fp16x3 Triton matmul reached 142 TFLOP/s, bf16x6 73, bf16x3 121
  (benchmarks/dot_split_speed.py), all beyond 67, so winning fragments could be pruned
  unverified. The bound
  follows the teacher's precision: a policy's own bf16x3 kernel (accepted only where its inputs
  leave no cancellation, tests/teach/test_dot_split.py) could still beat it.
- Fragments whose bound is not below their operators' PyTorch time are dropped (issue 6: "stop
  early where no fragment can win").
- The rest are verified lazily: take the DP's best cover with measured costs where known and
  bounds elsewhere; verify that cover's unmeasured fragments; repeat until the cover is all
  measured or PyTorch.  Because bounds never exceed true costs, the final cover is the one the DP
  would choose had every fragment been measured (A*-style argument), with far fewer verifications.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drtriton import _core
from drtriton.errors import UserError
from drtriton.verify.precision import mode

# H200 SXM (NVIDIA's figures): HBM3e bandwidth, fp32 throughput without tensor cores, and dense
# bf16 and fp16 tensor-core throughput (989 TFLOP/s each; 1979 is with 2:4 sparsity).
PEAK_BYTES_PER_S = 4.8e12
PEAK_FP32_FLOPS = 6.7e13
PEAK_BF16_TENSOR_FLOPS = 9.89e14
PEAK_TF32_TENSOR_FLOPS = 4.94e14  # dense, half the bf16 rate
# The IR counts 4 bytes an element; in the half modes (verify/precision.py) the teacher's
# inputs and outputs are 2 (its float32 intermediates stay inside the fragment's kernels).
HALF_MODE_BYTES = 0.5
# Tensor-core products per fp32 product of each tl.dot precision (Triton's F32DotTC: bf16x3 is
# hi*hi + hi*mid + mid*hi, bf16x6 adds mid*mid + hi*lo + lo*hi; the teacher's fp16x3 is
# hi*hi + hi*lo + lo*hi in fp16); "ieee" runs on the CUDA cores.
SPLIT_PRODUCTS = {"bf16x3": 3, "bf16x6": 6, "fp16x3": 3}
# A Triton launch from Python, as CUDA events see it (the GPU idles while the launcher binds
# arguments): about 10-30 us.  With a 3 us floor the first H200 run verified every fragment of
# a small 4-operator model, since each measured kernel (~20 us) left every unmeasured bound
# (3 us) looking better; 10 us is still below what any measured Triton launch took.
LAUNCH_MS = 0.010
# At most this many fragments are verified per task: each costs seconds on a GPU (6-8 s on the
# H200, mostly Triton compiling the candidate in its worker's private cache).
MAX_MEASURED = 4


@dataclass(frozen=True)
class Span:
    start: int
    end: int


# Fragment classes for calibration: the heaviest kind of operator a fragment holds.
_HEAVY = ("conv_transpose", "conv", "contraction")


def fragment_class(fragment: dict[str, Any]) -> str:
    """The fragment's class for calibration: its heaviest operator's kind, "conv_transpose",
    "conv" or "contraction" (matmul, bmm, linear), else "memory"."""
    from drtriton import catalog

    traits = {
        t for op in _core.parse(fragment["source"])[1]["ops"] for t in catalog.op(op)["traits"]
    }
    return next((c for c in _HEAVY if c in traits), "memory")


@dataclass
class Calibration:
    """How far the policy's measured kernels sit above their bounds, by class (calibration_class:
    the heaviest operator and what bounds it), across the runs of one optimization.  The
    bounds assume peak hardware; the teacher's convolutions ran 3-12x slower than eager on the
    H200 and its tiny kernels 7-20x, so a KernelBench MobileNet spent its whole search budget
    verifying one hopeless convolution after another (10 of 54 runs searched, ~15 s each).
    After a class has been measured, its later bounds are scaled by the smallest
    measured/bound ratio seen (the policy's best case so far), so only fragments that could
    win at that efficiency are verified.  The scaled bound is a prediction, not a guarantee: a
    fragment that would have beaten the policy's record can be skipped."""

    ratios: dict[str, float] = field(default_factory=dict)
    # A JSON file shared with other optimizations on the same kind of GPU (KernelBench: one per
    # evaluation folder, six processes at once): what one problem measured spares the next its
    # first hopeless convolution.  Merged by taking the minimum, so no update can lose one.
    path: str | None = None

    def scale(self, cls: str) -> float:
        return max(1.0, self.ratios.get(cls, 1.0))

    def record(self, cls: str, measured_ms: float, bound_ms: float) -> None:
        if math.isfinite(measured_ms) and measured_ms > 0 and bound_ms > 0:
            ratio = measured_ms / bound_ms
            self.ratios[cls] = min(ratio, self.ratios.get(cls, math.inf))
            if self.path:
                self._share()

    def refresh(self) -> None:
        """Takes in what other processes recorded in `path` since."""
        if self.path:
            self._merge(_read_ratios(self.path))

    def _merge(self, other: dict[str, float]) -> None:
        for cls, ratio in other.items():
            self.ratios[cls] = min(ratio, self.ratios.get(cls, math.inf))

    def _share(self) -> None:
        import fcntl
        import json

        from drtriton.files import write_text_atomic

        assert self.path
        with open(self.path + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # read, merge, write: one process at a time
            self._merge(_read_ratios(self.path))
            write_text_atomic(self.path, json.dumps(self.ratios, indent=1, sort_keys=True))


def _read_ratios(path: str) -> dict[str, float]:
    """A calibration file's ratios; {} when it is missing or unreadable (a fresh evaluation)."""
    import json

    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, int | float) and v > 0}


def dot_peak_flops(precision: str) -> float:
    """The fp32 FLOP rate no tl.dot of `precision` can exceed on the H200."""
    if precision == "ieee":
        return PEAK_FP32_FLOPS
    if precision not in SPLIT_PRODUCTS:
        raise ValueError(f"no peak known for tl.dot precision {precision!r}")
    return PEAK_BF16_TENSOR_FLOPS / SPLIT_PRODUCTS[precision]


def contraction_peak_flops(precision: str = "fp32") -> float:
    """The FLOP rate no teacher contraction can exceed in the verifier's precision mode: the
    split's in strict fp32, TF32's where the mode allows it, the 16-bit tensor cores' own where
    the inputs are half (the wrapper's choice at launch, core/codegen/wrapper.cc)."""
    m = mode(precision)
    if m.casts:
        return PEAK_BF16_TENSOR_FLOPS
    if m.tf32:
        return PEAK_TF32_TENSOR_FLOPS
    return dot_peak_flops(_core.codegen_dot_precision())


def _bound_terms(fragment: dict[str, Any], precision: str) -> tuple[float, float]:
    """(seconds of its traffic at peak bandwidth, seconds of its FLOPs at the peak of its
    arithmetic) in the verifier's `precision` mode."""
    flops = float(_core.parse(fragment["source"])[1]["flops"])
    peak = PEAK_FP32_FLOPS
    if fragment_class(fragment) != "memory":  # a GEMM or convolution: tensor cores
        peak = contraction_peak_flops(precision)
    traffic = float(fragment["bytes"]) * (HALF_MODE_BYTES if mode(precision).casts else 1)
    return traffic / PEAK_BYTES_PER_S, flops / peak


def lower_bound_ms(fragment: dict[str, Any], precision: str = "fp32") -> float:
    """The fragment's optimistic time (module docstring) in the verifier's `precision` mode:
    traffic at peak bandwidth or FLOPs at the peak of its arithmetic, whichever is slower,
    plus a launch."""
    return 1e3 * max(_bound_terms(fragment, precision)) + LAUNCH_MS


def calibration_class(fragment: dict[str, Any], precision: str = "fp32") -> str:
    """The class whose measured/bound ratios scale the fragment's bound (Calibration): its
    heaviest operator by name and the term that sets its bound, "conv2d/flops" or
    "linear/bytes"; "memory" without a GEMM or convolution.

    Why not one class per kind (fragment_class): the teacher's kernels sit at very different
    distances from their bounds by operator and by what bounds them, and the smallest ratio of
    one kind priced others out. On the H100 (bf16 level 2, 2026-12-05) L2 1's fused conv2d
    (64 to 128 channels, compute-bound) was verified first in its call and ran 1.05x
    torch.compile. L2 17, 31, 32, 35, 46 and 52, of the same or like shapes, ran later in
    calls where other convolutions (conv3d, few channels) had been measured. They kept an
    NCHW cuDNN convolution in PyTorch (0.39-0.59x torch.compile) after two or three
    verifications."""
    from drtriton import catalog

    kind = fragment_class(fragment)
    if kind == "memory":
        return kind
    parsed = _core.parse(fragment["source"])[1]
    node = next(n for n in parsed["nodes"] if kind in catalog.op(n["op"])["traits"])
    if kind == "contraction" and _narrow_contraction(node, parsed["shapes"]):
        return f"{node['op']}/narrow"
    traffic_s, flops_s = _bound_terms(fragment, precision)
    tma = "/tma" if mode(precision).casts and _teacher_uses_tma(fragment["source"]) else ""
    return f"{node['op']}/{'flops' if flops_s >= traffic_s else 'bytes'}{tma}"


def _teacher_uses_tma(source: str) -> bool:
    """Whether the teacher's candidate for this fragment has a TMA kernel (host tensor
    descriptors: half-precision GEMMs and convolutions whose operands and tiles qualify,
    core/codegen/heuristics.h ChooseTmaContraction and ChooseShiftedRowsTma).

    Why the class tells them apart: a TMA kernel and the pointer-loaded one of the same
    operator sit at very different distances from the bound. On the H100 in bf16 (12-07b)
    L1 50's conv2d of 3 input channels (a pointer kernel) was the first conv2d measured; L1 55,
    56, 62 and 80, whose conv2d take the shifted-rows TMA kernel, started after it and none
    was verified (PyTorch kept all four)."""
    from drtriton.errors import UserError
    from drtriton.teach import emit

    try:
        return "TensorDescriptor" in emit(source)
    except UserError:  # no candidate: its class is the pointer kernels'
        return False


def _narrow_contraction(node: dict[str, Any], shapes: dict[str, list[int]]) -> bool:
    """Whether the teacher runs this matmul, bmm or linear on its narrow path (M or N at most
    a few: lanes of CUDA-core products, no tl.dot; core/codegen/heuristics.h kNarrowAtMost).

    Why a class of its own: a matrix-vector product streams its matrix once, and its kernel
    sits at a different distance from its bound than a tl.dot tile's. On the H100 (bf16 level
    1, 2026-12-07) L1 7's small-K GEMM (bytes-bound, tl.dot) was measured first; its ratio,
    applied to L1 4's matrix-vector product (4.3 GB of matrix), put the bound above eager's
    time and the product was never verified, where in fp32 on the H200 it ran 1.06x
    torch.compile."""
    x, w = (list(map(int, shapes[name])) for name in node["inputs"][:2])
    k = x[-1]
    if node["op"] == "linear":  # x (..., K), weight (N, K)
        m, n = math.prod(x[:-1]), w[0]
    else:  # matmul, bmm (operands of rank 2 or more: the catalog's shape rules)
        m, n = x[-2], w[-1]
    return bool(_core.codegen_contraction_config(m, n, k)["narrow"])


def eager_op_costs_ms(fragments: Sequence[dict[str, Any]], n_ops: int, device: str,
                      seed: int = 0, precision: str = "fp32") -> list[float] | None:  # fmt: skip
    """Each operator's eager time (in the verifier's `precision` mode), from its one-operator
    fragment, or from a short fragment ending in it where it has none (`_timed_spans`); None
    if that fails or something cannot be timed (e.g. out of memory: the caller falls back to
    the traffic model)."""
    from drtriton.verify import time_task, time_tasks

    spans = _timed_spans(fragments, n_ops)
    if spans is None:
        return None
    # One timing per program: the search names fragments canonically (search.py
    # _canonically_named), so an operator that recurs (each of an unrolled RNN's 256 steps,
    # KernelBench L3 34: 2,304 operators timed in 64.7 s of its 240 s on an H100) is one
    # source and takes the time of its first occurrence.
    sources = list(dict.fromkeys(f["source"] for f in spans))
    try:  # all in one exclusive hold (time_tasks says why)
        times = [stats["trimmed"] for stats in time_tasks(sources, device, seed=seed,
                                                          precision=precision)]  # fmt: skip
    except (RuntimeError, ValueError, UserError):  # torch.OutOfMemoryError is a RuntimeError
        try:  # together they did not fit beside the GPU's other processes: one at a time
            times = [time_task(source, device, seed=seed, precision=precision)["trimmed"]
                     for source in sources]  # fmt: skip
        except (RuntimeError, ValueError, UserError):
            return None
    by_source = dict(zip(sources, times, strict=True))
    return _op_costs(spans, [by_source[f["source"]] for f in spans], n_ops)


def _timed_spans(fragments: Sequence[dict[str, Any]], n_ops: int) -> list[dict[str, Any]] | None:
    """The fragments whose eager times give every operator's: each one-operator fragment, and
    for an operator without one, the shortest fragment that ends in it whose other operators
    have times (their own, or one found so, as for a mask negated before its where).  An operator lacks one where a computed bool reaches it: fragments take
    no computed mask as input (KernelBench L3 43's where(eq(bias, 0), -inf, scores)), and
    before this every operator fell back to modelled bytes, so a linear measured 2.4x faster
    than eager was not chosen.  None when some operator has neither."""
    singles = {f["start"]: f for f in fragments if f["end"] == f["start"] + 1}
    spans = [singles[i] for i in sorted(singles)]
    known = set(singles)
    for i in range(n_ops):
        if i in known:
            continue
        ending = [f for f in fragments if f["end"] == i + 1
                  and all(k in known for k in range(f["start"], i))]  # fmt: skip
        if not ending:
            return None
        spans.append(min(ending, key=lambda f: i + 1 - f["start"]))
        known.add(i)
    return spans


def _op_costs(spans: list[dict[str, Any]], times: list[float], n_ops: int) -> list[float]:
    """Per-operator times from `_timed_spans`' spans and their eager `times`: a longer span's
    last operator costs its time less its other operators' own, at least the cheapest single
    operator measured (a view's launch-free ~1.3 us on the H200; a difference of two noisy
    times can come out lower, even negative)."""
    costs: dict[int, float] = {}
    for f, ms in zip(spans, times, strict=True):
        if f["end"] == f["start"] + 1:
            costs[f["start"]] = float(ms)
    floor = min(costs.values(), default=0.0)
    for f, ms in zip(spans, times, strict=True):
        if f["end"] > f["start"] + 1:
            others = sum(costs[k] for k in range(f["start"], f["end"] - 1))
            costs[f["end"] - 1] = max(float(ms) - others, floor)
    return [costs[i] for i in range(n_ops)]


def lazy_cover(
    n_ops: int,
    spans: Sequence[Span],
    bounds: dict[Span, float],
    op_costs: Sequence[float],
    measure: Callable[[Span], float],
    out_of_time: Callable[[], bool] | None = None,
    max_measured: int = MAX_MEASURED,
    program: Callable[[Span], Any] | None = None,
) -> tuple[list[dict[str, Any]], dict[Span, float]]:
    """The best cover by measured costs, measuring only what the optimistic DP asks for.

    `measure(span)` verifies and times a fragment (math.inf when no candidate is correct).
    Once `out_of_time()` (the search's Pace) says so, nothing more is measured and only measured
    fragments remain candidates; so too after `max_measured` programs were measured.
    `program(span)` names what a span computes: a span whose program was measured at another
    span is measured at no count (its verdicts are cached), so the steps of an unrolled RNN
    or the identical blocks of a ResNet stage cost one measurement.  Returns the cover (as
    `_core.best_cover` gives it) and every measurement made."""
    program = program or (lambda span: span)
    hopeful = [s for s in spans if bounds[s] < sum(op_costs[s.start : s.end])]
    measured: dict[Span, float] = {}
    while True:
        late = out_of_time is not None and out_of_time()
        costs = {
            (s.start, s.end): measured.get(s, bounds[s])
            for s in hopeful
            if (s in measured or not late) and math.isfinite(measured.get(s, bounds[s]))
        }
        cover = list(_core.best_cover(n_ops, costs, list(op_costs)))
        todo = [Span(c["start"], c["end"]) for c in cover if c["fused"]]
        todo = [s for s in todo if s not in measured]
        if not todo:
            return cover, measured
        known = {program(s) for s in measured}
        repeats = [s for s in todo if program(s) in known]
        for span in repeats:  # measured elsewhere: its candidates' verdicts are cached
            measured[span] = measure(span)
        if repeats:
            continue
        room = max_measured - len(known)
        if room <= 0:  # give up on the unmeasured ones
            hopeful = [s for s in hopeful if program(s) in known]
            continue
        # A long run's cover may fuse more fragments than the budget measures: the ones that
        # promise most (bound furthest below their operators' PyTorch cost) go first, instead
        # of none (a 36-operator RNN whose cat and select now map kept all of it in PyTorch).
        todo = sorted(todo, key=lambda s: bounds[s] - sum(op_costs[s.start : s.end]))
        picked: list[Span] = []
        programs: set[Any] = set()
        for span in todo:  # up to `room` programs, each at every span the cover fuses it
            if program(span) in programs or len(programs) < room:
                programs.add(program(span))
                picked.append(span)
        for span in picked:
            if measured and out_of_time is not None and out_of_time():
                break  # the loop's next pass keeps the measured fragments only
            measured[span] = measure(span)

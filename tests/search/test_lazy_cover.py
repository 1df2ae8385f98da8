"""The GPU search's lazy cover (drtriton.search.lazy) on hand-made costs, without a GPU."""

from __future__ import annotations

import math

from drtriton.search.lazy import Span, lazy_cover


def _spans(n: int, longest: int) -> list[Span]:
    return [Span(s, e) for s in range(n) for e in range(s + 1, min(n, s + longest) + 1)]


def _run(n, bounds, true_cost, op_costs):
    asked: list[Span] = []

    def measure(span: Span) -> float:
        asked.append(span)
        return true_cost.get(span, math.inf)

    cover, measured = lazy_cover(n, list(bounds), bounds, op_costs, measure)
    return [(c["start"], c["end"], c["fused"]) for c in cover], asked, measured


def test_the_whole_chain_wins_after_one_measurement() -> None:
    spans = _spans(3, 3)
    bounds = {s: 0.1 for s in spans}  # a launch each: a cover of k fragments costs >= 0.1 k
    true = {s: 0.15 for s in spans}
    cover, asked, _ = _run(3, bounds, true, [1.0, 1.0, 1.0])
    assert cover == [(0, 3, True)]
    assert asked == [Span(0, 3)]  # no two-fragment cover can beat 0.15


def test_a_failed_fragment_falls_back_to_the_next_best() -> None:
    spans = _spans(3, 3)
    bounds = {s: 0.2 for s in spans}
    true = {s: 0.3 for s in spans if s != Span(0, 3)}  # the whole chain has no correct kernel
    cover, asked, measured = _run(3, bounds, true, [1.0, 1.0, 1.0])
    assert measured[Span(0, 3)] == math.inf
    assert asked[0] == Span(0, 3)
    assert sum(1 for c in cover if c[2]) >= 1 and cover[0][0] == 0 and cover[-1][1] == 3
    assert all(Span(a, b) in measured for a, b, fused in cover if fused)


def test_fragments_that_cannot_beat_pytorch_are_never_measured() -> None:
    spans = _spans(2, 2)
    bounds = {s: 5.0 for s in spans}  # every bound above PyTorch's 1 ms per operator
    cover, asked, _ = _run(2, bounds, {s: 0.01 for s in spans}, [1.0, 1.0])
    assert asked == []
    assert all(not fused for _, _, fused in cover)


def test_a_slow_measured_kernel_loses_to_pytorch() -> None:
    spans = _spans(2, 2)
    bounds = {s: 0.1 for s in spans}
    cover, asked, _ = _run(2, bounds, {s: 9.0 for s in spans}, [1.0, 1.0])
    assert all(not fused for _, _, fused in cover)
    assert set(asked) == set(spans)  # each was hopeful until measured


def test_measurements_stop_at_the_cap() -> None:
    spans = _spans(4, 4)
    bounds = {s: 0.01 for s in spans}  # every bound looks good, every measurement is poor
    asked: list[Span] = []

    def measure(span: Span) -> float:
        asked.append(span)
        return 0.9 * (span.end - span.start)

    cover, measured = lazy_cover(4, spans, bounds, [1.0] * 4, measure, max_measured=3)
    assert len(asked) <= 3
    assert all(Span(c["start"], c["end"]) in measured for c in cover if c["fused"])


def test_a_cover_of_more_fragments_than_the_cap_measures_the_most_promising() -> None:
    # Six separate one-operator fragments all look good; only two may be measured: the two
    # whose bound promises most are, and they are fused (before, the cap left all in PyTorch).
    spans = _spans(6, 1)
    promise = [0.5, 0.1, 0.6, 0.2, 0.9, 0.4]  # bound of each op's fragment (PyTorch: 1.0)
    bounds = {s: promise[s.start] for s in spans}
    asked: list[Span] = []

    def measure(span: Span) -> float:
        asked.append(span)
        return bounds[span]

    cover, _ = lazy_cover(6, spans, bounds, [1.0] * 6, measure, max_measured=2)
    assert sorted(s.start for s in asked) == [1, 3]
    assert sorted(c["start"] for c in cover if c["fused"]) == [1, 3]


def test_out_of_time_stops_measuring_and_keeps_what_was_measured() -> None:
    # Two separate hopeful fragments (0,1) and (2,3): the first measurement ends the time.
    spans = _spans(4, 1)
    bounds = {s: 0.1 for s in spans}
    asked: list[Span] = []

    def measure(span: Span) -> float:
        asked.append(span)
        return 0.5

    cover, measured = lazy_cover(4, spans, bounds, [1.0] * 4, measure, lambda: bool(asked))
    assert asked == [Span(0, 1)] and measured == {Span(0, 1): 0.5}
    fused = [(c["start"], c["end"]) for c in cover if c["fused"]]
    assert fused == [(0, 1)]  # the measured winner is kept, the rest stays in PyTorch
    none, measured = lazy_cover(4, spans, bounds, [1.0] * 4, measure, lambda: True)
    assert measured == {} and not any(c["fused"] for c in none)


def _matmul_fragment(n: int) -> dict:
    from drtriton import _core

    task = (
        "import torch\n\ndef fused_operator(x0, x1):\n    t0 = torch.matmul(x0, x1)\n"
        f"    return t0\n\ndef get_inputs():\n    return [torch.randn({n}, {n}), torch.randn({n}, {n})]\n"
    )
    return next(f for f in _core.fragments(task, 1))


def test_contraction_bounds_follow_the_teachers_dot_precision() -> None:
    from drtriton import _core
    from drtriton.search import lazy

    assert _core.codegen_dot_precision() == "fp16x3"
    # fp16x3: three fp16 tensor-core products per fp32 one, 989 / 3 = 330 TFLOP/s; bf16x6 six.
    assert math.isclose(lazy.dot_peak_flops("fp16x3"), 9.89e14 / 3)
    assert math.isclose(lazy.dot_peak_flops("bf16x6"), 9.89e14 / 6)
    assert lazy.dot_peak_flops("ieee") == lazy.PEAK_FP32_FLOPS
    fragment = _matmul_fragment(4096)  # 2 * 4096^3 FLOPs, compute-bound
    bound_s = (lazy.lower_bound_ms(fragment) - lazy.LAUNCH_MS) / 1e3
    # A bound, still, for what the splits measured on the H200: fp16x3 142 TFLOP/s (0.97 ms);
    # at the CUDA-core peak (67) it would be 2.05 ms, no bound for a faster kernel.
    assert bound_s <= 2 * 4096**3 / 142e12
    assert math.isclose(bound_s, 2 * 4096**3 / (9.89e14 / 3), rel_tol=1e-9)


def test_contraction_bounds_follow_the_precision_mode() -> None:
    from drtriton.search import lazy

    fragment = _matmul_fragment(4096)
    flops = 2 * 4096**3

    def bound_s(precision: str) -> float:
        return (lazy.lower_bound_ms(fragment, precision) - lazy.LAUNCH_MS) / 1e3

    # Half inputs multiply on the 16-bit tensor cores themselves, TF32 at half their rate: a
    # strict-fp32 bound (the split's 330 TFLOP/s) would be no bound for either.
    assert math.isclose(bound_s("bf16"), flops / 9.89e14, rel_tol=1e-9)
    assert math.isclose(bound_s("fp16"), bound_s("bf16"))
    assert math.isclose(bound_s("tf32"), flops / 4.94e14, rel_tol=1e-9)
    assert bound_s("bf16") < bound_s("tf32") < bound_s("fp32")
    # A memory-bound fragment moves half the bytes in the half modes.
    relu = _relu_fragment()
    assert math.isclose(lazy.lower_bound_ms(relu, "bf16") - lazy.LAUNCH_MS,
                        (lazy.lower_bound_ms(relu) - lazy.LAUNCH_MS) / 2)  # fmt: skip


def _relu_fragment() -> dict:
    from drtriton import _core

    task = (
        "import torch\n\ndef fused_operator(x0):\n    t0 = torch.relu(x0)\n"
        "    return t0\n\ndef get_inputs():\n    return [torch.randn(4096, 4096)]\n"
    )
    return next(f for f in _core.fragments(task, 1))


def test_an_operator_reading_a_computed_mask_is_timed_through_its_producer() -> None:
    # where(eq(t0, c), x0, t0): a fragment cannot take the computed bool t1 as input, so where
    # has no one-operator fragment; [eq, where] stands for it, less eq's own time.
    from drtriton import _core
    from drtriton.search.lazy import _op_costs, _timed_spans

    task = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "def fused_operator(x0, x1):\n"
        "    t0 = torch.relu(x0)\n"
        "    t1 = torch.eq(t0, x1)\n"
        "    t2 = torch.where(t1, x0, t0)\n"
        "    return t2\n\n"
        "def get_inputs():\n    return [torch.randn(4, 8), torch.randn(1)]\n"
    )
    fragments = list(_core.fragments(task, 3))
    assert not any(f["start"] == 2 and f["end"] == 3 for f in fragments)
    spans = _timed_spans(fragments, 3)
    assert [(f["start"], f["end"]) for f in spans] == [(0, 1), (1, 2), (1, 3)]
    assert _op_costs(spans, [0.5, 0.25, 1.0], 3) == [0.5, 0.25, 0.75]
    # A difference below the cheapest measured operator (noise) is raised to it.
    assert _op_costs(spans, [0.5, 0.25, 0.2], 3) == [0.5, 0.25, 0.25]
    # An operator with no fragment ending in it from timed operators: no costs at all.
    assert _timed_spans([f for f in fragments if f["end"] != 3], 3) is None


def test_a_mask_negated_before_its_where_is_timed_in_order() -> None:
    # logical_not reads a computed bool and where reads another: [eq, not] times not, and
    # [eq, not, where] then times where from not's derived time (KernelBench L3 49's masks).
    from drtriton import _core
    from drtriton.search.lazy import _op_costs, _timed_spans

    task = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "def fused_operator(x0, x1):\n"
        "    t0 = torch.eq(x0, x1)\n"
        "    t1 = torch.logical_not(t0)\n"
        "    t2 = torch.where(t1, x0, x1)\n"
        "    return t2\n\n"
        "def get_inputs():\n    return [torch.randn(4, 8), torch.randn(1)]\n"
    )
    spans = _timed_spans(list(_core.fragments(task, 3)), 3)
    assert [(f["start"], f["end"]) for f in spans] == [(0, 1), (0, 2), (0, 3)]
    assert _op_costs(spans, [0.125, 0.5, 1.0], 3) == [0.125, 0.375, 0.5]


def test_a_program_measured_at_one_span_costs_no_measurement_at_another() -> None:
    # Six one-operator fragments, two programs (the steps of an unrolled loop alternate): a
    # cap of two programs fuses all six, each program verified at one span first.
    spans = _spans(6, 1)
    bounds = {s: 0.1 for s in spans}
    kinds = {s: "even" if s.start % 2 == 0 else "odd" for s in spans}
    asked: list[Span] = []

    def measure(span: Span) -> float:
        asked.append(span)
        return 0.5

    cover, measured = lazy_cover(6, spans, bounds, [1.0] * 6, measure, max_measured=2,
                                 program=kinds.__getitem__)  # fmt: skip
    assert sorted(c["start"] for c in cover if c["fused"]) == [0, 1, 2, 3, 4, 5]
    assert len(measured) == 6 and len({kinds[s] for s in asked}) == 2
    # A third program is over the cap: its spans stay in PyTorch.
    kinds[Span(5, 6)] = "third"
    cover, _ = lazy_cover(6, spans, bounds, [1.0] * 6, measure, max_measured=2,
                          program=kinds.__getitem__)  # fmt: skip
    assert len([c for c in cover if c["fused"]]) == 5

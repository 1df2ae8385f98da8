"""Output comparison: tolerances, the norm check against tiny outputs, NaN/inf positions."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from drtriton.verify import envelope
from drtriton.verify.compare import compare, flatten, worst_ratio

alone = envelope.Float64Leaf.alone


def test_zeros_fail_softmax_over_16k_values() -> None:
    ref = torch.softmax(torch.rand(2, 16384) * 0.1, dim=-1)  # entries ~6.1e-5 < atol
    zeros = torch.zeros_like(ref)
    # The trap: a plain allclose accepts them (KernelBench issue 165).
    assert torch.allclose(zeros, ref, atol=1e-4, rtol=1e-4)
    problem = compare([zeros], [ref], None, None)
    assert problem and "relative L2" in problem


def test_rounding_noise_passes() -> None:
    ref = torch.randn(1000, dtype=torch.float64).float()
    noisy = ref * (1 + 1e-6 * torch.randn(1000))
    assert compare([noisy], [ref], None, None) is None


def test_exact_zero_reference_accepts_tiny_noise() -> None:
    ref = torch.zeros(100)
    assert compare([ref + 1e-7], [ref], None, None) is None
    assert compare([ref + 1e-3], [ref], None, None) is not None


def test_shape_dtype_and_count() -> None:
    ref = torch.ones(4, 5)
    assert "shape" in compare([ref.view(-1)], [ref], None, None)
    assert "dtype" in compare([ref.double()], [ref], None, None)
    assert "values" in compare([ref, ref], [ref], None, None)


def test_nan_and_inf_positions_must_match() -> None:
    ref = torch.tensor([1.0, float("nan"), float("inf")])
    assert compare([ref.clone()], [ref], None, None) is None
    assert "NaN" in compare([torch.tensor([float("nan"), 1.0, float("inf")])], [ref], None, None)
    assert "inf" in compare([torch.tensor([1.0, float("nan"), -float("inf")])], [ref], None, None)


def test_a_special_value_mismatch_says_which_side_has_it() -> None:
    ref = torch.tensor([1.0, 2.0, float("nan"), 4.0])
    own = compare(
        [torch.tensor([float("nan"), float("nan"), float("nan"), 4.0])], [ref], None, None
    )
    assert own.endswith("NaN at 2 positions where the reference has none")
    theirs = compare([torch.tensor([1.0, 2.0, 3.0, 4.0])], [ref], None, None)
    assert theirs.endswith("no NaN at 1 positions where the reference has NaN")
    inf = compare([torch.tensor([1.0, 2.0, float("nan"), float("inf")])], [ref], None, None)
    assert inf.endswith("+inf at 1 positions where the reference has none")


def test_tolerance_is_configurable_and_fp16_default_is_looser() -> None:
    ref = torch.ones(10)
    assert compare([ref + 5e-3], [ref], None, None) is not None
    assert compare([ref + 5e-3], [ref], 1e-2, 1e-2) is None
    half = torch.ones(10, dtype=torch.float16)
    assert compare([half + 4e-3], [half], None, None) is None


def test_integer_outputs_match_exactly() -> None:
    ref = torch.arange(10)
    assert compare([ref.clone()], [ref], None, None) is None
    assert "differ" in compare([ref + 1], [ref], None, None)


def test_subclass_is_refused() -> None:
    class Liar(torch.Tensor):
        pass

    ref = torch.ones(3)
    assert "tensor" in compare([ref.as_subclass(Liar)], [ref], None, None)


# The envelope of an ill-conditioned reference (compare.py's docstring): the float64 evaluation
# widens the bounds by the float32 reference's own error, and only by that.


def two_pass_group_norm(x: torch.Tensor, groups: int, eps: float = 1e-5) -> torch.Tensor:
    """An honest float32 group norm that rounds differently from torch's (sum / n, two passes)."""
    xs = x.reshape(x.shape[0], groups, -1)
    mean = xs.sum(-1, keepdim=True) / xs.shape[-1]
    var = ((xs - mean) ** 2).sum(-1, keepdim=True) / xs.shape[-1]
    return ((xs - mean) / torch.sqrt(var + eps)).reshape(x.shape)


def test_zeros_still_fail_softmax_with_the_envelope() -> None:
    x = torch.rand(2, 16384)
    ref = torch.softmax(x * 0.1, dim=-1)
    exact = envelope.evaluate(lambda a: torch.softmax(a * 0.1, dim=-1), [x], [ref], flatten)
    assert exact is not None and exact[0] is not None
    problem = compare([torch.zeros_like(ref)], [ref], None, None, exact)
    assert problem and "relative L2" in problem
    # ... while an honest softmax that rounds differently still passes.
    honest = torch.exp(x * 0.1 - (x * 0.1).max(-1, keepdim=True).values)
    honest = honest / honest.sum(-1, keepdim=True)
    assert compare([honest], [ref], None, None, exact) is None


def test_near_constant_group_norm_passes_only_with_the_envelope() -> None:
    torch.manual_seed(0)
    # Each group is a constant plus noise far below float32's resolution of its mean: the
    # float32 reference is rounding noise amplified by 1 / sqrt(eps).
    x = (torch.randn(4, 4, 1) * 10 + torch.randn(4, 4, 30) * 1e-5).reshape(4, 8, 5, 3)
    ref = F.group_norm(x, 4)
    out = two_pass_group_norm(x, 4)
    assert compare([out], [ref], None, None) is not None  # the float32 reference alone rejects
    exact = envelope.evaluate(lambda a: F.group_norm(a, 4), [x], [ref], flatten)
    assert compare([out], [ref], None, None, exact) is None
    # The envelope is the reference's noise level, not a blank cheque: zeros, a sign flip and a
    # constant offset are still wrong.
    assert compare([torch.zeros_like(out)], [ref], None, None, exact) is not None
    assert compare([-out], [ref], None, None, exact) is not None
    assert compare([out + 0.01], [ref], None, None, exact) is not None


def test_exactly_constant_groups_use_the_moved_inputs() -> None:
    # torch normalizes a constant group to exactly 0 in float32, and so would float64 on the
    # same inputs, but sum / n does not; moved by one rounding, the inputs show that 0 is
    # noise-level here.
    x = (torch.randn(2, 2, 1) * 10).expand(2, 2, 30).reshape(2, 4, 3, 5)
    ref = F.group_norm(x, 2)
    exact = envelope.evaluate(lambda a: F.group_norm(a, 2), [x], [ref], flatten)
    out = two_pass_group_norm(x, 2)
    assert compare([out], [ref], None, None, exact) is None
    assert compare([out + 0.01], [ref], None, None, exact) is not None


def test_the_envelope_only_ever_accepts_more() -> None:
    torch.manual_seed(1)
    x = torch.randn(64, 33)
    ref = torch.log_softmax(x, -1)
    exact = envelope.evaluate(lambda a: torch.log_softmax(a, -1), [x], [ref], flatten)
    for scale in (1e-6, 1e-5, 3e-5, 1e-4, 1e-3):
        out = ref + scale * torch.randn_like(ref)
        if compare([out], [ref], None, None) is None:
            assert compare([out], [ref], None, None, exact) is None


def test_no_envelope_when_float64_fails_or_for_other_dtypes() -> None:
    def float32_only(a: torch.Tensor) -> torch.Tensor:
        assert a.dtype == torch.float32
        return a * 2

    x = torch.randn(5)
    assert envelope.evaluate(float32_only, [x], [x * 2], flatten) is None
    # A float64 leaf next to a float16 reference leaf is not used.
    half = envelope.evaluate(lambda a: (a * 2, a.half()), [x], [x * 2, x.half()], flatten)
    assert half is not None and half[0] is not None and half[1] is None


def test_integer_outputs_may_take_only_the_float64_alternatives() -> None:
    # A near-tie that float32 rounding decides: ref32 picks index 0, the float64 evaluation 1.
    ref = torch.tensor([0, 4])
    alternatives = [envelope.IntegerAlternatives([torch.tensor([1, 4])])]
    assert compare([torch.tensor([1, 4])], [ref], None, None, alternatives) is None
    assert compare([torch.tensor([0, 4])], [ref], None, None, alternatives) is None
    assert compare([torch.tensor([1, 4])], [ref], None, None) is not None
    assert compare([torch.tensor([2, 4])], [ref], None, None, alternatives) is not None
    assert compare([torch.tensor([1, 3])], [ref], None, None, alternatives) is not None


def test_inf_or_largest_finite_at_the_overflow_threshold() -> None:
    big = torch.finfo(torch.float32).max
    ref = torch.tensor([2.0, float("inf"), float("inf")])
    out = torch.tensor([2.0, big, float("inf")])  # rounded down where the reference overflowed
    at_edge = torch.tensor([2.0, big * 1.0000001, 1e40], dtype=torch.float64)
    assert compare([out], [ref], None, None, [alone(at_edge)]) is None
    # Without the float64 evaluation, or where it is far past the threshold, positions must match.
    assert "+inf" in compare([out], [ref], None, None)
    past = torch.tensor([2.0, 1e39, 1e40], dtype=torch.float64)
    assert "+inf" in compare([out], [ref], None, None, [alone(past)])


def test_float64_arbitrates_where_float32_made_nan_or_inf() -> None:
    # ref32: a float32 product overflowed, then met a 0 (inf * 0 = NaN); in float64 it is 0.
    ref = torch.tensor([2.0, float("nan"), float("inf")])
    exact = alone(torch.tensor([2.0, 0.0, 3.0e30], dtype=torch.float64))
    assert compare([torch.tensor([2.0, 0.0, 3.0e30])], [ref], None, None, [exact]) is None
    assert compare([ref.clone()], [ref], None, None, [exact]) is None  # ref32's values pass too
    wrong = compare([torch.tensor([2.0, 1.0, 3.0e30])], [ref], None, None, [exact])
    assert wrong is not None and "outside" in wrong
    # Without the float64 evaluation the positions must match, and a NaN where both
    # references are finite is wrong.
    assert "NaN" in compare([torch.tensor([2.0, 0.0, 3.0e30])], [ref], None, None)
    finite = torch.tensor([2.0, 0.0, 1.0])
    both = alone(torch.tensor([2.0, 0.0, 1.0], dtype=torch.float64))
    nan_out = torch.tensor([2.0, float("nan"), 1.0])
    assert "NaN" in compare([nan_out], [finite], None, None, [both])


def test_chunked_comparison_gives_the_same_verdicts(monkeypatch) -> None:
    from drtriton.verify import compare as cmp

    torch.manual_seed(0)
    ref = torch.randn(3, 1000)
    exact = alone(ref.double() + 1e-9)
    off = ref.clone()
    off[2, 917] += 1.0  # one element outside, in the last chunk
    nan = ref.clone()
    nan[1, 5] = float("nan")
    soft = torch.softmax(torch.rand(3, 1000), dim=-1) / 100  # entries < atol: only the norm test
    cases = [(ref * (1 + 1e-7), ref, exact), (off, ref, exact), (torch.zeros_like(soft), soft, None),
             (nan, ref, None)]  # fmt: skip

    def verdicts() -> list[str | None]:
        return [compare([o], [r], None, None, [x] if x is not None else None) for o, r, x in cases]

    whole = verdicts()
    monkeypatch.setattr(cmp, "CHUNK", 257)  # 12 chunks, the last one partial
    assert verdicts() == whole
    assert whole[0] is None and "(2, 917)" in whole[1] and "relative L2" in whole[2]
    assert "NaN at 1 positions" in whole[3]


def _ill_conditioned_in_bf16(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(exact answer, a bf16 evaluation of it) where every fourth run of 1024 elements (a
    channel whose spread is near bf16's rounding, under a norm) carries an error of 0.05, past
    1e-2, and the rest bf16 rounding alone."""
    g = torch.Generator().manual_seed(seed)
    exact = torch.randn(16384, generator=g, dtype=torch.float64)
    noisy = (torch.arange(16384) // 1024) % 4 == 0
    error = torch.where(noisy, 0.05 * torch.randn(16384, generator=g, dtype=torch.float64), 0.0)
    return exact, (exact + error).to(torch.bfloat16)


def _bf16_expected(exact: torch.Tensor, eager: torch.Tensor):  # type: ignore[no-untyped-def]
    from drtriton.verify.compare import Expected

    expected = Expected([eager])
    expected.strict_values = Expected([exact.float()], exact=[alone(exact)])
    return expected


def _another_draw(exact: torch.Tensor, seed: int, scale: float = 1.0) -> torch.Tensor:
    """`exact` with the error of another bf16 evaluation (torch.compile, another kernel)."""
    x, other = _ill_conditioned_in_bf16(seed)
    return (exact + scale * (other.double() - x)).to(torch.bfloat16)


def test_a_bf16_output_no_less_exact_than_eager_passes_where_eager_itself_fails() -> None:
    from drtriton.verify.compare import judge

    exact, eager = _ill_conditioned_in_bf16(0)
    strict = _bf16_expected(exact, eager).strict_values
    assert compare([eager.float()], strict.values, 1e-2, 1e-2, strict.exact) is not None
    honest = _another_draw(exact, 1)
    expected = _bf16_expected(exact, eager)
    assert compare([honest], expected.values, 1e-2, 1e-2) is not None
    assert compare([honest.float()], strict.values, 1e-2, 1e-2, strict.exact) is not None
    assert judge([honest], expected, 1e-2, 1e-2) is None and expected.by_baseline_error


def test_coarser_than_eager_or_wrong_where_eager_is_exact_still_fails() -> None:
    from drtriton.verify.compare import judge

    exact, eager = _ill_conditioned_in_bf16(0)
    cases = {
        "three times eager's error: coarser arithmetic": _another_draw(exact, 1, 3.0),
        # eager is exact to bf16 rounding in runs 1-3 of 4: 0.05 off there is wrong
        "wrong where eager is exact": (exact + 0.05 * ((torch.arange(16384) // 1024) == 1)).to(
            torch.bfloat16
        ),
        "zeros": torch.zeros_like(eager),
        "a NaN": _another_draw(exact, 1).index_fill(0, torch.tensor([7]), float("nan")),
    }
    # The verdict says which bound failed, after the mode's own per-element finding.
    bound = {
        "three times eager's error: coarser arithmetic": "error norm against the float64 answer",
        "wrong where eager is exact": "times the mode reference's local error",
        "zeros": "times the mode reference's local error",
        "a NaN": "infinities or NaN where the float64 answer has other values",
    }
    for name, out in cases.items():
        expected = _bf16_expected(exact, eager)
        why = judge([out], expected, 1e-2, 1e-2)
        assert why is not None and why.startswith("output: ") and bound[name] in why, (name, why)
        assert not expected.by_baseline_error, name


def test_the_spread_of_two_float64_answers_widens_only_where_they_differ() -> None:
    # Element 7 is ill-conditioned (a near-tie behind a softmax): inputs moved by another
    # rounding move its exact answer by 1e-3, and ref32 landed on ref64 there by chance.
    ref64 = torch.linspace(0.25, 0.75, 16384, dtype=torch.float64)
    ref = ref64.float()
    ref64 = ref.double()  # every other element exact in float32: no error, no spread
    spread = torch.zeros(16384)
    spread[7] = 1e-3
    leaf = envelope.Float64Leaf(ref64, spread)
    honest = ref.clone()
    honest[7] += 4e-4
    assert compare([honest], [ref], None, None, [alone(ref64)]) is not None
    assert compare([honest], [ref], None, None, [leaf]) is None
    # worst_ratio's figures (benchmarks) agree: 1 past the bound alone, 0 with the spread.
    past, ratio = worst_ratio(honest, ref, alone(ref64))
    assert past == 1 and ratio > 1
    past, ratio = worst_ratio(honest, ref, leaf)
    assert past == 0 and 0 < ratio < 1
    # 16 spreads is the limit there, and the well-conditioned elements keep their bounds.
    for at, by in ((7, 0.02), (8, 2e-3)):
        wrong = ref.clone()
        wrong[at] += by
        assert compare([wrong], [ref], None, None, [leaf]) is not None


def test_the_spread_is_two_moved_answers_apart_and_zero_where_one_is_not_finite() -> None:
    torch.manual_seed(3)
    x = torch.randn(2, 64)
    x[1, 1] = x[1, 0]  # row 1: two largest logits tied at 1e4, the rest far below
    x[1, 0:2] = 1e4
    x[1, 2:] = 0.0

    def tie(a: torch.Tensor) -> torch.Tensor:
        return torch.softmax(a, -1)

    leaf = envelope.evaluate(tie, [x], [tie(x)], flatten)[0]
    assert isinstance(leaf, envelope.Float64Leaf) and leaf.spread.dtype == torch.float32
    assert float(leaf.spread[1, :2].min()) > 1e-5  # one rounding of 1e4 moves the tie
    assert float(leaf.spread[0].max()) < 1e-8  # a well-conditioned row barely moves

    def overflow(a: torch.Tensor) -> torch.Tensor:
        return a / (a - a)  # inf or NaN everywhere, in both evaluations

    inf = envelope.evaluate(overflow, [x], [overflow(x)], flatten)[0]
    assert torch.count_nonzero(inf.spread) == 0


def test_the_spread_is_the_same_chunk_by_chunk_and_zero_when_memory_runs_out(monkeypatch) -> None:
    torch.manual_seed(4)
    x = torch.randn(3, 50)

    def noisy(a: torch.Tensor) -> torch.Tensor:
        return torch.softmax(a * 3.0, -1)

    whole = envelope.evaluate(noisy, [x], [noisy(x)], flatten)[0]
    monkeypatch.setattr(envelope, "SPREAD_CHUNK", 7)  # 22 chunks, the last partial
    chunked = envelope.evaluate(noisy, [x], [noisy(x)], flatten)[0]
    assert float(whole.spread.max()) > 0 and torch.equal(whole.spread, chunked.spread)
    real = envelope._spread

    def out_of_memory(value: torch.Tensor, other: torch.Tensor | None) -> torch.Tensor:
        if other is not None:
            raise torch.OutOfMemoryError("no room for the spread")
        return real(value, other)

    monkeypatch.setattr(envelope, "_spread", out_of_memory)
    strict = envelope.evaluate(noisy, [x], [noisy(x)], flatten)[0]
    assert torch.equal(strict.value, whole.value) and torch.count_nonzero(strict.spread) == 0

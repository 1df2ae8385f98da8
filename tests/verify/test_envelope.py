"""The harness's float64 evaluation of a float32 task (envelope.py): when it is made, and that
it never touches the float32 reference."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
import torch

from drtriton.verify.envelope import Float64Leaf, IntegerAlternatives
from drtriton.verify.references import References
from drtriton.verify.task import load_task

FUNCTIONAL = """
import torch
import torch.nn.functional as F

def fused_operator(x0, x1):
    return F.group_norm(x0, 2, x1), torch.argmax(x0, 1)

def get_inputs():
    return [torch.randn(2, 4, 3), torch.randn(4)]
"""

RANDOM = """
import torch

def fused_operator(x0):
    return x0 + torch.rand_like(x0)

def get_inputs():
    return [torch.randn(8)]
"""

MODULE = """
import torch

class Model(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = torch.nn.Linear(n, n)

    def forward(self, x):
        return torch.softmax(self.linear(x), -1)

def get_inputs():
    return [torch.randn(3, 5)]

def get_init_inputs():
    return [5]
"""


def references(source: str, trials: int = 2) -> tuple[object, list]:
    task = load_task(source)
    sets = [task.make_inputs(i, 0) for i in range(trials)]
    reference = task.build_reference(torch.device("cpu"), 0)
    evaluate = References(reference, torch.device("cpu"))
    refs = [evaluate(inputs) for inputs in sets]
    return reference, refs


def test_float32_outputs_get_a_float64_evaluation() -> None:
    _, refs = references(FUNCTIONAL)
    for expected in refs:
        norm, index = expected.exact
        assert isinstance(norm, Float64Leaf) and norm.value.dtype == torch.float64
        assert (norm.value - expected.values[0].double()).abs().max() < 1e-4
        # Integer outputs: the float64 evaluations' own answers, not a tolerance.
        assert isinstance(index, IntegerAlternatives)
        assert all(torch.equal(v, expected.values[1]) for v in index.values)
        assert expected.values[0].dtype == torch.float32


def test_tasks_that_draw_random_numbers_get_no_envelope() -> None:
    _, refs = references(RANDOM)
    assert all(expected.exact is None for expected in refs)


def test_module_tasks_evaluate_a_float64_copy() -> None:
    model, refs = references(MODULE)
    assert all(p.dtype == torch.float32 for p in model.parameters())  # the original is untouched
    leaf = refs[0].exact[0]
    assert isinstance(leaf, Float64Leaf) and leaf.value.dtype == torch.float64
    assert (leaf.value - refs[0].values[0].double()).abs().max() < 1e-5


def _pending_refs(source: str, redraw_changes: bool = False) -> tuple[list, list[int]]:
    """References made with `redraw`: their float64 evaluation is left pending; `draws`
    counts the redraws (a changed redraw: a task whose inputs do not come out the same)."""
    task = load_task(source)
    reference = task.build_reference(torch.device("cpu"), 0)
    evaluate = References(reference, torch.device("cpu"))
    draws = [0]

    def redraw(i: int) -> list:
        draws[0] += 1
        again = task.make_inputs(i, 0)
        return [x + 1.0 for x in again] if redraw_changes else again

    refs = [evaluate(task.make_inputs(i, 0), redraw=lambda i=i: redraw(i)) for i in range(2)]
    return refs, draws


def test_with_a_redraw_the_float64_evaluation_waits_until_float32_alone_rejects() -> None:
    from drtriton.verify.compare import judge

    refs, draws = _pending_refs(FUNCTIONAL)
    assert all(r.exact is None and r.pending is not None for r in refs)
    honest = [refs[0].values[0].clone(), refs[0].values[1].clone()]
    assert judge(honest, refs[0], None, None) is None
    assert draws == [0] and refs[0].exact is None  # passed on float32 alone: never evaluated
    wrong = [refs[1].values[0] + 0.5, refs[1].values[1]]
    assert judge(wrong, refs[1], None, None) is not None  # judged with the envelope, still wrong
    assert draws == [1] and refs[1].pending is None
    assert refs[1].exact is not None and refs[1].exact[0].value.dtype == torch.float64
    eager = references(FUNCTIONAL)[1][1]  # made up front: the same evaluation
    assert torch.equal(refs[1].exact[0].value, eager.exact[0].value)


def test_an_output_that_passes_only_with_the_envelope_passes_when_it_is_made_late() -> None:
    import torch.nn.functional as F

    from drtriton.verify.compare import Expected, compare, judge

    # A near-constant group (variance at rounding level): float32 alone rejects an honest
    # kernel's answer, the envelope accepts it (test_compare's case, through judge).
    torch.manual_seed(0)
    x = (1.0 + 1e-7 * torch.randn(2, 8, 4)).float()
    ref = F.group_norm(x, 4)
    out = F.group_norm(x.double(), 4).float()
    assert compare([out], [ref], None, None) is not None
    evaluated: list[int] = []

    def pending() -> list:
        from drtriton.verify import envelope
        from drtriton.verify.compare import flatten

        evaluated.append(1)
        return envelope.evaluate(lambda a: F.group_norm(a, 4), [x], [ref], flatten)

    assert judge([out], Expected([ref], None, pending), None, None) is None
    assert evaluated == [1]


def test_inputs_that_redraw_differently_get_no_envelope() -> None:
    from drtriton.verify.compare import judge

    refs, draws = _pending_refs(FUNCTIONAL, redraw_changes=True)
    wrong = [refs[0].values[0] + 0.5, refs[0].values[1]]
    assert judge(wrong, refs[0], None, None) is not None
    assert draws == [1] and refs[0].exact is None  # float32 alone (the stricter) decided


def test_inputs_too_large_for_the_gpus_share_are_evaluated_on_the_host() -> None:
    reference = load_task(MODULE).build_reference(torch.device("cpu"), 0)
    gpu = References(reference, torch.device("cuda"), 1.0, envelope_host_max_gb=4.0)
    assert gpu._envelope_place(1 << 30) == "device"
    assert gpu._envelope_place(3 << 30) == "host"
    assert gpu._envelope_place(5 << 30) is None  # too large for the host too: float32 alone
    assert References(reference, torch.device("cuda"), 1.0)._envelope_place(3 << 30) is None
    # On the CPU the device is the host: no second place to go.
    cpu = References(reference, torch.device("cpu"), 1.0, envelope_host_max_gb=4.0)
    assert cpu._envelope_place(3 << 30) is None


def test_a_host_evaluation_copies_the_model_to_the_host_and_lets_go_of_the_gpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from drtriton.verify import gpu_lock

    task = load_task(MODULE)
    reference = task.build_reference(torch.device("cpu"), 0)
    evaluate = References(reference, torch.device("cpu"), 0.0, envelope_host_max_gb=1.0)
    monkeypatch.setattr(evaluate, "_envelope_place", lambda nbytes: "host")
    released: list[str] = []

    @contextlib.contextmanager
    def released_for(device: str) -> Iterator[None]:
        released.append(device)
        yield

    monkeypatch.setattr(gpu_lock, "released", released_for)
    expected = evaluate(task.make_inputs(0, 0))
    assert evaluate.on_host and released == ["cpu"]  # the float64 run let go of the lock
    assert all(p.dtype == torch.float64 and p.device.type == "cpu"
               for p in evaluate.reference64.parameters())  # fmt: skip
    assert expected.exact[0].value.dtype == torch.float64
    assert (expected.exact[0].value - expected.values[0].double()).abs().max() < 1e-5

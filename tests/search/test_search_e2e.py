"""A tiny end-to-end search on the CPU: teacher candidates, the verifier, the DP, the hybrid.
Each verification starts a worker (about 3 s here), so the programs stay at 2-3 operators."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import pytest

from drtriton import _core
from drtriton.search import SearchConfig, TemplatePolicy, VerdictCache, search
from drtriton.search.search import Pace, _search_fragment

pytestmark = pytest.mark.skipif(not hasattr(_core, "codegen_variants"), reason="no teacher binding")


def task(body: str, inputs: str) -> str:
    return (
        "import torch\nimport torch.nn.functional as F\n\n"
        f"def fused_operator(x0, x1):\n{body}\n\ndef get_inputs():\n    return [{inputs}]\n"
    )


TWO = task(
    "    t0 = torch.add(x0, x1)\n    t1 = torch.relu(t0)\n    return t1",
    "torch.randn(8, 32), torch.randn(8, 32)",
)
THREE = task(
    "    t0 = torch.add(x0, x1)\n    t1 = torch.relu(t0)\n    t2 = torch.sigmoid(t1)\n    return t2",
    "torch.randn(8, 32), torch.randn(8, 32)",
)


class TeacherExcept:
    """The teacher, except for the fragments `refused` picks: they stay in PyTorch."""

    def __init__(self, refused: Callable[[str], bool]) -> None:
        self.refused = refused

    def candidates(self, task_source: str, k: int, amplified: Sequence[str] = ()) -> list[str]:
        if self.refused(task_source):
            return []
        return TemplatePolicy().candidates(task_source, k, amplified)


def no_sigmoid() -> TeacherExcept:
    """A PyTorch segment forced wherever a sigmoid is."""
    return TeacherExcept(lambda source: "sigmoid" in source)


def test_fuses_a_two_operator_program():
    cache = VerdictCache()
    result = search(TWO, TemplatePolicy(), SearchConfig(k=1), cache)
    assert result.cover == [{"start": 0, "end": 2, "fused": True}]
    assert result.cost < result.pytorch_cost
    assert result.hybrid_ok, result.hybrid_reason
    # Searching again judges nothing anew.
    again = search(TWO, TemplatePolicy(), SearchConfig(k=1), cache)
    assert cache.hits == 1 and again.cover == result.cover


def test_hybrid_keeps_unsupported_fragment_in_pytorch():
    result = search(THREE, no_sigmoid(), SearchConfig(k=1))
    assert result.cover == [
        {"start": 0, "end": 2, "fused": True},
        {"start": 2, "end": 3, "fused": False},
    ]
    assert "t2 = torch.sigmoid(t1)" in result.hybrid
    assert result.hybrid_ok, result.hybrid_reason


# add and relu, then torch.cat([relu's result, x1], 1) as the frontend spells it.
CONCATENATED = task(
    "    t0 = torch.add(x0, x1)\n    t1 = torch.relu(t0)\n    t2 = F.pad(t1, [0, 32])\n"
    "    t3 = F.pad(x1, [32, 0])\n    t4 = torch.add(t2, t3)\n    return t4",
    "torch.randn(8, 32), torch.randn(8, 32)",
)


def test_a_concatenation_kept_in_pytorch_is_one_cat_the_check_allows():
    no_pad = TeacherExcept(lambda source: "F.pad" in source)  # the cat stays in PyTorch
    result = search(CONCATENATED, no_pad, SearchConfig(k=1, max_ops=2))
    assert {"start": 0, "end": 2, "fused": True} in result.cover
    assert "t4 = torch.cat([t1, x1], 1)" in result.hybrid
    assert "F.pad" not in result.hybrid
    assert "cat" in result.kept_packets
    assert result.hybrid_ok, result.hybrid_reason


# add and relu, then x[:, 1::2] of the result as the frontend spells it (narrow, a pad up to a
# multiple of the step, a split and a select of one phase).
SLICED = task(
    "    t0 = torch.add(x0, x1)\n    t1 = torch.relu(t0)\n    t2 = torch.narrow(t1, 1, 1, 31)\n"
    "    t3 = F.pad(t2, [0, 1])\n    t4 = torch.reshape(t3, [8, 16, 2])\n"
    "    t5 = torch.select(t4, 2, 0)\n    return t5",
    "torch.randn(8, 32), torch.randn(8, 32)",
)


def test_a_strided_slice_kept_in_pytorch_is_one_subscript_the_check_allows():
    spelled = ("torch.narrow", "F.pad", "torch.reshape", "torch.select")
    layout = TeacherExcept(lambda source: any(op in source for op in spelled))  # kept in PyTorch
    result = search(SLICED, layout, SearchConfig(k=1, max_ops=2))
    assert {"start": 0, "end": 2, "fused": True} in result.cover
    assert "t5 = t1[:, 1::2]" in result.hybrid
    assert "F.pad" not in result.hybrid
    assert result.hybrid_ok, result.hybrid_reason


def test_a_recurring_step_is_verified_once_and_fused_at_every_step():
    # Six steps of h = tanh(linear(h)): each step's fragment is one program under other names,
    # so the search judges it once (the cap of four measured programs left two steps unfused).
    steps = [f"    t{2 * i} = F.linear({'x0' if i == 0 else f't{2 * i - 1}'}, x1, x2)\n"
             f"    t{2 * i + 1} = torch.tanh(t{2 * i})\n" for i in range(6)]  # fmt: skip
    loop = (
        "import torch\nimport torch.nn.functional as F\n\ndef fused_operator(x0, x1, x2):\n"
        + "".join(steps)
        + "    return t11\n\ndef get_inputs():\n"
        + "    return [torch.randn(8, 32), torch.randn(32, 32), torch.randn(32)]\n"
    )
    cache = VerdictCache()
    short = TeacherExcept(lambda source: _core.parse(source)[1]["level"] > 2)  # not the loop
    result = search(loop, short, SearchConfig(k=1, max_ops=2), cache)
    fused = [(s["start"], s["end"]) for s in result.cover if s["fused"]]
    assert fused == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10), (10, 12)]
    assert len(result.verification_costs) == 1 and cache.hits == 5
    assert result.hybrid.count("# fragment ") == 1  # its kernels once, called at every step
    assert result.hybrid.count("= f0_triton_fused_operator(") == 6
    assert result.hybrid_ok, result.hybrid_reason


FIVE = task(
    "    t0 = torch.add(x0, x1)\n    t1 = torch.relu(t0)\n    t2 = torch.sigmoid(t1)\n"
    "    t3 = torch.add(t2, x1)\n    t4 = torch.relu(t3)\n    return t4",
    "torch.randn(8, 32), torch.randn(8, 32)",
)


@pytest.mark.parametrize("fallbacks", [2, 0])
def test_a_failed_hybrid_falls_back_to_one_verified_fragment(
    fallbacks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two fused fragments around a PyTorch sigmoid; their stitched hybrid is made to fail its
    # check (as a half-precision boundary can), a hybrid of one fragment to pass.
    import importlib

    search_module = importlib.import_module("drtriton.search.search")

    checked: list[int] = []

    def check(task_source, hybrid, allow, device, verifier=None, **options):  # type: ignore[no-untyped-def]
        fragments = len(re.findall(r"= f\d+_triton_fused_operator\(", hybrid))
        checked.append(fragments)
        if fragments > 1:
            return False, "wrong_answer: made to fail"
        return True, "correct: 5 input sets match"

    monkeypatch.setattr(search_module, "check_hybrid", check)
    config = SearchConfig(k=1, max_ops=2, hybrid_fallbacks=fallbacks)
    result = search(FIVE, no_sigmoid(), config)
    if fallbacks == 0:
        assert checked == [2] and result.hybrid_ok is False
        assert sum(s["fused"] for s in result.cover) == 2
        return
    assert checked == [2, 1]
    assert result.hybrid_ok, result.hybrid_reason
    assert "the best cover's hybrid failed its check: wrong_answer: made to fail" in (
        result.hybrid_reason
    )
    fused = [(s["start"], s["end"]) for s in result.cover if s["fused"]]
    assert fused in ([(0, 2)], [(3, 5)])
    assert len(re.findall(r"= f\d+_triton_fused_operator\(", result.hybrid)) == 1
    assert result.cost < result.pytorch_cost


def test_the_first_fallback_is_checked_after_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # The search's time runs out while the best cover's hybrid is checked: the best
    # one-fragment cover is still checked (once), and kept when it passes.
    import importlib

    search_module = importlib.import_module("drtriton.search.search")
    checked: list[int] = []

    def check(task_source, hybrid, allow, device, verifier=None, **options):  # type: ignore[no-untyped-def]
        fragments = len(re.findall(r"= f\d+_triton_fused_operator\(", hybrid))
        checked.append(fragments)
        return fragments == 1 and len(checked) > 2, "made to fail unless one fragment, late"

    monkeypatch.setattr(search_module, "check_hybrid", check)
    monkeypatch.setattr(search_module.Pace, "out_of_time", lambda self: bool(checked))
    result = search(FIVE, no_sigmoid(), SearchConfig(k=1, max_ops=2, hybrid_fallbacks=2))
    assert checked == [2, 1]  # the best cover, then one fallback: no second one, out of time
    assert not result.hybrid_ok


class Recording:
    """The teacher, recording what each fragment's request named as amplified."""

    def __init__(self) -> None:
        self.asked: dict[str, list[str]] = {}

    def candidates(self, task_source: str, k: int, amplified: Sequence[str] = ()) -> list[str]:
        self.asked[task_source] = list(amplified)
        return TemplatePolicy().candidates(task_source, k, amplified)


def test_fragments_feeding_a_later_softmax_ask_for_full_precision():
    # The linear's fragment alone has no softmax; its output feeds one in the next fragment
    # (KernelBench L3 43's q/k/v projection), so the teacher writes its product in bf16x6.
    program = task(
        "    t0 = F.linear(x0, x1)\n    t1 = torch.softmax(t0, 1)\n    return t1",
        "torch.randn(16, 32), torch.randn(24, 32)",
    )
    fragments = {(f["start"], f["end"]): f for f in _core.fragments(program, 5)}
    assert fragments[(0, 1)]["amplified"] == ["t0"]
    assert fragments[(1, 2)]["amplified"] == [] and fragments[(0, 2)]["amplified"] == []
    # The search hands the fragment's outputs to its policy.
    policy = Recording()
    wrong = {"correct": False, "status": "wrong_answer", "reason": "not judged here"}
    _search_fragment(fragments[(0, 1)], policy, SearchConfig(k=1), VerdictCache(),
                     lambda task, candidate: wrong, Pace(None))  # fmt: skip
    assert policy.asked == {fragments[(0, 1)]["source"]: ["t0"]}
    [candidate] = TemplatePolicy().candidates(fragments[(0, 1)]["source"], 1, ["t0"])
    assert '"bf16x6" if torch.get_float32_matmul_precision()' in candidate
    [plain] = TemplatePolicy().candidates(fragments[(0, 1)]["source"], 1)
    assert '"fp16x3" if torch.get_float32_matmul_precision()' in plain

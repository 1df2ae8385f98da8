"""Precision modes (verify/precision.py, issue 21): fp16 and bf16 verification of honest and
dishonest candidates on the CPU interpreter, and the rules that keep a mode from letting a
candidate gain by a precision the baseline was denied.

What the interpreter cannot show: TF32 (the CPU has no TF32 units: tf32 mode differs from fp32
there only in its tolerance and flags), bf16 `tl.dot`, and bf16 arithmetic without a cast to
float32 after the load (Triton 3.6's interpreter computes bf16 sums on raw bits: the plain
add_relu kernel returns NaN in bf16). The honest half kernels here therefore cast at load and
store, as a bf16 kernel on a GPU does too.
"""

from __future__ import annotations

import pytest
import torch
from conftest import HERE, task_source

from drtriton.cli import main
from drtriton.errors import UserError
from drtriton.verify import Options, Verifier, verify
from drtriton.verify import compare as cmp
from drtriton.verify.baselines import Baselines, in_mode_of
from drtriton.verify.envelope import Float64Leaf
from drtriton.verify.precision import MODES, cast, mode, widened
from drtriton.verify.task import load_task

HALF = ("fp16", "bf16")


def candidate(name: str) -> str:
    return (HERE / "precision" / f"{name}.py").read_text()


# -- end to end, in the worker -------------------------------------------------------------------


HONEST_HALF = [
    ("add_relu", "add_relu_upcast"),
    ("rowsum", "rowsum_upcast"),
    ("scale_module", "scale_module_upcast"),
]


@pytest.mark.parametrize("precision", HALF)
@pytest.mark.parametrize(("task", "name"), HONEST_HALF)
def test_honest_half_kernels_are_correct(task: str, name: str, precision: str,
                                         verifier: Verifier) -> None:  # fmt: skip
    verdict = verifier.verify(task_source(task), candidate(name), precision=precision,
                              prewarm=True)  # fmt: skip
    assert verdict.status == "correct", verdict.to_json()
    assert verdict.precision == precision and verdict.to_dict()["precision"] == precision


def test_a_dtype_generic_kernel_is_correct_in_fp16(verifier: Verifier) -> None:
    # The fp32 honest kernel computes in its inputs' dtype and allocates empty_like: in fp16 it
    # is an fp16 kernel.
    honest = (HERE / "honest" / "add_relu.py").read_text()
    verdict = verifier.verify(task_source("add_relu"), honest, precision="fp16", prewarm=True)
    assert verdict.status == "correct", verdict.to_json()


@pytest.mark.parametrize("precision", HALF)
def test_a_float32_output_where_half_was_asked_is_wrong(precision: str,
                                                        verifier: Verifier) -> None:  # fmt: skip
    verdict = verifier.verify(task_source("add_relu"), candidate("returns_fp32"),
                              precision=precision, prewarm=True)  # fmt: skip
    assert verdict.status == "wrong_answer", verdict.to_json()
    assert "dtype torch.float32" in verdict.reason, verdict.reason


@pytest.mark.parametrize("precision", HALF)
def test_coarser_than_the_mode_is_wrong(precision: str, verifier: Verifier) -> None:
    verdict = verifier.verify(task_source("add_relu"), candidate("coarse"), precision=precision,
                              prewarm=True)  # fmt: skip
    assert verdict.status == "wrong_answer", verdict.to_json()
    assert "atol=0.01 rtol=0.01" in verdict.reason, verdict.reason


def test_the_fp32_contract_still_rejects_bf16_rounding(verifier: Verifier) -> None:
    low = (HERE / "adversarial" / "low_precision.py").read_text()
    verdict = verifier.verify(task_source("add_relu"), low, prewarm=True)
    assert verdict.status == "wrong_answer" and verdict.precision == "fp32", verdict.to_json()


def test_more_exact_than_the_half_reference_is_correct(verifier: Verifier) -> None:
    """(x * 4096 + 1) - x * 4096: fp16 PyTorch rounds (and overflows) where float32
    intermediates give exactly 1; the strict float32 evaluation of the same inputs accepts."""
    task = load_task(task_source("cancel"))
    (x,) = task.make_inputs(0, 0, mode=mode("fp16"))
    ref = task.module.fused_operator(x)  # the fp16 reference alone rejects the exact answer
    assert cmp.compare([torch.ones_like(ref)], [ref], 1e-2, 1e-2) is not None
    verdict = verifier.verify(task_source("cancel"), candidate("cancel_exact"), precision="fp16",
                              prewarm=True)  # fmt: skip
    assert verdict.status == "correct", verdict.to_json()


TF32_PROBE = (
    (HERE / "honest" / "add_relu.py")
    .read_text()
    .replace(
        "def triton_fused_operator(",
        "def _probe():\n"
        "    on = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)\n"
        "    if on != (WANT, WANT):\n"
        "        raise RuntimeError(f'TF32 flags {on} in the worker')\n\n\n"
        "def triton_fused_operator(",
    )
    .replace("    return out", "    _probe()\n    return out")
)


@pytest.mark.parametrize(("precision", "want"), [("tf32", True), ("fp16", False)])
def test_the_worker_allows_tf32_exactly_in_tf32(precision: str, want: bool) -> None:
    # Static checks off: a real candidate may not even name torch.backends.
    probe = f"WANT = {want}\n" + TF32_PROBE
    verdict = verify(task_source("add_relu"), probe, precision=precision, static_checks=False)
    assert verdict.status == "correct", verdict.to_json()


# -- the API and the CLI ---------------------------------------------------------------------


def test_every_verdict_names_its_precision() -> None:
    static = verify(task_source("add_relu"), "import os\n", precision="bf16")  # rejected early
    assert static.status != "correct" and static.to_dict()["precision"] == "bf16"
    default = verify(task_source("add_relu"), "import os\n")
    assert default.to_dict()["precision"] == "fp32"


def test_an_unknown_precision_is_a_user_error() -> None:
    with pytest.raises(UserError, match="unknown precision 'fp8'"):
        verify(task_source("add_relu"), "x = 1\n", Options(precision="fp8"))


def test_verify_refuses_a_bad_precision_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    task, cand = HERE / "tasks" / "add_relu.py", HERE / "honest" / "add_relu.py"
    code = main(["verify", str(task), str(cand), "--precision", "fp8"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.splitlines()) == 1, err
    assert "argument --precision" in err and "'fp8'" in err


def test_tolerances_follow_the_mode() -> None:
    assert Options().tolerances() == (None, None)  # fp32: per dtype, as before modes existed
    assert Options(atol=1e-3).tolerances() == (1e-3, None)
    for name in ("tf32", "bf16", "fp16"):
        assert Options(precision=name).tolerances() == (1e-2, 1e-2)
    assert Options(precision="bf16", rtol=5e-3).tolerances() == (1e-2, 5e-3)
    assert cmp.DEFAULT_TOLERANCE[torch.float32] == MODES["fp32"].tolerance == 1e-4


# -- inputs and parameters cast as KernelBench casts them -------------------------------------

MIXED = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n, table):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n))
        self.register_buffer("steps", torch.arange(n))  # integer: kept
        self.register_buffer("shift", torch.ones(n))
        self.table = table

    def forward(self, x, idx):
        return x[:, idx] * self.w + self.shift

def get_inputs():
    return [torch.randn(8, 6).t(), torch.arange(6)]

def get_init_inputs():
    return [6, torch.ones(3)]
"""


def test_inputs_parameters_and_buffers_are_cast_integers_kept() -> None:
    task = load_task(MIXED)
    bf16 = mode("bf16")
    x, idx = task.make_inputs(0, 3, mode=bf16)
    assert x.dtype == torch.bfloat16 and idx.dtype == torch.int64
    x32, _ = task.make_inputs(0, 3)
    assert x.stride() == x32.stride()  # a transposed input stays transposed
    assert torch.equal(x, x32.to(torch.bfloat16))  # drawn in float32, then cast
    assert task.init_inputs(bf16)[1].dtype == torch.bfloat16
    model = task.build_reference(torch.device("cpu"), 0, mode=bf16)
    assert model.w.dtype == model.shift.dtype == torch.bfloat16
    assert model.steps.dtype == torch.int64
    assert task.make_inputs(0, 3, mode=mode("tf32"))[0].dtype == torch.float32


def test_widened_is_exact_and_keeps_strides() -> None:
    x = torch.randn(5, 7).t()
    half = cast([x], mode("fp16"))[0]
    wide = widened([half])[0]
    assert wide.dtype == torch.float32 and wide.stride() == x.stride()
    assert torch.equal(wide.to(torch.float16), half)


# -- the strict-float32 alternative never widens the mode's tolerance --------------------------


def _expected(ref_half: torch.Tensor, strict: torch.Tensor) -> cmp.Expected:
    expected = cmp.Expected([ref_half])
    expected.strict = lambda: cmp.Expected([strict], [Float64Leaf.alone(strict.double())])
    return expected


def test_the_strict_alternative_accepts_only_what_the_mode_allows() -> None:
    exact = torch.linspace(0.5, 2.0, 64)
    ref = (exact + 0.05).to(torch.bfloat16)  # a reference 5% off (rounding in a long chain)
    tol = Options(precision="bf16").tolerances()
    near = (exact * (1 + 4e-3)).to(torch.bfloat16)  # within 1e-2 of the exact answer only
    assert cmp.judge([near], _expected(ref, exact), *tol) is None
    # 3% off both, but nearer the exact answer than the mode's reference (eager in bf16): no
    # less exact than the baseline, and the verdict says that is why (_less_exact_than_baseline)
    far = (exact * 1.03).to(torch.bfloat16)
    expected = _expected(ref, exact)
    assert cmp.judge([far], expected, *tol) is None and expected.by_baseline_error
    farther = (exact * 1.08).to(torch.bfloat16)  # 2.1 times the reference's error norm
    expected = _expected(ref, exact)
    why = cmp.judge([farther], expected, *tol)
    assert why is not None and not expected.by_baseline_error
    assert "error norm against the float64 answer 2.1" in why, why
    wide = exact.clone()  # the exact values, in float32 where bf16 was asked
    assert "dtype torch.float32" in cmp.judge([wide], _expected(ref, exact), *tol)


def test_the_strict_alternative_is_made_once() -> None:
    made = []
    exact = torch.ones(16)
    expected = cmp.Expected([torch.zeros(16, dtype=torch.float16)])

    def strict() -> cmp.Expected:
        made.append(1)
        return cmp.Expected([exact])

    expected.strict = strict
    out = [torch.ones(16, dtype=torch.float16)]
    tol = Options(precision="fp16").tolerances()
    assert cmp.judge(out, expected, *tol) is None and cmp.judge(out, expected, *tol) is None
    assert made == [1]


# -- baselines in the same mode ---------------------------------------------------------------


def test_baselines_run_under_the_modes_tf32_flags() -> None:
    def flags() -> tuple[bool, bool]:
        return torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32

    before = flags()
    assert in_mode_of(mode("tf32"), flags)() == (True, True)
    for name in ("fp32", "bf16", "fp16"):
        assert in_mode_of(mode(name), flags)() == (False, False)
    assert flags() == before


def test_the_compiled_baseline_is_kept_per_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    from drtriton.verify import baselines

    compiled: list[str] = []

    def fake(reference, inputs, device, m):  # type: ignore[no-untyped-def]
        compiled.append(m.name)
        return lambda *a: m.name

    monkeypatch.setattr(baselines, "_compile", fake)
    kept = Baselines()
    for name in ("fp32", "bf16", "fp32", "bf16", "tf32"):
        call, error = kept.compiled("task", lambda: None, [], "cuda:0", False, mode(name))
        assert error is None and call() == name
    assert compiled == ["fp32", "bf16", "tf32"]


LINEAR_TASK = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return torch.relu(self.fc(x))

def get_inputs():
    return [torch.randn(4, 32)]

def get_init_inputs():
    return [32]
"""

LINEAR_HYBRID = """import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0).to(y_ptr.dtype.element_ty), mask=mask)

class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        h = F.linear(x, self.fc.weight, self.fc.bias)
        y = torch.empty_like(h)
        relu_kernel[(triton.cdiv(h.numel(), 64),)](h, y, h.numel(), BLOCK=64)
        return y
"""


def test_a_hybrid_keeps_its_pytorch_operator_in_the_mode(verifier: Verifier) -> None:
    """The linear a hybrid leaves in PyTorch runs in bf16 in the worker, on ModelNew's
    parameters cast to bf16 like Model's."""
    verdict = verifier.verify(LINEAR_TASK, LINEAR_HYBRID, precision="bf16", allow_torch=("addmm",),
                              prewarm=True)  # fmt: skip
    assert verdict.status == "correct", verdict.to_json()

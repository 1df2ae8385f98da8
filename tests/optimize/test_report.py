"""What the optimize report says changed (before/after, modelled on the CPU, measured on a GPU)
and what a broken model constructor is blamed on."""

from __future__ import annotations

import os
import pathlib

import pytest

from drtriton import _core
from drtriton.cli import main
from drtriton.errors import UserError
from drtriton.optimize import OptimizeConfig, optimize_source
from drtriton.optimize.pipeline import OptimizeResult

os.environ.pop("TRITON_INTERPRET", None)

MODEL = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, width):
        super().__init__()
        if width < 0:
            raise ValueError(f"width must be positive, not {width}\\nsecond line")
        self.shift = nn.Parameter(torch.randn(width))

    def forward(self, x):
        return torch.relu(x * 2.0) + self.shift

def get_inputs():
    return [torch.randn(64, 16)]

def get_init_inputs():
    return [WIDTH]
"""


def _result(**kw) -> OptimizeResult:
    base = dict(config={"device": "cpu", "mode": "eval"}, frontend={"n_ops": 3, "n_catalog": 3})
    return OptimizeResult(**{**base, **kw})


def test_cpu_report_gives_modelled_traffic_before_and_after() -> None:
    traffic = {"before_bytes": 24576.0, "after_bytes": 12288.0, "ops_counted": 3, "ops": 3}
    report = _result(
        traffic=traffic, verdict={"status": "correct", "correct": True}
    ).report_markdown()
    assert "before: 0.0246 MB moved with every operator in PyTorch" in report
    assert "after: 0.0123 MB with ModelNew (50.0% less)" in report
    assert "3 of 3 operators" in report


def test_unverified_model_new_is_not_sold_as_a_gain() -> None:
    traffic = {"before_bytes": 2e9, "after_bytes": 1e9, "ops_counted": 2, "ops": 5}
    report = _result(traffic=traffic, verdict={"status": "wrong_answer"}).report_markdown()
    assert "before: 2,000 MB" in report and "after: 1,000 MB" in report
    assert "ModelNew was not verified" in report


def test_gpu_report_gives_measured_eager_and_model_new_times() -> None:
    verdict = {"status": "correct", "correct": True, "time_ms": 1.0, "eager_ms": 2.0,
               "compile_ms": 1.5, "speedup": 2.0, "speedup_vs_compile": 1.5}  # fmt: skip
    report = _result(verdict=verdict).report_markdown()
    assert ("before: 2.0000 ms in eager PyTorch; after: 1.0000 ms with ModelNew "
            "(2.00x faster, 50.0% less time)") in report  # fmt: skip
    assert "torch.compile 1.5000 ms (ModelNew 1.50x vs torch.compile)" in report
    slower = {**verdict, "time_ms": 4.0, "speedup": 0.5}
    assert "(2.00x slower, 100.0% more time)" in _result(verdict=slower).report_markdown()


@pytest.mark.skipif(not hasattr(_core, "codegen_variants"), reason="no teacher binding")
def test_optimize_reports_traffic_saved_by_fusion() -> None:
    result = optimize_source(MODEL.replace("WIDTH", "16"), OptimizeConfig(max_ops=3, k=1))
    assert result.correct, result.error or result.verdict
    traffic = result.traffic
    assert traffic["ops_counted"] == traffic["ops"] == 3
    assert 0 < traffic["after_bytes"] < traffic["before_bytes"]  # intermediates stay on chip
    fused = [s for s in result.segments if s["fused"]]
    assert fused and all(s["modelled_bytes"] < s["pytorch_bytes"] for s in fused)
    report = result.report_markdown()
    assert "% less); modelled memory traffic" in report and "; in PyTorch: " in report


def test_a_failing_constructor_is_blamed_on_the_constructor(tmp_path: pathlib.Path,
                                                            capsys: pytest.CaptureFixture[str]
                                                            ) -> None:  # fmt: skip
    code = MODEL.replace("WIDTH", "-1")
    with pytest.raises(UserError) as caught:
        optimize_source(code)
    message = str(caught.value)
    assert "constructor failed" in message and "torch.export" not in message
    assert "ValueError: width must be positive, not -1" in message and "second" not in message
    (tmp_path / "model.py").write_text(code)
    assert main(["optimize", str(tmp_path / "model.py")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "constructor failed" in err


def test_a_correct_model_new_slower_than_eager_is_not_kept_on_a_gpu() -> None:
    from drtriton.optimize import OptimizeConfig
    from drtriton.optimize.pipeline import OptimizeResult, _slower_than_eager

    slower = {"correct": True, "speedup": 0.71, "time_ms": 3.947, "eager_ms": 2.816}
    why = _slower_than_eager(slower, OptimizeConfig(device="cuda"))
    assert why is not None and "3.947 ms against 2.816 ms, 0.71x" in why
    assert _slower_than_eager(slower, OptimizeConfig(device="cuda", keep_slower=True)) is None
    assert _slower_than_eager(slower, OptimizeConfig(device="cpu")) is None  # nothing timed
    faster = {**slower, "speedup": 1.4}
    assert _slower_than_eager(faster, OptimizeConfig(device="cuda")) is None
    assert _slower_than_eager({**slower, "correct": False}, OptimizeConfig(device="cuda")) is None
    # A result whose ModelNew was dropped is not `correct` (the CLI exits 1), its verdict kept.
    assert not OptimizeResult(model_new=None, verdict=slower).correct
    assert OptimizeResult(model_new="class ModelNew: ...", verdict=slower).correct


def test_why_an_opaque_run_stays_in_pytorch_is_the_reason_on_its_line() -> None:
    # The frontend records why it declined a mapping; the call text's operator name is not read.
    from drtriton.frontend import Line
    from drtriton.frontend.lower import BATCH_STATISTICS
    from drtriton.optimize.pipeline import _opaque_why

    call = "torch.ops.aten.some_spelling.default(t0)"
    declined = Line("t1", call, None, ["t0"], reason=BATCH_STATISTICS)
    assert _opaque_why(declined) == (
        "batch statistics stay a PyTorch call (--no-batch-norm-kernels)"
    )
    named = "torch.ops.aten._native_batch_norm_legit.no_stats(t0, None, None, True, 0.1, 1e-05)"
    assert _opaque_why(Line("t1", named, None, ["t0"])) == "not in the operator catalog"

"""A generated ModelNew is a drop-in Model (issue 22): the user's argument names; any batch
where the generic kernels apply (test_any_batch.py); any other shape, dtype, mode or a CPU
without Triton's interpreter runs Model's own forward with a one-time warning; the verifier judges the kernels' text only (verify/dropin.py)."""

from __future__ import annotations

import pathlib
import types
from collections.abc import Callable

import pytest
import torch

from drtriton import _core
from drtriton.optimize import OptimizeConfig, optimize_source
from drtriton.verify import verify
from drtriton.verify.dropin import DROP_IN_MARK, verified_part
from drtriton.verify.task import import_file

pytestmark = pytest.mark.skipif(not hasattr(_core, "codegen_variants"), reason="no teacher binding")
CONFIG = OptimizeConfig(max_ops=3, k=1)

MLP = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)

    def forward(self, features):
        return torch.relu(self.fc(features))

def get_inputs():
    return [torch.randn(4, 16)]

def get_init_inputs():
    return [16, 8]
"""

# Batch norm in eval mode (drtriton optimize's default): the kernels reproduce eval only.
CONV_BN = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, images):
        return torch.relu(self.bn(images))

def get_inputs():
    return [torch.randn(2, 3, 4, 4)]

def get_init_inputs():
    return []
"""


def _load(text: str, folder: pathlib.Path, name: str) -> types.ModuleType:
    path = folder / f"{name}.py"
    path.write_text(text)
    return import_file(str(path), name)


@pytest.fixture(scope="module")
def mlp() -> str:
    result = optimize_source(MLP, CONFIG)
    assert result.verdict is not None and result.verdict["status"] == "correct", result.verdict
    return result.model_new


def test_the_wrapper_keeps_the_names_and_serves_every_batch_size(
    mlp: str,
    tmp_path: pathlib.Path,
    interpreted_model_new: Callable[[str, pathlib.Path, str], None],
) -> None:
    assert "    def forward(self, features):" in mlp and DROP_IN_MARK in mlp
    interpreted_model_new(mlp, tmp_path, """
        torch.manual_seed(0)
        new, ref = module.ModelNew(16, 8), module.Model(16, 8)
        new.load_state_dict(ref.state_dict())
        x = torch.randn(4, 16)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the example shape: the kernels, no warning
            torch.testing.assert_close(new(x), ref(x))
            torch.testing.assert_close(new(features=x), ref(x))
            for batch in (7, 32):  # generic kernels (optimize/generic.py): any batch
                y = torch.randn(batch, 16)
                torch.testing.assert_close(new(y), ref(y))
        new, ref = new.double(), ref.double()
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            for batch in (7, 32, 7):
                y = torch.randn(batch, 16, dtype=torch.float64)
                torch.testing.assert_close(new(y), ref(y))
        texts = [str(w.message) for w in said]
        assert len(texts) == 2, texts  # once per reason: two shapes
        assert "argument 0 is float64 (7, 16)" in texts[0], texts
        assert "verified for float32 (B, 16)" in texts[0], texts
    """)  # fmt: skip


def test_on_a_cpu_without_the_interpreter_model_forward_runs(
    mlp: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)  # triton here: imported without it
    module = _load(mlp, tmp_path, "drop_in_mlp_plain")
    new = module.ModelNew(16, 8)
    x = torch.randn(4, 16)
    with pytest.warns(RuntimeWarning, match="TRITON_INTERPRET=1"):
        out = new(x)
    torch.testing.assert_close(out, module.Model.forward(new, x))


def test_a_mode_dependent_model_runs_model_forward_in_the_other_mode(
    tmp_path: pathlib.Path, interpreted_model_new: Callable[[str, pathlib.Path, str], None]
) -> None:
    result = optimize_source(CONV_BN, CONFIG)
    assert result.verdict is not None and result.verdict["status"] == "correct", result.verdict
    assert "_DRTRITON_TRAINING = False" in result.model_new
    interpreted_model_new(result.model_new, tmp_path, """
        new, ref = module.ModelNew(), module.Model()
        x = torch.randn(2, 3, 4, 4)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            torch.testing.assert_close(new.train()(x), ref.train()(x))
        assert "reproduce eval mode and the model is in train" in str(said[0].message)
        # Batch statistics and the running-stat updates are Model's own.
        torch.testing.assert_close(new.bn.running_mean, ref.bn.running_mean)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            torch.testing.assert_close(new.eval()(x), ref.eval()(x))
    """)  # fmt: skip


def test_the_verifier_judges_and_runs_only_the_text_before_the_marker() -> None:
    verify_tests = pathlib.Path(__file__).resolve().parents[1] / "verify"
    honest = (verify_tests / "honest" / "add_relu.py").read_text()
    task = (verify_tests / "tasks" / "add_relu.py").read_text()
    wrapper = f"{DROP_IN_MARK}\nimport os\nos.system('exit 3')\nraise SystemExit(1)\n"
    assert verified_part(honest + wrapper) == honest
    verdict = verify(task, honest + wrapper, sandbox="none")
    assert verdict.status == "correct", verdict.reason
    assert verdict.extra["judged_chars"] == len(honest)
    # Before the marker the rules hold as ever.
    bad = verify(task, "import os\n" + honest + wrapper, sandbox="none")
    assert bad.status == "forbidden"


def test_the_marker_counts_only_at_the_start_of_a_line() -> None:
    assert verified_part("a\nb\n") == "a\nb\n"
    assert verified_part(f"{DROP_IN_MARK}\nx") == ""
    assert verified_part(f"\n{DROP_IN_MARK}\nx") == "\n"
    assert verified_part(f"a\n{DROP_IN_MARK} and more\nx") == "a\n"
    inside = f"a = 1  # {DROP_IN_MARK}\nx"
    assert verified_part(inside) == inside  # not a marker line: all of it is judged

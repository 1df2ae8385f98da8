"""ModelNew serves any batch size where the teacher's generic kernels apply (issue 22,
optimize/generic.py): three models with a dynamic batch match Model at three batch sizes with
no fallback warning; a shape the kernels cannot serve still runs Model's forward, said once;
a model that bakes its batch in keeps the example-shape kernels."""

from __future__ import annotations

import pathlib
import textwrap
from collections.abc import Callable
from typing import Any

import pytest
import torch
import triton

from drtriton import _core
from drtriton.frontend import from_module_source
from drtriton.optimize import OptimizeConfig, optimize_source
from drtriton.optimize.generic import Batch, batch_of, max_batch, resized_task
from drtriton.optimize.serving import Serving, drop_in_block

pytestmark = pytest.mark.skipif(not hasattr(_core, "codegen_variants"), reason="no teacher binding")
CONFIG = OptimizeConfig(max_ops=3, k=1)

MLP = """import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(12, 24), nn.Linear(24, 8)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))

def get_inputs():
    return [torch.randn(4, 12)]

def get_init_inputs():
    return []
"""

CONV = """import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4)

    def forward(self, images):
        return torch.relu(self.bn(self.conv(images)))

def get_inputs():
    return [torch.randn(2, 3, 6, 6)]

def get_init_inputs():
    return []
"""

ATTENTION = """import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, tokens):
        q, k, v = self.q(tokens), self.k(tokens), self.v(tokens)
        return torch.softmax(q @ k.transpose(1, 2) / 2.0, dim=-1) @ v

def get_inputs():
    return [torch.randn(2, 4, 8)]

def get_init_inputs():
    return []
"""

# The batch is baked into the program: torch.export records view(x.shape[0], 3, 4) as
# view([4, 3, 4]) (its sizes are static), so the forward line differs at another batch.
BAKED = """import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x.view(x.shape[0], 3, 4)) * 2.0

def get_inputs():
    return [torch.randn(4, 12)]

def get_init_inputs():
    return []
"""


# The models under test, seeded and with the same weights (the child's script then compares).
NEW_AND_REF = (
    "torch.manual_seed(0)\n"
    "new, ref = module.ModelNew().eval(), module.Model().eval()\n"
    "new.load_state_dict(ref.state_dict())\n"
)


def _optimized(code: str) -> str:
    result = optimize_source(code, CONFIG)
    assert result.verdict is not None and result.verdict["status"] == "correct", result.verdict
    assert result.shapes["any_batch"], result.shapes
    assert [c["status"] for c in result.shapes["checks"]] == ["correct"] * 3, result.shapes
    assert "B any batch from 1 to" in result.report_markdown()
    return result.model_new


# Batch sizes none of the verifications used (they ran b, 2b+1 and 1).
MATCHES = """
    with warnings.catch_warnings():
        # The kernels serve every call: no fallback warning. (Only that one: the interpreter's
        # numpy warns about NaN in masked-off lanes of a softmax, which the mask then drops.)
        warnings.filterwarnings("error", message="ModelNew runs Model's PyTorch forward")
        for batch in (3, 6, 11):
            x = torch.randn(batch, *SHAPE)
            torch.testing.assert_close(new(x), ref(x))
"""


@pytest.mark.parametrize(
    ("code", "shape"), [(MLP, (12,)), (CONV, (3, 6, 6)), (ATTENTION, (4, 8))],
    ids=["mlp", "conv_block", "attention"],
)  # fmt: skip
def test_model_new_matches_model_at_three_batch_sizes_without_falling_back(
    code: str,
    shape: tuple[int, ...],
    tmp_path: pathlib.Path,
    interpreted_model_new: Callable[[str, pathlib.Path, str], None],
) -> None:
    text = _optimized(code)
    assert "_DRTRITON_BATCH = (1, " in text
    interpreted_model_new(
        text, tmp_path, NEW_AND_REF + f"SHAPE = {shape!r}\n" + textwrap.dedent(MATCHES)
    )


def test_a_shape_the_kernels_cannot_serve_falls_back_with_one_warning(
    tmp_path: pathlib.Path, interpreted_model_new: Callable[[str, pathlib.Path, str], None]
) -> None:
    text = _optimized(CONV)
    interpreted_model_new(text, tmp_path, NEW_AND_REF + textwrap.dedent("""
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            for _ in range(2):  # another image size: Model takes it, the kernels do not
                x = torch.randn(3, 3, 7, 7)
                torch.testing.assert_close(new(x), ref(x))
        texts = [str(w.message) for w in said]
        assert len(texts) == 1, texts
        assert "argument 0 is float32 (3, 3, 7, 7)" in texts[0], texts
        assert "verified for float32 (B, 3, 6, 6)" in texts[0], texts
        with warnings.catch_warnings():  # a served shape after it: the kernels again
            warnings.filterwarnings("error", message="ModelNew runs Model's PyTorch forward")
            x = torch.randn(5, 3, 6, 6)
            torch.testing.assert_close(new(x), ref(x))
    """))  # fmt: skip


def test_a_model_that_bakes_its_batch_in_keeps_the_example_shapes() -> None:
    result = optimize_source(BAKED, CONFIG)
    assert result.verdict is not None and result.verdict["status"] == "correct", result.verdict
    assert not result.shapes["any_batch"]
    assert result.shapes["why"], result.shapes
    assert "(4, 12)" in result.shapes["served"] and "_DRTRITON_BATCH = None" in result.model_new
    assert "only the example shapes" in result.report_markdown()


def test_the_batch_is_dim_0_of_the_arguments_that_share_the_first_ones() -> None:
    two = (
        MLP.replace("def forward(self, x):", "def forward(self, x, y, z):")
        .replace(
            "return self.down(F.gelu(self.up(x)))", "return self.down(F.gelu(self.up(x + y))) + z"
        )
        .replace("[torch.randn(4, 12)]", "[torch.randn(4, 12), torch.randn(4, 12), torch.randn(8)]")
    )
    frontend = from_module_source(two)
    batch = batch_of(frontend)
    assert batch == Batch([0, 1], 4) and batch.other == 9
    other = from_module_source(resized_task(two, batch, 9))
    assert [i.shape for i in other.inputs if i.kind == "user"] == [[9, 12], [9, 12], [8]]
    # The widest value per batch row is 24 elements (up's output): 2^31 / 24 rows.
    assert max_batch(frontend, other, batch) == (2**31 - 1) // 24


def _wrapped(serving: Serving) -> dict[str, Any]:
    """The drop-in block over a stand-in: 'kernels' that add 1, Model's forward that adds 2."""

    class Model(torch.nn.Module):
        def forward(self, x0: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
            return x0 + x1 + 2

    class ModelNew(Model):
        def forward(self, x0: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
            return x0 + x1 + 1

    namespace: dict[str, Any] = {"torch": torch, "triton": triton, "Model": Model,
                                 "ModelNew": ModelNew}  # fmt: skip
    exec(drop_in_block(serving, ["x0", "x1"]), namespace)  # our own generated text
    namespace["_DRTRITON_INTERPRETED"] = True  # as under TRITON_INTERPRET=1
    return namespace


def test_the_wrapper_serves_one_batch_in_range_for_every_batched_argument() -> None:
    served = Serving(["a", "b"], {0: ((4, 3), "float32"), 1: ((4, 3), "float32")})
    names = _wrapped(served.any_batch([0, 1], 2, 10))
    new = names["ModelNew"]()
    ones = torch.ones(5, 3)
    assert names["_drtriton_fallback"](new, (ones, ones)) is None
    assert new(ones, ones).eq(3).all()  # the kernels
    why = names["_drtriton_fallback"](new, (ones, torch.ones(6, 3)))
    assert why == "the arguments' batch sizes differ ([5, 6])"
    assert "batch 1 is outside 2..10" in names["_drtriton_fallback"](new, (ones[:1], ones[:1]))
    assert "batch 11 is outside" in names["_drtriton_fallback"](new, (ones.repeat(3, 1)[:11],) * 2)
    assert "verified for float32 (B, 3)" in names["_drtriton_fallback"](new, (ones.T, ones.T))
    with pytest.warns(RuntimeWarning, match="batch sizes differ"):
        assert new(ones, torch.ones(1, 3)).eq(4).all()  # Model's forward (it broadcasts)
    assert served.any_batch([0, 1], 2, 10).shapes() == (
        "`a`: float32 (B, 3), `b`: float32 (B, 3); B any batch from 2 to 10"
    )


def test_example_shapes_only_skips_the_generic_kernels() -> None:
    result = optimize_source(MLP, OptimizeConfig(max_ops=3, k=1, any_batch=False))
    assert result.verdict is not None and result.verdict["status"] == "correct", result.verdict
    assert result.shapes == {"served": "`x`: float32 (4, 12)", "any_batch": False, "checks": [],
                             "why": "the example shapes only were asked for"}  # fmt: skip
    assert "_DRTRITON_BATCH = None" in result.model_new

"""Layout operators of real models (views, permutes, slices, cat, pad, flip), eval-mode
dropout and vector norms: each maps into the catalog and the mapped program reproduces the
module (check_equivalence runs both)."""

from __future__ import annotations

import pytest
from test_frontend import assert_maps_and_reproduces, assert_stays_partly_pytorch, module_task

from drtriton import parse
from drtriton.frontend import check_equivalence, from_module_source
from drtriton.teach import emit
from shared_verifier import verify

CASES = {
    # name: (init, forward, inputs, expected catalog operators)
    "view_flatten": (
        "self.fc = nn.Linear(48, 4)\n",
        "return self.fc(torch.relu(x).view(x.size(0), -1))\n",
        "torch.randn(2, 3, 4, 4)",
        ["relu", "reshape", "linear"],
    ),
    "torch_flatten": (
        "",
        "return torch.flatten(torch.tanh(x), 1)\n",
        "torch.randn(2, 3, 4)",
        ["tanh", "reshape"],
    ),
    "unsqueeze_squeeze": (
        "",
        "y = torch.sigmoid(x).unsqueeze(1)\nreturn (y * 2.0).squeeze(1)\n",
        "torch.randn(3, 5)",
        ["sigmoid", "reshape", "mul", "reshape"],
    ),
    "permute_three_dims": (
        "",
        "return torch.relu(x).permute(2, 0, 1).contiguous()\n",
        "torch.randn(2, 3, 4)",
        ["relu", "permute"],
    ),
    "channel_shuffle": (
        "",
        "b, c, h, w = x.size()\n"
        "y = torch.relu(x).view(b, 2, c // 2, h, w).transpose(1, 2).contiguous()\n"
        "return y.view(b, c, h, w)\n",
        "torch.randn(2, 4, 3, 3)",
        ["relu", "reshape", "transpose", "reshape"],
    ),
    "slice_and_select": (
        "",
        "y = torch.exp(x)\nreturn y[:, 1:3] + y[:, 0:1], y[:, -1]\n",
        "torch.randn(4, 5)",
        ["exp", "narrow", "narrow", "add", "select"],
    ),
    "flip": ("", "return torch.flip(torch.abs(x), [0, 2])\n", "torch.randn(2, 3, 4)", None),
    # Nearest upsampling by whole factors: each element repeated, a broadcast between reshapes
    # for each spatial dim that grows.
    "upsample_nearest_2d": (
        "self.up = nn.Upsample(scale_factor=2, mode='nearest')\n",
        "return self.up(torch.relu(x))\n",
        "torch.randn(2, 3, 4, 5)",
        ["relu", *["reshape", "broadcast_to", "reshape"] * 2],
    ),
    # torch.roll (Swin's shifted windows): the last k elements, then the rest, as a cat of
    # two narrows, per dim.
    "roll_two_dims": (
        "",
        "return torch.roll(torch.relu(x), shifts=(1, -2), dims=(1, 2))\n",
        "torch.randn(2, 4, 6)",
        ["relu", *["narrow", "pad", "narrow", "pad", "add"] * 2],
    ),
    # Tiling, a leading repeat adding a dim.
    "repeat_tiles": (
        "",
        "return torch.sigmoid(x).repeat(2, 1, 3)\n",
        "torch.randn(4, 5)",
        ["sigmoid", "reshape", *["reshape", "broadcast_to", "reshape"] * 2],
    ),
    # Adaptive max pooling whose output sizes divide the input's: a max pool with kernel =
    # stride (a global max pool when they are 1).
    "adaptive_max_global": (
        "self.pool = nn.AdaptiveMaxPool2d((1, 1))\n",
        "return torch.flatten(self.pool(torch.relu(x)), 1)\n",
        "torch.randn(2, 3, 4, 6)",
        ["relu", "max_pool2d", "reshape"],
    ),
    "adaptive_max_3d": (
        "",
        "return torch.nn.functional.adaptive_max_pool3d(x, (2, 1, 3)) + 1.0\n",
        "torch.randn(1, 2, 4, 3, 6)",
        ["max_pool3d", "add"],
    ),
    "upsample_nearest_sizes": (
        "",
        "return torch.nn.functional.interpolate(x, size=(6, 5, 8), mode='nearest') * 2.0\n",
        "torch.randn(1, 2, 3, 5, 2)",
        [*["reshape", "broadcast_to", "reshape"] * 2, "mul"],  # depth and width; height is 5
    ),
    "cat_three": (
        "self.a = nn.Conv2d(3, 2, 1)\nself.b = nn.Conv2d(3, 4, 1)\n",
        "return torch.cat([self.a(x), self.b(x), torch.relu(x)], 1)\n",
        "torch.randn(2, 3, 5, 5)",
        ["conv2d", "conv2d", "relu", "pad", "pad", "add", "pad", "add"],
    ),
    "pad": (
        "",
        "return torch.nn.functional.pad(torch.relu(x), (1, 2, 0, 1))\n",
        "torch.randn(2, 3, 4)",
        ["relu", "pad"],
    ),
    "dropout_eval": (
        "self.fc = nn.Linear(8, 8)\nself.drop = nn.Dropout(0.5)\n",
        "return self.drop(torch.relu(self.fc(x)))\n",
        "torch.randn(4, 8)",
        ["linear", "relu"],
    ),
    "frobenius_norm": (
        "",
        "return x / torch.linalg.vector_norm(x, 2, dim=(1, 2), keepdim=True)\n",
        "torch.randn(2, 3, 4)",
        ["mul", "sum", "sum", "sqrt", "div"],
    ),
    # KernelBench level 1, 37: the 0-d norm is held as [1, 1, 1] (it only broadcasts).
    "frobenius_norm_over_all_dims": (
        "",
        "return x / torch.norm(x, p='fro')\n",
        "torch.randn(2, 3, 4)",
        ["mul", "sum", "sum", "sum", "sqrt", "reshape", "div"],
    ),
    # A 0-d total combined with numbers: in the one-element view, then 0-d again (the
    # module returns it 0-d).
    "zero_d_total_and_numbers": (
        "",
        "return x.sum() / 8.0 - 1.0\n",
        "torch.randn(2, 3, 4)",
        ["sum", "sum", "sum", "reshape", "div", "reshape", "reshape", "sub", "reshape"],
    ),
    # A unary operator of a 0-d statistic (an RMS returned as a scalar): in the one-element
    # view, then 0-d again; it was an opaque aten.sqrt call.
    "zero_d_unary": (
        "",
        "return torch.sqrt((x * x).mean()).clamp(max=3.0)\n",
        "torch.randn(2, 3, 4)",
        [
            "mul",
            "mean",
            "mean",
            "mean",
            "reshape",
            "sqrt",
            "reshape",
            "reshape",
            "clamp",
            "reshape",
        ],
    ),
    # KernelBench level 1, 98: kl_div's 'batchmean' is the 0-d total / the batch size.
    "kl_div_batchmean": (
        "",
        "p = torch.softmax(x, -1)\nq = torch.softmax(x * 2.0, -1)\n"
        "return torch.nn.functional.kl_div(torch.log(p), q, reduction='batchmean')\n",
        "torch.randn(4, 6)",
        None,
    ),
    "l1_norm_over_rows": (
        "",
        "return x / torch.linalg.vector_norm(x, 1, dim=1, keepdim=True)\n",
        "torch.randn(3, 6)",
        ["abs", "sum", "div"],
    ),
    "triu_of_matmul": (
        "",
        "return torch.triu(torch.matmul(x, x))\n",
        "torch.randn(4, 4)",
        ["matmul", "triu"],
    ),
    "normalize": (
        "",
        "return torch.nn.functional.normalize(x, dim=1)\n",
        "torch.randn(3, 5)",
        None,
    ),
    "expand_a_token": (
        "self.token = nn.Parameter(torch.randn(1, 1, 4))\n",
        "return torch.cat([self.token.expand(x.size(0), -1, -1), x], 1)\n",
        "torch.randn(2, 3, 4)",
        ["broadcast_to", "pad", "pad", "add"],
    ),
    "exclusive_cumsum": (
        "",
        "c = torch.cumsum(x.narrow(1, 0, x.size(1) - 1), dim=1)\n"
        "return torch.cat((torch.zeros_like(x.select(1, 0).unsqueeze(1)), c), dim=1)\n",
        "torch.randn(3, 5)",
        ["narrow", "cumsum", "pad"],
    ),
    # torch.split, chunk and unbind: each element read is a narrow (or select) of the input.
    "split_with_sizes": (
        "",
        "a, b = torch.split(torch.relu(x), [2, 3], dim=1)\nreturn a * 2.0, b + 1.0\n",
        "torch.randn(4, 5)",
        ["relu", "narrow", "narrow", "mul", "add"],
    ),
    "chunk_gate": (
        "self.fc = nn.Linear(6, 8)\n",
        "a, g = self.fc(x).chunk(2, dim=-1)\nreturn a * torch.sigmoid(g)\n",
        "torch.randn(3, 6)",
        ["linear", "narrow", "narrow", "sigmoid", "mul"],
    ),
    "split_one_element_read": (
        "",
        "head, tail = x.split(3, dim=1)\nreturn torch.tanh(tail)\n",
        "torch.randn(2, 5)",
        ["narrow", "tanh"],
    ),
    "unbind": (
        "",
        "u, v, w = torch.exp(x).unbind(0)\nreturn u + v * w\n",
        "torch.randn(3, 4)",
        None,
    ),
    "one_minus": (
        "",
        "return torch.clamp(1 - x, min=0).mean()\n",
        "torch.randn(3, 5)",
        ["sub", "clamp", "mean", "mean"],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_layout_operator_maps_and_reproduces_the_module(name):
    init, forward, inputs, ops = CASES[name]
    assert_maps_and_reproduces(module_task(init, forward, inputs), ops)


def test_nearest_upsampling_by_a_fraction_stays_a_pytorch_call():
    # 4 -> 6: element i reads input floor(i * 4 / 6), not a whole repeat.
    assert_stays_partly_pytorch(
        module_task(
            "",
            "return torch.nn.functional.interpolate(x, size=6, mode='nearest')\n",
            "torch.randn(2, 3, 4)",
        )
    )


def test_adaptive_max_pooling_of_overlapping_cells_stays_a_pytorch_call():
    # 5 -> 2: cells [0, 3) and [2, 5) overlap, no max pool's window.
    assert_stays_partly_pytorch(
        module_task(
            "", "return torch.nn.functional.adaptive_max_pool2d(x, 2)\n", "torch.randn(1, 2, 5, 4)"
        )
    )


# The layout operators added for roll, repeat and nearest upsampling, run by the teacher.
VERIFIED = {
    "roll_repeat": ("return torch.roll(x, 3, 1).repeat(1, 2) * 2.0\n", "torch.randn(3, 7)"),
    "nearest_upsampling": (
        "return torch.nn.functional.interpolate(torch.tanh(x), scale_factor=(2, 3), "
        "mode='nearest')\n",
        "torch.randn(2, 3, 4, 5)",
    ),
    # Edge padding: each padded dim a cat of the flipped (reflect) or broadcast (replicate)
    # border elements, the tensor and the other border's.
    "reflect_replicate_pad": (
        "y = torch.nn.functional.pad(x, (2, 1, 0, 3), mode='reflect')\n"
        "return torch.nn.functional.pad(torch.relu(y), (1, 0, 2, 2), mode='replicate')\n",
        "torch.randn(2, 3, 4, 5)",
    ),
    "edge_pad_1d_3d": (
        "a = torch.nn.ReflectionPad1d((3, 1))(x.reshape(6, 4, 5))\n"
        "b = torch.nn.ReplicationPad3d((1, 2, 0, 1, 1, 0))(x)\n"
        "return a * 2.0, b\n",
        "torch.randn(2, 3, 4, 5)",
    ),
}


@pytest.mark.parametrize("name", sorted(VERIFIED))
def test_grown_and_rolled_dims_verify_in_the_interpreter(name):
    text = from_module_source(module_task("", *VERIFIED[name])).program_text
    verdict = verify(text, emit(text), device="cpu", input_seed=0)
    assert verdict.correct, verdict.reason


def test_a_copy_of_an_input_returned_stays_a_pytorch_call():
    """A program must compute its results: x.clone() returned as is keeps its line."""
    code = module_task("", "return x.clone()\n", "torch.randn(2, 3)")
    result = from_module_source(code)
    assert len(result.lines) == 1 and result.lines[0].opaque
    assert check_equivalence(code, result).ok


def test_a_slice_with_a_step_maps_to_layout_operators():
    """Every second column: split the dim into (3, 2) and select the first (test_windows.py
    has the ragged and offset forms)."""
    code = module_task("", "return torch.relu(x)[:, ::2]\n", "torch.randn(2, 6)")
    assert_maps_and_reproduces(code, ["relu", "reshape", "select"])


def test_a_split_of_an_integer_tensor_stays_a_pytorch_call():
    code = module_task("", "a, b = x.int().split(3, dim=1)\nreturn a.float() + 1.0\n",
                       "torch.randn(2, 5)")  # fmt: skip
    result = assert_stays_partly_pytorch(code)
    assert any("torch.narrow(" in line.call for line in result.lines if line.opaque)


def test_a_norm_over_all_dims_verifies_in_the_interpreter():
    init, forward, inputs, _ = CASES["frobenius_norm_over_all_dims"]
    text = from_module_source(module_task(init, forward, inputs)).program_text
    assert parse(text).shapes[parse(text).outputs[0]] == [2, 3, 4]
    verdict = verify(text, emit(text), device="cpu", input_seed=0)
    assert verdict.correct, verdict.reason


@pytest.mark.parametrize("name", ["zero_d_total_and_numbers", "kl_div_batchmean"])
def test_a_0d_total_with_numbers_verifies_in_the_interpreter(name):
    init, forward, inputs, _ = CASES[name]
    text = from_module_source(module_task(init, forward, inputs)).program_text
    assert parse(text).shapes[parse(text).outputs[0]] == []
    verdict = verify(text, emit(text), device="cpu", input_seed=0)
    assert verdict.correct, verdict.reason


@pytest.mark.parametrize(
    "forward",
    [
        "return torch.norm(x, p='fro')\n",  # returned 0-d, as PyTorch returns it
        "return torch.norm(x, p='fro') * x[0, 0]\n",  # times a rank-1 partner: its shape
    ],
)
def test_a_0d_norm_is_reshaped_to_0d_and_verifies(forward):
    code = module_task("", forward, "torch.randn(2, 3, 4)")
    assert_maps_and_reproduces(code)
    text = from_module_source(code).program_text
    verdict = verify(text, emit(text), device="cpu", input_seed=0)
    assert verdict.correct, verdict.reason


def test_a_conv_with_reflect_padding_maps_whole():
    code = module_task(
        "self.conv = nn.Conv2d(3, 4, 3, padding=1, padding_mode='reflect')\n",
        "return self.conv(x)\n",
        "torch.randn(2, 3, 6, 6)",
    )
    assert_maps_and_reproduces(code)


def test_edge_padding_past_a_border_or_cropping_stays_a_pytorch_call():
    """A reflection as long as the dim is torch's own error; a negative pad crops."""
    code = module_task(
        "", "return torch.nn.functional.pad(x, (-1, 2), mode='replicate')\n", "torch.randn(2, 3)"
    )
    assert_stays_partly_pytorch(code)

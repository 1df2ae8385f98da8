"""The C++ operator catalog against PyTorch itself.

For every compute operator, the one-operator program built from the catalog example runs
under torch on the CPU; the IR's inferred shape and dtype must be torch's, FLOPs of
contractions and convolutions must be what torch.utils.flop_counter.FlopCounterMode counts,
and the other FLOPs must follow docs/flops.md. A randomized test then perturbs each example
(shapes and attributes, inside and outside the synthesizer's domains) and checks that
whatever the IR accepts, torch accepts with the same output shape and the same FLOPs, and
that the IR rejects what torch accepts only where it is deliberately stricter.
"""

from __future__ import annotations

import math
import random
import re

import pytest

torch = pytest.importorskip("torch")
_core = pytest.importorskip("drtriton._core")

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

import drtriton  # noqa: E402

OPS = {op["name"]: op for op in _core.ops()}
COMPUTE = sorted(name for name, op in OPS.items() if op["kind"] == "compute")
# Operators with a bool tensor parameter (where's condition): no program input is bool, so
# they have no one-operator program; test_where_matches_torch builds the condition instead.
BOOL_INPUT = {n for n in COMPUTE if any(p.get("boolean") for p in OPS[n]["params"])}
FLOAT_INPUT = sorted(set(COMPUTE) - BOOL_INPUT)

# docs/flops.md, written out again here so that a change to a catalog factor must be a
# change to the document too.
DOC_FLOPS_PER_ELEMENT = {
    **dict.fromkeys(
        "add sub mul div maximum minimum pow exp log abs sqrt neg relu tanh".split(), 1
    ),
    **dict.fromkeys("reciprocal sin cos erf log2 exp2 floor ceil trunc round".split(), 1),
    **dict.fromkeys("rsqrt sign log1p expm1".split(), 2),
    **dict.fromkeys("eq ne lt le gt ge logical_not where".split(), 1),
    **dict.fromkeys("clamp hardtanh leaky_relu".split(), 2),
    "sigmoid": 3,
    **dict.fromkeys("elu hardsigmoid silu".split(), 4),
    **dict.fromkeys("selu hardswish mish gelu".split(), 5),
    "softplus": 6,
    **dict.fromkeys("sum mean amax amin prod argmax argmin cumsum cumprod".split(), 1),
    "logsumexp": 4,
    "softmax": 5,
    "log_softmax": 5,
    "nll_loss": 2,  # per target element
    "batch_norm": 4,
    **dict.fromkeys("layer_norm group_norm instance_norm batch_norm_train".split(), 8),
    **dict.fromkeys(
        "transpose reshape permute narrow select flip pad triu tril broadcast_to embedding".split(),
        0,
    ),
    **{
        f"{stem}{n}d": 1
        for stem in ("max_pool", "avg_pool", "adaptive_avg_pool")
        for n in (1, 2, 3)
    },
    **{f"{stem}{n}d": 2 for stem in ("conv", "conv_transpose") for n in (1, 2, 3)},
    **dict.fromkeys("matmul bmm linear".split(), 2),
}

COUNTED_BY_TORCH = {"contraction", "conv", "conv_transpose"}


def _run(text: str, seed: int = 0):
    """Executes a functional task's text; returns (inputs, fused_operator)."""
    namespace: dict = {}
    exec(compile(text, "<program>", "exec"), namespace)
    torch.manual_seed(seed)
    return namespace["get_inputs"](), namespace["fused_operator"]


def _per_dim(value, n: int) -> list[int]:
    if isinstance(value, int):
        return [value] * n
    return list(value) * n if len(value) == 1 else list(value)


def _adaptive_taps(length: int, size: int) -> int:
    """Sum of adaptive window lengths: [floor(i L / O), ceil((i + 1) L / O))."""
    return sum(-(-(i + 1) * length // size) - (i * length // size) for i in range(size))


def _doc_flops(op: dict, attrs: list, inputs: list, out) -> float:
    """FLOPs by docs/flops.md, computed from torch's tensors (not from the IR)."""
    factor = DOC_FLOPS_PER_ELEMENT[op["name"]]
    traits, n = set(op["traits"]), op["spatial_dims"]
    if op["rule"] == "adaptive_pool":
        lead = out.numel() // math.prod(out.shape[-n:])
        return (
            factor
            * lead
            * math.prod(
                _adaptive_taps(inputs[0].shape[-n + d], out.shape[-n + d]) for d in range(n)
            )
        )
    if op["rule"] == "pool":
        return factor * math.prod(_per_dim(attrs[0], n)) * out.numel()
    if traits & {"reduction", "scan", "normalization"} or op["rule"] == "same_as_input":
        return factor * inputs[0].numel()
    if "gather" in traits:  # one picked element per index
        return factor * inputs[1].numel()
    return factor * out.numel()


def test_catalog_size_and_doc_table():
    assert len(OPS) >= 61
    assert set(DOC_FLOPS_PER_ELEMENT) == set(COMPUTE), "docs/flops.md table out of date"
    for name in COMPUTE:
        assert OPS[name]["flops_per_element"] == DOC_FLOPS_PER_ELEMENT[name], name


def test_names_resolve_in_torch():
    """Every torch callable, spelling and alias names a real callable in this torch."""
    scope = {"torch": torch, "F": torch.nn.functional}
    for op in OPS.values():
        for spelling in (op["torch"], op["spelling"], *op["aliases"]):
            head, *rest = spelling.split(".")
            obj = scope[head]
            for part in rest:
                obj = getattr(obj, part)
            assert callable(obj), spelling


@pytest.mark.parametrize("name", FLOAT_INPUT)
def test_example_matches_torch(name):
    op = OPS[name]
    text = drtriton.example_program(name)
    program = drtriton.parse(text)
    assert program.ops == [name]
    inputs, fn = _run(text)
    with FlopCounterMode(display=False) as counter:
        out = fn(*inputs)
    result = program.outputs[0]
    assert list(out.shape) == program.shapes[result], text
    assert str(out.dtype).removeprefix("torch.") == program.dtypes[result]
    if out.is_floating_point():
        assert torch.isfinite(out).all(), f"{name}: non-finite output on its example"
    if set(op["traits"]) & COUNTED_BY_TORCH:
        assert program.flops == counter.get_total_flops(), text
    else:
        attrs = program.nodes[0]["attrs"]
        assert program.flops == pytest.approx(_doc_flops(op, attrs, inputs, out)), text
    # One operator alone: its traffic is its inputs and its output (int64: 8 bytes).
    in_bytes = sum(t.numel() * t.element_size() for t in inputs)
    assert program.bytes == in_bytes + out.numel() * out.element_size()


@pytest.mark.parametrize(
    ("name", "alias"),
    [
        (name, alias)
        for name in FLOAT_INPUT
        for alias in (OPS[name]["torch"], *OPS[name]["aliases"])
    ],
)
def test_aliases_are_the_same_operator(name, alias):
    """A program spelled with an alias parses to the same operator and computes the same
    values under torch (the alias takes the same positional arguments)."""
    text = drtriton.example_program(name)
    call = f" = {OPS[name]['spelling']}("
    assert call in text
    aliased = text.replace(call, f" = {alias}(")
    program = drtriton.parse(aliased)
    assert program.ops == [name]
    assert program.shapes == drtriton.parse(text).shapes
    inputs, fn = _run(text)
    aliased_inputs, aliased_fn = _run(aliased)
    torch.testing.assert_close(aliased_fn(*aliased_inputs), fn(*inputs))


def test_bool_inputs_are_where_and_logical_not_alone():
    assert BOOL_INPUT == {"where", "logical_not"}
    for name in sorted(BOOL_INPUT):
        with pytest.raises(drtriton.ProgramError, match="bool"):
            drtriton.example_program(name)


def test_logical_not_matches_torch():
    """logical_not reads a comparison's bool result and gives a bool one (1 byte each)."""
    text = (
        "import torch\n\ndef fused_operator(x0, x1):\n"
        "    t0 = torch.gt(x0, x1)\n    t1 = torch.logical_not(t0)\n    return t1\n\n"
        "def get_inputs():\n    return [torch.randn(3, 4), torch.randn(4)]\n"
    )
    program = drtriton.parse(text)
    assert program.ops == ["gt", "logical_not"]
    inputs, fn = _run(text)
    out = fn(*inputs)
    assert out.dtype == torch.bool and program.dtypes["t1"] == "bool"
    torch.testing.assert_close(out, ~(inputs[0] > inputs[1]))
    assert program.flops == 2 * out.numel()
    with pytest.raises(drtriton.ProgramError, match="bool"):
        drtriton.parse(text.replace("torch.logical_not(t0)", "torch.logical_not(x0)"))


def test_where_matches_torch():
    """where reads a comparison's bool result: shapes, dtypes, FLOPs and bytes against torch
    (the condition broadcasts against both branches)."""
    text = (
        "import torch\n\ndef fused_operator(x0, x1, x2, x3):\n"
        "    t0 = torch.gt(x0, x1)\n    t1 = torch.where(t0, x2, x3)\n    return t0, t1\n\n"
        "def get_inputs():\n    return [torch.randn(3, 1), torch.randn(1), torch.randn(2, 3, 4),"
        " torch.randn(4)]\n"
    )
    program = drtriton.parse(text)
    assert program.ops == ["gt", "where"]
    inputs, fn = _run(text)
    mask, out = fn(*inputs)
    assert program.dtypes == {**program.dtypes, "t0": "bool", "t1": "float32"}
    assert [list(mask.shape), list(out.shape)] == [program.shapes["t0"], program.shapes["t1"]]
    assert program.flops == mask.numel() + out.numel()
    # Fused: the four float inputs once, the bool mask (1 byte) and the float result out.
    assert program.bytes == sum(t.numel() * 4 for t in inputs) + mask.numel() + out.numel() * 4
    bad = text.replace("torch.where(t0, x2, x3)", "torch.where(x2, t0, x3)")
    with pytest.raises(drtriton.ProgramError, match="bool"):
        drtriton.parse(bad)


# --- Randomized agreement with torch. ----------------------------------------------------


def _program_text(op: dict, shapes: list, attrs: list) -> str:
    """A one-operator task in the DESIGN.md format, with every argument spelled out."""
    names, args, creates = [], [], []
    first = shapes[0] or []
    shapes = iter(shapes)
    attrs = iter(attrs)
    for param in op["params"]:
        if param["kind"] == "attr":
            value = next(attrs)
            text = repr(value)
            args.append(f"{param['name']}={text}" if param.get("keyword_only") else text)
            continue
        shape = next(shapes)
        if shape is None:
            args.append("None")
            continue
        name = f"x{len(names)}"
        names.append(name)
        args.append(name)
        if param["index_dim"] >= 0:  # class indices within the dim they index (or 1)
            high = first[param["index_dim"]] if param["index_dim"] < len(first) else 1
            creates.append(f"torch.randint(0, {high}, ({''.join(f'{d}, ' for d in shape)}))")
            continue
        create = "torch.rand" if param.get("positive") else "torch.randn"
        creates.append(f"{create}({', '.join(map(str, shape))})")
    return (
        "import torch\nimport torch.nn.functional as F\n\n"
        f"def fused_operator({', '.join(names)}):\n"
        f"    t0 = {op['spelling']}({', '.join(args)})\n"
        "    return t0\n\n"
        "def get_inputs():\n"
        f"    return [{', '.join(creates)}]\n"
    )


def _mutate_shape(rng: random.Random, shape: list[int]) -> list[int]:
    """One dim redrawn, or a leading dim dropped or added (unbatched inputs, broadcast)."""
    roll = rng.random()
    if roll < 0.15 and len(shape) > 1:
        return shape[1:]
    if roll < 0.3:
        return [rng.randint(1, 3), *shape]
    k = rng.randrange(len(shape))
    return [*shape[:k], rng.randint(1, 6), *shape[k + 1 :]]


def _mutate_attr(rng: random.Random, param: dict, value, rank: int, spatial_dims: int = 1):
    """A value from the domain, or one just outside it, of the right Python type."""
    domain, kind = param["domain"], param["type"]
    if param["int_or_list"] and rng.random() < 0.3:  # a per-dim list, e.g. stride=[1, 2]
        element = {**param, "int_or_list": False}
        element["choices"] = [c for c in param["choices"] if c is not None]
        length = rng.choice([1, spatial_dims])  # one entry: repeated, or rejected
        return [_mutate_attr(rng, element, 1, rank) for _ in range(length)]
    if domain == "choices" and param["choices"] and rng.random() < 0.7:
        return rng.choice(param["choices"])
    if domain == "range":
        return rng.randint(param["min"] - 1, param["max"] + 2)
    if domain == "dim":
        return rng.randint(-rank - 1, rank)
    if kind == "int":
        return rng.randint(0, 4)
    if kind == "bool":
        return rng.random() < 0.5
    return value


def _perturb(rng: random.Random, op: dict) -> tuple[list, list]:
    """The example with one to three changes: a tensor's shape, None, or an attribute."""
    shapes = [list(s) for s in op["example"]["inputs"]]
    attrs = list(op["example"]["attrs"])
    attr_params = [p for p in op["params"] if p["kind"] == "attr"]
    tensor_params = [p for p in op["params"] if p["kind"] != "attr"]
    for _ in range(rng.randint(1, 3)):
        if attrs and rng.random() < 0.5:
            k = rng.randrange(len(attrs))
            rank = len(shapes[0]) if shapes[0] is not None else 0
            attrs[k] = _mutate_attr(rng, attr_params[k], attrs[k], rank, op["spatial_dims"])
            continue
        k = rng.randrange(len(shapes))
        if tensor_params[k]["kind"] == "optional_tensor" and rng.random() < 0.3:
            shapes[k] = None
        elif shapes[k] is not None:
            shapes[k] = _mutate_shape(rng, shapes[k])
    return shapes, attrs


# Where the IR is deliberately stricter than PyTorch: no empty outputs (output_size 0, a
# transposed conv padded to nothing, a narrow of length 0) and no 0-d ones, inference-mode
# batch_norm, bias and per-channel tensors of exactly (C,) rather than anything that
# broadcasts, the catalog's rank bounds, no negative (cropping) pads.
_DELIBERATELY_STRICTER = re.compile(
    r"output_size|too small|training|(bias|weight|running_\w+) must have shape|rank|empty|0-d"
    r"|must be >= 0"
)


@pytest.mark.parametrize("name", FLOAT_INPUT)
def test_random_arguments_agree_with_torch(name):
    op = OPS[name]
    rng = random.Random(name)
    accepted = 0
    for _ in range(60):
        shapes, attrs = _perturb(rng, op)
        text = _program_text(op, shapes, attrs)
        try:
            program, rejection = drtriton.parse(text), None
        except drtriton.ProgramError as exc:
            program, rejection = None, str(exc)
        inputs, fn = _run(text)
        try:
            with FlopCounterMode(display=False) as counter:
                out = fn(*inputs)
        except Exception as exc:
            # Whatever the IR accepts, torch must accept (the synthesizer relies on it).
            assert program is None, f"IR accepted, torch raised {exc!r}:\n{text}"
            continue
        if program is None:
            assert _DELIBERATELY_STRICTER.search(rejection), f"{rejection}\n{text}"
            continue
        accepted += 1
        assert list(out.shape) == program.shapes[program.outputs[0]], text
        if set(op["traits"]) & COUNTED_BY_TORCH:
            assert program.flops == counter.get_total_flops(), text
        else:
            expected = _doc_flops(op, program.nodes[0]["attrs"], inputs, out)
            assert program.flops == pytest.approx(expected), text
    assert accepted > 0, f"{name}: no perturbed example was accepted"

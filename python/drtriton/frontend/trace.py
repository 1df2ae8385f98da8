"""Entry points: a KernelBench module source or a functional task → FrontendResult."""

from __future__ import annotations

import torch
from torch.export.graph_signature import InputKind

from drtriton import _core, catalog
from drtriton.errors import UserError
from drtriton.frontend.export import LoadedTask, export_model, load_module_task
from drtriton.frontend.lower import (
    Input,
    Line,
    Lowering,
    Tensor,
    make_input,
    render_task,
    user_positions,
)
from drtriton.frontend.result import FrontendResult
from drtriton.frontend.scalars import Binding, bound, find_bindings, float_positions, shifted


def _float_bindings(task: LoadedTask, exported: torch.export.ExportedProgram) -> Binding:
    """Where the graph uses forward's float arguments (scalars.py), from a second export."""
    if not float_positions(task.inputs):
        return {}
    try:
        second = export_model(LoadedTask(task.model, shifted(task.inputs), task.namespace))
    except Exception:  # the model cannot take other values: every argument stays baked in
        return {}
    kinds = {s.arg.name: s.kind for s in exported.graph_signature.input_specs}
    users = [
        n
        for n in exported.graph.nodes
        if n.op == "placeholder" and kinds[n.name] == InputKind.USER_INPUT
    ]
    placeholders = dict(zip(user_positions(task.inputs, len(users)), users, strict=True))
    return find_bindings(exported, second, task.inputs, placeholders)


def _lower(
    task: LoadedTask, exported: torch.export.ExportedProgram, batch_statistics: bool = True
) -> Lowering:
    """The lowering with float arguments read at run time where every use of them maps to a
    catalog operand; else (an opaque line would get a [1] tensor for a Python number) the
    lowering of the graph as export specialized it."""
    binding = _float_bindings(task, exported)
    if binding:
        with bound(binding):
            lowering = Lowering(exported, task.inputs, batch_statistics).run()
        scalars = {i.name for i in lowering.inputs if i.kind == "scalar"}
        if not any(line.opaque and scalars & set(line.operands) for line in lowering.lines):
            return lowering
    return Lowering(exported, task.inputs, batch_statistics).run()


def from_module_source(
    code: str,
    seed: int = 0,
    training: bool = False,
    fake_inputs: bool = False,
    batch_statistics: bool = True,
) -> FrontendResult:
    """Exports `Model(*get_init_inputs())` on `get_inputs()` and lowers the graph: in eval mode,
    or in training mode when `training` (batch norm then uses batch statistics: the catalog's
    batch_norm_train, or with `batch_statistics` False an opaque PyTorch call; its
    running-statistics updates are not part of the program).  With `fake_inputs` the inputs
    are fake tensors of get_inputs()'s shapes (export.py's load_module_task): the mapping is
    the same, the model never runs on them."""
    task = load_module_task(code, seed, training, fake_inputs=fake_inputs)
    exported = export_model(task)
    lowering = _lower(task, exported, batch_statistics)
    makes = [make_input(i.shape, i.positive, i.high, i.dtype == "bool") for i in lowering.inputs]
    source = render_task([i.name for i in lowering.inputs], lowering.lines, lowering.outputs, makes)
    program_text = None
    # A program's inputs are float32, int64 class indices that catalog lines index with, or
    # bool masks (torch.where's condition).
    if all(not line.opaque for line in lowering.lines) and all(
        i.dtype in ("float32", "bool") or (i.dtype == "int64" and i.high is not None)
        for i in lowering.inputs
    ):
        ok, program, _ = _core.parse(source)
        program_text = program["source"] if ok else None
    return FrontendResult(
        lowering.inputs,
        lowering.lines,
        lowering.outputs,
        lowering.tensors,
        source,
        program_text,
        exported,
        {**(getattr(exported, "constants", {}) or {}), **lowering.scalars},
        lowering.signature,
        lowering.specialized,
        lowering.index_bounds,
    )


def from_functional_source(text: str) -> FrontendResult:
    """A functional task (fused_operator / get_inputs) read by the IR's parser."""
    ok, program, line = _core.parse(text)
    if not ok:
        raise UserError(f"line {line}: {program}" if line else str(program))
    shapes, dtypes = program["shapes"], program["dtypes"]
    tensors = {n: Tensor(n, shapes[n], dtypes[n]) for n in shapes}
    inputs = [Input(n, shapes[n], dtypes[n]) for n in program["inputs"]]
    body = program["source"].split("def fused_operator")[1].split("\n")[1:]
    calls = {
        raw.strip().split(" = ", 1)[0]: raw.strip().split(" = ", 1)[1]
        for raw in body
        if " = " in raw
    }
    lines = [
        Line(n["result"], calls[n["result"]], n["op"], [x for x in n["inputs"] if x is not None])
        for n in program["nodes"]
    ]
    return FrontendResult(
        inputs,
        lines,
        program["outputs"],
        tensors,
        program["source"],
        program["source"],
        index_bounds=_index_bounds(program["nodes"], shapes),
    )


def _index_bounds(nodes: list[dict], shapes: dict[str, list[int]]) -> dict[str, int]:
    """The dim size each value read as indices indexes (class targets, embedding rows; the
    smallest, if several)."""
    bounds: dict[str, int] = {}
    for node in nodes:
        tensor_params = [p for p in catalog.op(node["op"])["params"] if p["kind"] != "attr"]
        for param, name in zip(tensor_params, node["inputs"], strict=False):
            if name is None or param["index_dim"] < 0:
                continue
            size = shapes[node["inputs"][param["index_of"]]][param["index_dim"]]
            bounds[name] = min(size, bounds.get(name, size))
    return bounds

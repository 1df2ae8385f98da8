"""Entry points: a KernelBench module source or a functional task → FrontendResult."""

from __future__ import annotations

from drtriton import _core
from drtriton.errors import UserError
from drtriton.frontend.export import export_model, load_module_task
from drtriton.frontend.lower import Input, Line, Lowering, Tensor, _shape_args, render_task
from drtriton.frontend.result import FrontendResult


def from_module_source(code: str, seed: int = 0, training: bool = False) -> FrontendResult:
    """Exports `Model(*get_init_inputs())` on `get_inputs()` and lowers the graph: in eval mode,
    or in training mode when `training` (batch norm then uses batch statistics and stays an
    opaque PyTorch call; its running-statistics updates are not part of the program)."""
    exported = export_model(load_module_task(code, seed, training))
    lowering = Lowering(exported).run()
    makes = [
        ("torch.rand" if i.positive else "torch.randn") + _shape_args(i.shape)
        for i in lowering.inputs
    ]
    source = render_task([i.name for i in lowering.inputs], lowering.lines, lowering.outputs, makes)
    program_text = None
    if all(not line.opaque for line in lowering.lines) and all(
        i.dtype == "float32" for i in lowering.inputs
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
        inputs, lines, program["outputs"], tensors, program["source"], program["source"]
    )

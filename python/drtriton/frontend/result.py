"""FrontendResult: the frontend's output and how the search reads it.

`source` is always runnable: a functional task whose `fused_operator` takes the user inputs
then the parameters and buffers, with one line per operator: catalog lines in the DESIGN.md
spelling, opaque lines as `torch.ops.aten...` calls.  When every line maps, `program_text` is
that task as the IR prints it (drtriton.parse reads it); otherwise it is None and `runs()`
splits the program into maximal runs of catalog lines (each a task of its own, its external
values as inputs) and the opaque lines between them, which stay in PyTorch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from drtriton import _core
from drtriton.frontend.lower import Input, Line, Tensor, make_input, render_task


@dataclass
class Run:
    """Consecutive lines: a catalog run (`task` is its functional task) or one opaque line."""

    lines: list[Line]
    inputs: list[str]
    outputs: list[str]
    task: str | None = None  # None for an opaque line or a run the IR cannot express alone


@dataclass
class FrontendResult:
    inputs: list[Input]
    lines: list[Line]
    outputs: list[str]
    tensors: dict[str, Tensor]
    source: str
    program_text: str | None
    exported: Any = field(default=None, repr=False)  # torch.export.ExportedProgram, if any
    # Values of "constant" inputs by target: tensors export lifted out of forward, and the
    # frontend's own one-element tensors for Python numbers (lower.py, Lowering._scalar).
    constants: dict[str, Any] = field(default_factory=dict, repr=False)
    # forward's positional arguments by name (x<position>), Python numbers included; empty for
    # a functional task (its inputs are the signature).
    signature: list[str] = field(default_factory=list)
    # Python-number (or None) arguments baked into the graph by torch.export, by name: the
    # program is valid for these values only.  A float read at run time is an input of kind
    # "scalar" instead.
    specialized: dict[str, Any] = field(default_factory=dict)
    # int64 values that catalog lines read as class indices, by name: the size of the dim they
    # index (a run's task draws them with torch.randint(0, size)).
    index_bounds: dict[str, int] = field(default_factory=dict)

    @property
    def fully_mapped(self) -> bool:
        return self.program_text is not None

    @property
    def opaque_calls(self) -> list[str]:
        return [line.call.split("(")[0] for line in self.lines if line.opaque]

    def runs(self) -> list[Run]:
        runs: list[Run] = []
        for line in self.lines:
            if not line.opaque and runs and runs[-1].lines[-1].op is not None:
                runs[-1].lines.append(line)
            else:
                runs.append(Run([line], [], []))
        for k, run in enumerate(runs):
            later = {n for r in runs[k + 1 :] for line in r.lines for n in line.operands}
            self._close(run, later | set(self.outputs))
        return runs

    def _close(self, run: Run, read_later: set[str]) -> None:
        defined = {line.result for line in run.lines}
        run.inputs = list(
            dict.fromkeys(n for line in run.lines for n in line.operands if n not in defined)
        )
        run.outputs = [line.result for line in run.lines if line.result in read_later]
        if run.lines[0].opaque or not run.outputs:
            return
        # A task's inputs are float32, int64 class indices (drawn within the dim they index), or
        # bool masks passed to forward; a mask computed by an opaque line is one too.
        indices = {n for n in run.inputs if self.tensors[n].dtype == "int64"}
        masks = {n for n in run.inputs if self.tensors[n].dtype == "bool"}
        if any(self.tensors[n].dtype != "float32" for n in set(run.inputs) - indices - masks):
            return
        if any(n not in self.index_bounds for n in indices):
            return
        positive = {i.name for i in self.inputs if i.positive}
        makes = [
            make_input(self.tensors[n].shape, n in positive, self.index_bounds.get(n), n in masks)
            for n in run.inputs
        ]
        ok, program, _ = _core.parse(render_task(run.inputs, run.lines, run.outputs, makes))
        run.task = program["source"] if ok else None

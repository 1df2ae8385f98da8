"""Exported ATen graph → functional program with opaque PyTorch nodes (the frontend's IR).

Every graph node becomes one line `name = call` of `fused_operator`: a catalog operator in
the DESIGN.md spelling where aten.py maps it and the catalog's shape rules accept it, else an
opaque `torch.ops.aten.<op>(...)` call that the search leaves in PyTorch.  Parameters and
buffers become inputs after the user inputs, in the exported signature's order (the module's
parameter order, then its buffers); parameters and buffers the forward never reads
(num_batches_tracked) are dropped.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from torch.export.graph_signature import InputKind, OutputKind

from drtriton import _core, catalog
from drtriton.errors import UserError
from drtriton.frontend.aten import (
    SPLIT_VIEWS,
    TUPLE_RESULT,
    Ref,
    Step,
    split_parts,
    to_catalog,
)
from drtriton.frontend.public import public_call


@dataclass
class Tensor:
    name: str
    shape: list[int]
    dtype: str  # "float32", "int64", ...


# Module-attribute target of the one-element constant that holds a Python number of the graph
# (`x * 0.5`): a runtime scalar of the kernels, which ModelNew creates in the inputs' dtype.
SCALAR_TARGET = "drtriton_scalar_"

# Line.reason of batch norm with batch statistics left opaque (Lowering's batch_statistics off).
BATCH_STATISTICS = "batch statistics stay a PyTorch call"


@dataclass
class Input(Tensor):
    # "user" | "parameter" | "buffer" | "constant" (a plain tensor attribute) | "scalar" (a
    # Python float argument of forward that the graph reads at run time, as a [1] float32 tensor)
    kind: str = "user"
    target: str | None = None  # module attribute path; a scalar's forward argument (x1)
    positive: bool = False  # a catalog use needs positive values (running_var): torch.rand
    # A 0-d parameter or buffer (nn.Parameter(torch.tensor(c))) passed as its one-element view:
    # the IR has no 0-d tensors, and for an elementwise operand of rank >= 1 [1] broadcasts alike.
    as_one_element: bool = False
    # int64 class indices (nll_loss's target): the size of the dim they index, so the
    # program draws them with torch.randint(0, high); None where no catalog use indexes.
    high: int | None = None


@dataclass
class Line:
    result: str
    call: str  # right-hand side, runnable with `torch` and `F` in scope
    op: str | None  # catalog name; None for an opaque PyTorch call
    operands: list[str] = field(default_factory=list)
    # An opaque call in public PyTorch (no torch.ops, no private names: what a generated
    # ModelNew may contain); None where public.py knows no spelling.  Catalog lines: `call`.
    public: str | None = None
    # Why an opaque line stays a PyTorch call where the frontend declined a catalog mapping it
    # has (BATCH_STATISTICS); None: no catalog operator takes the call.
    reason: str | None = None

    @property
    def opaque(self) -> bool:
        return self.op is None


def _dtype(value: Any) -> str:
    return str(value.dtype).removeprefix("torch.")


def _literal(value: Any, names: dict[torch.fx.Node, str], device: str | None = None) -> str:
    """Python source for a graph argument.  `device` spells a torch.device argument: export
    traces on the CPU, so a factory call (arange, scalar_tensor, ...) carries device='cpu'
    where the model means "wherever it runs"; the caller passes an input's `.device`."""
    if isinstance(value, torch.fx.Node):
        return names[value]
    if isinstance(value, list | tuple):
        inner = ", ".join(_literal(v, names, device) for v in value)
        return (
            f"[{inner}]"
            if isinstance(value, list)
            else f"({inner}{',' if len(value) == 1 else ''})"
        )
    if isinstance(value, torch.dtype | torch.memory_format | torch.layout):
        return str(value)
    if isinstance(value, torch.device):
        return device or f"torch.device({str(value)!r})"
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"float({str(value)!r})"
    return repr(value)


def _identifier(name: str) -> str:
    return re.sub(r"\W", "_", name) if name.isidentifier() else "v_" + re.sub(r"\W", "_", name)


class Lowering:
    """One pass over the graph; results in `inputs`, `lines`, `outputs`, `shapes`."""

    def __init__(
        self,
        exported: torch.export.ExportedProgram,
        args: list[Any] | None = None,
        batch_statistics: bool = True,
    ) -> None:
        self.exported = exported
        self.args = args  # forward's positional arguments (export's example inputs)
        # Batch norm with batch statistics maps to batch_norm_train; False: an opaque call.
        self.batch_statistics = batch_statistics
        # Python-number arguments that export baked into the graph (by argument name), and
        # every positional argument's name (x<position>) in forward's order.
        self.specialized: dict[str, Any] = {}
        self.signature: list[str] = []
        self.names: dict[torch.fx.Node, str] = {}
        self.tensors: dict[str, Tensor] = {}
        self.inputs: list[Input] = []
        self.lines: list[Line] = []
        self.outputs: list[str] = []
        self._positive: set[str] = set()
        # int64 operands of catalog index parameters: the smallest dim size they index.
        self.index_bounds: dict[str, int] = {}
        self._mapped_tuples: set[torch.fx.Node] = set()
        self._state: set[torch.fx.Node] = set()  # results that update module state (run())
        # A split's elements (SPLIT_VIEWS): the steps of each, emitted where a getitem reads it.
        self._split_parts: dict[torch.fx.Node, list[list[Step]]] = {}
        self._pending: dict[str, Tensor] = {}  # checked lines' results, until appended
        # Python numbers in elementwise operators, as one-element float32 constant inputs: the
        # catalog's binary operators take tensors, and a broadcast [1] tensor means the same.
        self.scalars: dict[str, torch.Tensor] = {}

    def run(self) -> Lowering:
        self._placeholders()
        self._state = self._state_outputs()
        for node in self.exported.graph.nodes:
            if node.op == "call_function":
                self._call(node)
            elif node.op == "output":
                self.outputs = self._user_outputs(node)
        self._merge_duplicates()
        self._prune()
        for inp in self.inputs:
            inp.positive = inp.name in self._positive
            inp.high = self.index_bounds.get(inp.name)
        return self

    def _results(self, node: torch.fx.Node) -> list[tuple[Any, bool]]:
        """The output `node`'s values, each with whether it is one of forward's own results.
        A module exported in training mode also returns its buffer updates (batch norm's
        running statistics): those are state, not results."""
        specs = self.exported.graph_signature.output_specs
        return [
            (n, spec.kind == OutputKind.USER_OUTPUT)
            for n, spec in zip(node.args[0], specs, strict=True)
        ]

    def _state_outputs(self) -> set[torch.fx.Node]:
        """The graph's results that update module state, not forward's own."""
        output = next(n for n in self.exported.graph.nodes if n.op == "output")
        return {n for n, own in self._results(output) if not own and isinstance(n, torch.fx.Node)}

    def _user_outputs(self, node: torch.fx.Node) -> list[str]:
        """The forward's own results (_results)."""
        return [self.names[n] for n, own in self._results(node) if own]

    def _merge_duplicates(self) -> None:
        """One line for each catalog computation: a later line with the same call on the same
        operands (var_mean's var and mean both take the mean; a module computing x.mean() twice)
        reads the first line's result instead, so no kernel computes it twice.  Opaque lines
        stay as they are (a PyTorch call may draw random numbers: dropout)."""
        first: dict[str, str] = {}  # a catalog line's call -> its result
        renamed: dict[str, str] = {}
        kept: list[Line] = []
        for line in self.lines:
            if renamed:
                line = _renamed_line(line, renamed)
            if line.op is not None and line.call in first:
                renamed[line.result] = first[line.call]
                self.tensors.pop(line.result, None)
                continue
            if line.op is not None:
                first[line.call] = line.result
            kept.append(line)
        self.lines = kept
        self.outputs = [renamed.get(o, o) for o in self.outputs]

    def _prune(self) -> None:
        """Drops lines whose results reach no output (the buffer updates' arithmetic)."""
        live = set(self.outputs)
        kept: list[Line] = []
        for line in reversed(self.lines):
            if line.result in live:
                kept.append(line)
                live.update(line.operands)
        self.lines = kept[::-1]
        # State no kept line reads (a constant a catalog line took by value instead): not an
        # input of the program.  User inputs stay: they are the forward's signature.
        self.inputs = [i for i in self.inputs if i.kind == "user" or i.name in live]

    def _placeholders(self) -> None:
        specs = {s.arg.name: s for s in self.exported.graph_signature.input_specs}
        nodes = [n for n in self.exported.graph.nodes if n.op == "placeholder"]
        n_user = sum(specs[n.name].kind == InputKind.USER_INPUT for n in nodes)
        positions = user_positions(self.args, n_user)
        self.signature = [f"x{p}" for p in range(len(self.args))] if self.args is not None else []
        user, params = [], []
        next_position = iter(positions)
        for node in nodes:
            spec = specs[node.name]
            if not node.users and spec.kind != InputKind.USER_INPUT:
                continue  # num_batches_tracked and the like: state the forward never reads
            val = node.meta["val"]
            if spec.kind == InputKind.USER_INPUT:
                arg = f"x{next(next_position)}"
                if not isinstance(val, torch.Tensor):
                    self._number_input(node, arg, val, user)
                    continue
                user.append(Input(arg, list(val.shape), _dtype(val)))
                name = arg
            else:
                if not isinstance(val, torch.Tensor):
                    raise UserError(f"input {node.name} is a {type(val).__name__}, not a tensor")
                name = _identifier(node.name)
                kind = {InputKind.PARAMETER: "parameter", InputKind.BUFFER: "buffer"}.get(
                    spec.kind, "constant"
                )
                widen = _only_elementwise_operand(node)
                shape = [1] if widen else list(val.shape)
                params.append(Input(name, shape, _dtype(val), kind, spec.target, False, widen))
                self.names[node] = name
                self.tensors[name] = Tensor(name, shape, _dtype(val))
                continue
            self.names[node] = name
            self.tensors[name] = Tensor(name, list(val.shape), _dtype(val))
        if self.args is not None:  # a None argument that export kept no placeholder for
            self.specialized.update(
                {f"x{p}": None for p, v in enumerate(self.args) if v is None and p not in positions}
            )
        self.inputs = user + params

    def _number_input(self, node: torch.fx.Node, arg: str, val: Any, user: list[Input]) -> None:
        """A Python number argument: specialized (export baked it in: no users), or read at
        run time where scalars.py bound it, as a one-element float32 tensor input."""
        if not node.users:
            self.specialized[arg] = val
            return
        name = f"{arg}_t"
        user.append(Input(name, [1], "float32", "scalar", arg))
        self.names[node] = name
        self.tensors[name] = Tensor(name, [1], "float32")

    def _fresh(self, node: torch.fx.Node) -> str:
        name = f"t{len(self.lines)}"
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor):
            self.tensors[name] = Tensor(name, list(val.shape), _dtype(val))
        return name

    def _call(self, node: torch.fx.Node) -> None:
        if node.target is operator.getitem and node.args[0] in self._split_parts:
            return self._split_element(node)
        if node.target in SPLIT_VIEWS and self._record_split(node):
            return None
        if node.target is operator.getitem and node.args[0] in self._mapped_tuples:
            if node.args[1] == 0:
                self.names[node] = self.names[node.args[0]]
                return
        if self._alias_identity(node):
            return
        steps = to_catalog(node) if isinstance(node.target, torch._ops.OpOverload) else None
        if node.target in TUPLE_RESULT and not _only_first_used(node, self._state):
            steps = None
        reason = None
        if steps and not self.batch_statistics and any(s[0] == "batch_norm_train" for s in steps):
            steps, reason = None, BATCH_STATISTICS
        if steps is not None and self._emit_steps(node, steps):
            if node.target in TUPLE_RESULT:
                self._mapped_tuples.add(node)
            return
        self._emit_opaque(node, reason)

    def _record_split(self, node: torch.fx.Node) -> bool:
        """A split read only through getitem writes no line of its own: each element it hands
        out is a narrow (or select) of the input, emitted where it is read."""
        parts = split_parts(node)
        readers_ok = all(u.target is operator.getitem for u in node.users)
        if parts is None or not readers_ok or node.args[0] not in self.names:
            return False
        self._split_parts[node] = parts
        return True

    def _split_element(self, node: torch.fx.Node) -> None:
        """Element i of a recorded split: its catalog step, or (an input the catalog cannot
        take, such as an integer tensor) the same view as a PyTorch call."""
        split, index = node.args
        steps = self._split_parts[split][index]
        if self._emit_steps(node, steps):
            return
        op, params = steps[0]
        source = self.names[split.args[0]]
        where = params["start"] if op == "narrow" else params["index"]
        extra = f", {params['length']}" if op == "narrow" else ""
        call = f"torch.{op}({source}, {params['dim']}, {where}{extra})"
        name = self._fresh(node)
        self.lines.append(Line(name, call, None, [source], call))
        self.names[node] = name

    def _alias_identity(self, node: torch.fx.Node) -> bool:
        """A node whose value is its input's (clone, contiguous, eval-mode dropout, a slice of
        the whole dim): its name is the input's, no line.  Not where the forward returns it
        and the input is a program input: a program computes its results."""
        if not _is_identity(node) or not isinstance(node.args[0], torch.fx.Node):
            return False
        source = self.names.get(node.args[0])
        computed = {line.result for line in self.lines}
        if source is None or (source not in computed and _is_output(node)):
            return False
        if self.tensors[source].dtype != _dtype(node.meta["val"]):
            return False
        self.names[node] = source
        return True

    def _emit_opaque(self, node: torch.fx.Node, reason: str | None = None) -> None:
        name = self._fresh(node)
        public = None
        if node.target is operator.getitem:
            call = public = f"{self.names[node.args[0]]}[{node.args[1]}]"
        else:
            # On a GPU, triu's decomposition (arange, scalar_tensor) made CPU tensors that
            # then met the CUDA input: devices follow the first input instead.
            device = f"{self.inputs[0].name}.device" if self.inputs else None

            def lit(v: Any) -> str:
                return _literal(v, self.names, device)

            args = [lit(a) for a in node.args]
            args += [f"{k}={lit(v)}" for k, v in node.kwargs.items()]
            call = f"{_callable_name(node.target)}({', '.join(args)})"
            if isinstance(node.target, torch._ops.OpOverload):
                public = public_call(node.target, list(node.args), dict(node.kwargs), lit)
        operands = [self.names[n] for n in node.all_input_nodes]
        self.lines.append(Line(name, call, None, operands, public, reason))
        self.names[node] = name

    def _emit_steps(self, node: torch.fx.Node, steps: list[Step]) -> bool:
        """Appends the catalog lines for `steps`, or nothing and False when one does not fit."""
        lines: list[Line] = []
        for k, (op, params) in enumerate(steps):
            params = {name: _resolve(value, lines, k) for name, value in params.items()}
            line = self._checked_line(op, params, f"t{len(self.lines) + k}")
            if line is None:
                self._pending.clear()
                return False
            lines.append(line)
        val = node.meta.get("val")
        last = self._pending[lines[-1].result]
        if (
            isinstance(val, torch.Tensor)
            and list(val.shape) != list(last.shape)
            and not _broadcasts_alike(node, last.shape)
        ):
            self._pending.clear()  # e.g. a [1] scalar constant broadcast against a 0-d tensor
            return False
        for line in lines:
            self.lines.append(line)
            self.tensors[line.result] = self._pending.pop(line.result)
        self.names[node] = lines[-1].result
        return True

    def _scalar(self, value: float) -> str:
        """The constant input holding `value` (one per distinct value)."""
        target = f"{SCALAR_TARGET}{float(value)!r}".replace(".", "_").replace("-", "m")
        target = re.sub(r"\W", "_", target)
        name = "c_" + target.removeprefix(SCALAR_TARGET)
        if target not in self.scalars:
            self.scalars[target] = torch.tensor([float(value)], dtype=torch.float32)
            self.inputs.append(Input(name, [1], "float32", "constant", target))
            self.tensors[name] = Tensor(name, [1], "float32")
        return name

    def _operand(self, value: Any) -> str | None:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return self._scalar(value)
        if isinstance(value, torch.fx.Node):
            constant = self._zero_dim_constant(value)
            if constant is not None:  # torch.tensor(0.5) made in forward: a number after all
                return self._scalar(constant)
            return self.names.get(value)
        return value if isinstance(value, str) else None

    def _zero_dim_constant(self, node: torch.fx.Node) -> float | None:
        """The value of a 0-d float tensor that export lifted out of forward, else None (the IR
        has no 0-d tensors; a one-element constant broadcasts the same way)."""
        while node.op == "call_function" and _op_name(node.target) in _PURE_COPIES:
            node = node.args[0]  # torch.tensor(c) in forward: export copies the lifted constant
        if node.op != "placeholder":
            return None
        spec = next(
            (s for s in self.exported.graph_signature.input_specs if s.arg.name == node.name),
            None,
        )
        constants = getattr(self.exported, "constants", {}) or {}
        value = constants.get(spec.target) if spec is not None and spec.target else None
        if isinstance(value, torch.Tensor) and value.dim() == 0 and value.is_floating_point():
            return float(value)
        return None

    def _checked_line(self, op: str, params: dict[str, Any], result: str) -> Line | None:
        """The catalog line, checked by the IR's parser on the operands' shapes."""
        entry = catalog.op(op)
        args, operands, positive = [], [], []
        by_position: list[str | None] = []  # each tensor parameter's operand (None: absent)
        indexing: list[tuple[str, dict]] = []  # index operands and their parameters
        for k, param in enumerate(entry["params"]):
            if param["name"] not in params:
                if param["kind"] != "attr":
                    by_position.append(None)
                continue
            value = params[param["name"]]
            if param["kind"] == "attr":
                if isinstance(value, torch.fx.Node):
                    return None  # a tensor where the catalog takes a literal
                text = _literal(list(value) if isinstance(value, tuple) else value, {})
            elif value is None:
                text = "None"
                by_position.append(None)
            else:
                text = self._operand(value)
                tensor = self.tensors.get(text or "") or self._pending.get(text or "")
                # Each parameter takes one dtype: where's condition bool (a comparison's
                # result), nll_loss's target int64, every other tensor float32.  Any other
                # tensor keeps the ATen node a PyTorch call.
                if tensor is None or tensor.dtype != param["dtype"]:
                    return None
                if param["index_dim"] >= 0:
                    indexing.append((text, param))
                operands.append(text)
                by_position.append(text)
                if param["positive"] or (k == 0 and "positive_input" in entry["traits"]):
                    positive.append(text)
            args.append(text if k == 0 else f"{param['name']}={text}")
        bounds = self._index_operand_bounds(indexing, by_position)
        if bounds is None:
            return None
        call = f"{entry['spelling']}({', '.join(args)})"
        checked = self._canonical(call, operands, positive, result)
        if checked is None:
            return None
        self._positive.update(positive)
        for name, size in bounds.items():
            self.index_bounds[name] = min(size, self.index_bounds.get(name, size))
        self._pending[result] = Tensor(result, checked.shape, checked.dtype)
        return Line(result, checked.name, op, operands)

    def _index_operand_bounds(
        self, indexing: list[tuple[str, dict]], by_position: list[str | None]
    ) -> dict[str, int] | None:
        """The dim size each index operand indexes (Param::index_dim of tensor parameter
        index_of: nll_loss's classes, an embedding's rows); None where it has no such dim."""
        bounds: dict[str, int] = {}
        for text, param in indexing:
            of = param["index_of"]
            indexed = self._tensor(by_position[of] or "") if of < len(by_position) else None
            if indexed is None or param["index_dim"] >= len(indexed.shape):
                return None
            bounds[text] = indexed.shape[param["index_dim"]]
        return bounds

    def _tensor(self, name: str) -> Tensor | None:
        return self.tensors.get(name) or self._pending.get(name)

    def _canonical(
        self, call: str, operands: list[str], positive: list[str], result: str
    ) -> Tensor | None:
        """The parser's spelling of `call` (as the Tensor's name slot: see _checked_line) and
        its result's shape, or None when the IR rejects it."""
        unique = list(dict.fromkeys(operands))
        tensors = [self._tensor(n) for n in unique]
        # Indices from 0 alone index any dim: the line's check needs no bound.
        makes = [
            make_input(t.shape or [1], n in positive, 1 if t.dtype == "int64" else None)
            for n, t in zip(unique, tensors, strict=True)
        ]
        # No program input is bool or 0-d: a bool operand is made by a comparison of a float
        # input, a 0-d one by the sum of a one-element input (a reduction over every dim).
        made = {"bool": "torch.eq({0}, {0})", "0-d": "torch.sum({0}, 0)"}
        kinds = {
            n: "bool" if t.dtype == "bool" else "0-d"
            for n, t in zip(unique, tensors, strict=True)
            if t.dtype == "bool" or not t.shape
        }
        params = [f"{n}_src" if n in kinds else n for n in unique]
        lines = [Line(n, made[kind].format(f"{n}_src"), None) for n, kind in kinds.items()]
        ok, program, _ = _core.parse(
            render_task(params, [*lines, Line(result, call, None)], [result], makes)
        )
        if not ok:
            return None
        prefix = f"    {result} = "
        line = next(x for x in program["source"].splitlines() if x.startswith(prefix))
        return Tensor(
            line.removeprefix(prefix), program["shapes"][result], program["dtypes"][result]
        )


def _renamed_line(line: Line, renamed: dict[str, str]) -> Line:
    """`line` reading the names in `renamed` as their replacements (whole identifiers)."""
    if not set(line.operands) & renamed.keys():
        return line

    def rename(text: str | None) -> str | None:
        if text is None:
            return None
        return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: renamed.get(m.group(0), m.group(0)), text)

    return replace(
        line,
        call=rename(line.call) or line.call,
        operands=[renamed.get(o, o) for o in line.operands],
        public=rename(line.public),
    )


def _resolve(value: Any, lines: list[Line], step: int) -> Any:
    """A step's parameter with a Ref (aten.py) replaced by that step's result name."""
    if not isinstance(value, Ref):
        return value
    index = value.index + step if value.index < 0 else value.index
    assert 0 <= index < step, f"step {step} refers to step {index}"
    return lines[index].result


def user_positions(args: list[Any] | None, n_user: int) -> list[int]:
    """The forward position of each user placeholder: one per tensor, number or None argument
    (torch 2.13 keeps a placeholder for None; an export that drops it is accepted too);
    containers (export flattens them into several) are not supported."""
    if args is None:
        return list(range(n_user))
    for p, value in enumerate(args):
        if value is not None and not isinstance(value, torch.Tensor | int | float):
            raise UserError(
                f"input {p} is a {type(value).__name__}: forward's arguments must be tensors "
                "or Python numbers"
            )
    if len(args) == n_user:
        return list(range(n_user))
    positions = [p for p, value in enumerate(args) if value is not None]
    if len(positions) != n_user:
        raise UserError(f"torch.export made {n_user} inputs of {len(args)} arguments")
    return positions


_ELEMENTWISE_BINARY = frozenset(
    {"add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "minimum.default", "maximum.default"}
)


def _only_elementwise_operand(node: torch.fx.Node) -> bool:
    """A 0-d float placeholder that every user combines elementwise with a tensor of rank >= 1
    (where a one-element tensor gives the same result)."""
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor) or val.dim() != 0 or not val.is_floating_point():
        return False
    return _users_combine_elementwise(node, 1)


# Unary elementwise operators through which a 0-d value stays one element (CLIP's
# logit_scale.exp(), a temperature's reciprocal) before a binary one broadcasts it.
_ELEMENTWISE_UNARY = frozenset(
    {"exp.default", "log.default", "sqrt.default", "rsqrt.default", "neg.default",
     "reciprocal.default", "sigmoid.default", "tanh.default", "abs.default"}
)  # fmt: skip


def _users_combine_elementwise(node: torch.fx.Node, min_rank: int) -> bool:
    """Every user of `node` is an elementwise binary operator whose other operand is one
    tensor of rank >= min_rank, or a unary elementwise one (not an output) whose users are."""
    for user in node.users:
        target = user.target
        if not isinstance(target, torch._ops.OpOverload):
            return False
        overload = f"{_op_name(target)}.{target._overloadname}"
        if overload in _ELEMENTWISE_UNARY and not _is_output(user):
            if not _users_combine_elementwise(user, min_rank):
                return False
            continue
        if overload not in _ELEMENTWISE_BINARY:
            return False
        others = [a for a in user.args[:2] if a is not node]
        ranks = [o.meta["val"].dim() for o in others if isinstance(o, torch.fx.Node)]
        if len(ranks) != 1 or ranks[0] < min_rank:
            return False
    return True


def _broadcasts_alike(node: torch.fx.Node, shape: list[int]) -> bool:
    """A 0-d `node` may be held as `shape` (all ones) where no output is it and every user
    combines it elementwise with a tensor of rank >= len(shape): broadcasting then gives
    the same result (x / torch.norm(x))."""
    val = node.meta.get("val")
    if val.dim() != 0 or any(d != 1 for d in shape) or _is_output(node) or not node.users:
        return False
    return _users_combine_elementwise(node, len(shape))


# Copies and aliases that change nothing but identity: looked through to find a constant.
_PURE_COPIES = frozenset({"clone", "alias", "lift_fresh_copy", "detach"})


def _is_identity(node: torch.fx.Node) -> bool:
    """The node's value equals its first argument's, element for element."""
    name = _op_name(node.target)
    if name in _PURE_COPIES or name == "contiguous":
        return True
    if name in ("dropout", "feature_dropout", "alpha_dropout") and not node.args[2]:
        return True  # eval mode (train=False)
    val, source = node.meta.get("val"), node.args[0] if node.args else None
    if name == "slice" and isinstance(source, torch.fx.Node) and isinstance(val, torch.Tensor):
        step = node.args[4] if len(node.args) > 4 else 1
        return step == 1 and list(val.shape) == list(source.meta["val"].shape)
    return False


def _is_output(node: torch.fx.Node) -> bool:
    return any(user.op == "output" for user in node.users)


def _op_name(target: Any) -> str:
    return target._schema.name.split("::")[-1] if isinstance(target, torch._ops.OpOverload) else ""


def _only_first_used(node: torch.fx.Node, state: set[torch.fx.Node]) -> bool:
    """True when every use of a tuple-valued node takes element 0, apart from elements that
    only update module `state` (batch norm's running statistics: not results, see
    _user_outputs; a PyTorch line kept by a hybrid still updates them, a kernel does not)."""
    return all(
        u.target is operator.getitem
        and (u.args[1] == 0 or (u in state and all(x.op == "output" for x in u.users)))
        for u in node.users
        if u.users
    )


def _callable_name(target: Any) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return f"torch.ops.aten.{target._schema.name.split('::')[-1]}.{target._overloadname}"
    module = getattr(target, "__module__", "") or ""
    return f"{module}.{target.__name__}" if module else target.__name__


def _shape_args(shape: list[int]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


def make_input(
    shape: list[int], positive: bool = False, high: int | None = None, boolean: bool = False
) -> str:
    """get_inputs()'s call for a program input: torch.randint(0, high, ...) for class indices
    (int64), torch.randint(0, 2, ..., dtype=torch.bool) for a mask, torch.rand where a use
    needs positive values, torch.randn otherwise."""
    size = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    if boolean:
        return f"torch.randint(0, 2, ({size}), dtype=torch.bool)"
    if high is not None:
        return f"torch.randint(0, {high}, ({size}))"
    return ("torch.rand" if positive else "torch.randn") + _shape_args(shape)


def render_task(params: list[str], lines: list[Line], outputs: list[str], makes: list[str]) -> str:
    """A functional task: `fused_operator(params)` of `lines` and `get_inputs()` of `makes`."""
    body = "".join(f"    {line.result} = {line.call}\n" for line in lines)
    return (
        "import torch\nimport torch.nn.functional as F\n\n"
        f"def fused_operator({', '.join(params)}):\n{body}    return {', '.join(outputs)}\n\n"
        f"def get_inputs():\n    return [{', '.join(makes)}]\n"
    )

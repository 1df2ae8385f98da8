"""Python numbers among forward's arguments (KernelBench's `forward(self, A, s)`, s = 3.14).

torch.export (torch 2.13) specializes every Python int and float user input: the placeholder
stays in the signature but has no users, and the value is baked into the graph where forward
used it (`aten.mul.Tensor(a, 3.14)`).  Floats cannot be marked dynamic (export refuses a
dynamic_shapes entry for a float), and ints marked dynamic would turn dims and sizes symbolic.

A baked value alone cannot say which numbers came from the argument: `A * s + 3.14` with
s = 3.14 holds two equal numbers.  So the task is exported a second time with every float
argument moved to a different value: a number that reads v_i in the first graph and v_i' in
the second, at the same place of an otherwise identical graph, is the argument itself, and
`bind` puts the placeholder back there so that the lowering reads it at run time.  Any other
difference (2 * s, a branch on s, a failed export) leaves every argument specialized.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch.fx.node import map_aggregate

# Added to float argument i (times i + 1) for the second export: far from usual constants.
_SHIFT = 0.6180339887498949

Binding = dict[torch.fx.Node, tuple[Any, Any]]  # node -> (args, kwargs) reading placeholders


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def float_positions(inputs: list[Any]) -> list[int]:
    return [p for p, v in enumerate(inputs) if isinstance(v, float)]


def shifted(inputs: list[Any]) -> list[Any]:
    """`inputs` with float argument i moved by (i + 1) * _SHIFT."""
    out = list(inputs)
    for i, p in enumerate(float_positions(inputs)):
        out[p] = inputs[p] + (i + 1) * _SHIFT
    return out


def _leaves(value: Any) -> list[Any]:
    found: list[Any] = []
    map_aggregate(value, lambda leaf: found.append(leaf) or leaf)
    return found


def find_bindings(
    first: torch.export.ExportedProgram,
    second: torch.export.ExportedProgram,
    inputs: list[Any],
    placeholders: dict[int, torch.fx.Node],
) -> Binding:
    """New (args, kwargs) for the nodes of `first` that use a float argument (by position in
    `inputs`; `placeholders` maps that position to its placeholder in `first`), or {} when the
    two exports differ in any way other than those arguments' values."""
    moved = shifted(inputs)
    by_pair = {(inputs[p], moved[p]): placeholders[p] for p in float_positions(inputs)}
    nodes_a, nodes_b = list(first.graph.nodes), list(second.graph.nodes)
    if len(nodes_a) != len(nodes_b):
        return {}
    binding: Binding = {}
    for a, b in zip(nodes_a, nodes_b, strict=True):
        if (a.op, a.target, a.name) != (b.op, b.target, b.name):
            return {}
        leaves_a, leaves_b = _leaves((a.args, a.kwargs)), _leaves((b.args, b.kwargs))
        if len(leaves_a) != len(leaves_b):
            return {}
        swap: dict[int, torch.fx.Node] = {}
        for k, (x, y) in enumerate(zip(leaves_a, leaves_b, strict=True)):
            if isinstance(x, torch.fx.Node) or isinstance(y, torch.fx.Node):
                if not (isinstance(x, torch.fx.Node) and isinstance(y, torch.fx.Node)):
                    return {}
                if x.name != y.name:
                    return {}
            elif is_number(x) and is_number(y) and (x, y) in by_pair:
                swap[k] = by_pair[(x, y)]
            elif type(x) is not type(y) or x != y:
                return {}
        if swap:
            binding[a] = _substitute((a.args, a.kwargs), swap)
    return binding


def _substitute(value: Any, swap: dict[int, torch.fx.Node]) -> Any:
    """`value` with its k-th leaf (in _leaves' order) replaced by swap[k]."""
    counter = iter(range(len(_leaves(value))))
    return map_aggregate(value, lambda leaf: swap.get(next(counter), leaf))


@contextlib.contextmanager
def bound(binding: Binding) -> Iterator[None]:
    """The graph with `binding` applied, restored on exit (the exported program stays as
    torch.export made it)."""
    saved = {node: (node.args, node.kwargs) for node in binding}
    try:
        for node, (args, kwargs) in binding.items():
            node.args, node.kwargs = tuple(args), dict(kwargs)
        yield
    finally:
        for node, (args, kwargs) in saved.items():
            node.args, node.kwargs = args, kwargs

"""Python face of the program IR: parse a functional task into a typed, read-only object."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from drtriton import _core
from drtriton.errors import UserError


class ProgramError(UserError, ValueError):
    """A functional program that does not parse or whose shapes do not fit."""

    def __init__(self, message: str, line: int = 0) -> None:
        self.message = message
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message)


@dataclass(frozen=True)
class Program:
    """A parsed functional task (see DESIGN.md). `source` is the canonical text."""

    source: str
    ops: list[str]
    level: int
    inputs: list[str]
    outputs: list[str]
    shapes: dict[str, list[int]]
    dtypes: dict[str, str]
    nodes: list[dict[str, Any]]
    flops: float
    bytes: float
    unfused_bytes: float
    canonical_key: str = field(repr=False)

    def input_shapes(self) -> list[list[int]]:
        return [self.shapes[name] for name in self.inputs]

    def output_shapes(self) -> list[list[int]]:
        return [self.shapes[name] for name in self.outputs]


def parse(text: str) -> Program:
    """Parse a functional task; raises ProgramError naming the line on bad input."""
    ok, payload, line = _core.parse(text)
    if not ok:
        raise ProgramError(payload, line)
    return Program(**payload)


def example_program(op_name: str) -> str:
    """A one-operator functional program built from the catalog entry's example."""
    ok, payload, line = _core.example_program(op_name)
    if not ok:
        raise ProgramError(payload, line)
    return payload

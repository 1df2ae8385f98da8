"""Python face of the operator catalog (the table itself lives in C++: core/catalog/)."""

from __future__ import annotations

from functools import cache
from typing import Any

from drtriton import _core


@cache
def _ops() -> tuple[dict[str, Any], ...]:
    return tuple(_core.ops())


def ops(kind: str | None = None) -> list[dict[str, Any]]:
    """Catalog entries as dicts; `kind` filters to "compute" or "create"."""
    return [dict(op) for op in _ops() if kind is None or op["kind"] == kind]


def op(name: str) -> dict[str, Any]:
    """One entry by catalog name, spelling, alias or fully qualified callable."""
    for entry in _ops():
        if name in (entry["name"], entry["torch"], entry["spelling"], *entry["aliases"]):
            return dict(entry)
    raise KeyError(f"unknown operator {name!r}")

"""Import drtriton's Python sources from this working tree (the installed package may be older),
keeping the compiled extension `drtriton._core` from wherever it was installed."""

from __future__ import annotations

import pathlib

import drtriton

_TREE = str(pathlib.Path(__file__).resolve().parents[2] / "python" / "drtriton")
if _TREE not in drtriton.__path__:
    drtriton.__path__.insert(0, _TREE)

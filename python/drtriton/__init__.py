"""drtriton: turn PyTorch programs into fast, verified Triton kernels (the DRTriton method).

The C++ core (`drtriton._core`) is loaded on first use, so that tools which need only
torch and Triton (the verifier's sandboxed worker, say) start without it.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# Public name -> module that defines it.
_EXPORTS = {
    "Program": "drtriton.program",
    "ProgramError": "drtriton.program",
    "example_program": "drtriton.program",
    "parse": "drtriton.program",
    "op": "drtriton.catalog",
    "ops": "drtriton.catalog",
    "UserError": "drtriton.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'drtriton' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)

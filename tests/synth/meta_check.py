"""Runs a synthesized program under torch and compares every value's shape and dtype with
what the IR inferred (shared by the property tests)."""

from __future__ import annotations

import re
from typing import Any

import torch

from drtriton.program import parse

_RETURN = re.compile(r"^    return .*$", re.MULTILINE)


def run_and_compare(source: str, device: str = "meta") -> dict[str, torch.Tensor]:
    """Executes `source` on `device`; returns every named value; raises AssertionError on a
    shape or dtype that differs from the IR's."""
    program = parse(source)
    # Return every local (inputs and intermediates) instead of the result alone.
    instrumented = _RETURN.sub("    return dict(locals())", source, count=1)
    namespace: dict[str, Any] = {}
    exec(compile(instrumented, "<synth>", "exec"), namespace)
    with torch.device(device):
        inputs = namespace["get_inputs"]()
        values = namespace["fused_operator"](*inputs)
    for name, shape in program.shapes.items():
        value = values[name]
        assert list(value.shape) == list(shape), (
            f"{name}: torch {list(value.shape)} vs IR {shape}\n{source}"
        )
        want = getattr(torch, program.dtypes[name])
        assert value.dtype == want, f"{name}: torch {value.dtype} vs IR {want}\n{source}"
    return values

"""Functional task text for the teacher's tests: operator lines in, a task module's source out."""

from __future__ import annotations

import os

# DRTRITON_TEST_DEVICE=cuda runs the verifier-backed teacher tests on a GPU.
DEVICE = os.environ.get("DRTRITON_TEST_DEVICE", "cpu")
HEADER = "import torch\nimport torch.nn.functional as F\n\n"


def task(lines: list[str], args: str, inputs: str) -> str:
    """`fused_operator(args)` running `lines` and returning the last line's result."""
    body = "".join(f"    {line}\n" for line in lines)
    out = lines[-1].split("=")[0].strip()
    return (
        f"{HEADER}def fused_operator({args}):\n{body}    return {out}\n\n"
        f"def get_inputs():\n    return [{inputs}]\n"
    )

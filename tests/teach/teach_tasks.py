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


# A bmm's stored (1, 8, 6) result reshaped through a transpose of a size-1 dim: the output is a
# view of it, no copy kernel (codegen.cc RowMajorViewSource; KernelBench L1 11's einsum as the
# frontend writes it).
BMM_OUTPUT_VIEW = task(
    [
        "t0 = torch.bmm(x0, x1)",
        "t1 = torch.reshape(t0, [2, 4, 1, 6])",
        "t2 = torch.transpose(t1, 2, 3)",
        "t3 = torch.reshape(t2, [8, 6])",
    ],
    "x0, x1",
    "torch.randn(1, 8, 16), torch.randn(1, 16, 6)",
)

"""Rounding error of the teacher's long contractions: chunked partial sums versus one running sum.

    python benchmarks/contraction_accuracy.py                 # CPU (Triton interpreter)
    python benchmarks/contraction_accuracy.py --device cuda   # GPU (compiled kernels)

The teacher sums a long contraction in chunks of about sqrt(K) elements (at least 256): K > 1024
with "ieee", K > 4096 (128 BLOCK_K steps) with the GPU's tensor-core split (core/codegen/
heuristics.cc); before, `acc += tl.dot(...)` was one running fp32 sum over all of K.  On the GPU
the kernels run the split (DOT_PRECISION, heuristics.h), in the interpreter "ieee".  For each
task below (long-K transposed convolutions like the ones the H200 teacher run
rejected, and a long-K matmul) this prints the largest error against a float64 reference of:
the teacher's kernel as emitted (chunked), the same kernel with the chunk loop taken out (the
single running sum, rebuilt from the emitted text), and PyTorch's own float32 operator.  Inputs
are scaled by 10, like the verifier's `scaled_10` input set, where the rejections happened.

The kernels are the teacher's own output, run in this process (no candidate from elsewhere).
Exit status 1 when the chunked kernel is not within the verifier's tolerance where PyTorch is.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys
import tempfile
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

HEADER = "import torch\nimport torch.nn.functional as F\n\n"
TASKS = {
    # K = C_in x kernel = 4096 x 3 (transposed conv: the input's channels are reduced).
    "conv_transpose1d K=12288": (
        "def fused_operator(x0, x1):\n    t0 = F.conv_transpose1d(x0, x1, None, 2)\n"
        "    return t0\n",
        [(2, 4096, 6), (4096, 4, 3)],
    ),
    # K = 1024 x 3 x 3 = 9216 (a 2-D transposed conv with a wide input).
    "conv_transpose2d K=9216": (
        "def fused_operator(x0, x1):\n    t0 = F.conv_transpose2d(x0, x1, None, 1)\n"
        "    return t0\n",
        [(1, 1024, 4, 4), (1024, 4, 3, 3)],
    ),
    "matmul K=16384": (
        "def fused_operator(x0, x1):\n    t0 = torch.matmul(x0, x1)\n    return t0\n",
        [(16, 16384), (16384, 16)],
    ),
}
ATOL = RTOL = 1e-4  # the verifier's float32 tolerance


def task_source(body: str, shapes: list[tuple[int, ...]]) -> str:
    inputs = ", ".join(f"torch.randn{shape}" for shape in shapes)
    return HEADER + body + f"\ndef get_inputs():\n    return [{inputs}]\n"


def single_sum(candidate: str) -> str:
    """The chunked kernel with its chunk loop removed: one running sum over K, as before."""
    lines = candidate.splitlines()
    out: list[str] = []
    inner = None  # indentation of the chunk loop's body
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if line.strip().startswith("for kc in tl.range("):
            inner = indent + 4
            bound = re.search(r"tl\.range\(0, (\w+),", line)
            assert bound, line
            out.append(" " * indent + f"for k0 in tl.range(0, {bound.group(1)}, BLOCK_K):")
            continue
        if inner is not None:
            text = line.strip()
            if text.startswith("part = tl.zeros") or text.startswith("for k0 in tl.range(kc"):
                continue
            if text == "acc += part":
                inner = None
                continue
            if indent > inner:  # the k0 loop's body: one level up
                line = line[4:]
            line = line.replace("part += tl.dot", "acc += tl.dot")
        out.append(line)
    return "\n".join(out) + "\n"


def load(text: str, folder: str, name: str) -> Any:
    from drtriton.verify.task import import_file

    path = pathlib.Path(folder) / f"{name}.py"
    path.write_text(text)
    return import_file(str(path), name)


def worst(got: Any, expected: Any) -> tuple[float, int]:
    """(largest |error|, elements outside atol + rtol * |expected|)."""
    err = (got.double() - expected).abs()
    outside = int((err > ATOL + RTOL * expected.abs()).sum())
    return float(err.max()), outside


def measure(name: str, body: str, shapes: list[tuple[int, ...]], device: str, folder: str) -> dict:
    import torch

    from drtriton.teach import emit

    source = task_source(body, shapes)
    chunked = emit(source)
    if "for kc in tl.range(" not in chunked:
        raise SystemExit(f"{name}: the teacher did not chunk this contraction")
    task = load(source, folder, "task_" + re.sub(r"\W", "_", name))
    gen = torch.Generator().manual_seed(0)
    inputs = [10.0 * torch.randn(s, generator=gen) for s in shapes]
    reference = task.fused_operator(*[x.double() for x in inputs])
    on_device = [x.to(device) for x in inputs]
    row = {"task": name}
    for label, text in (("chunked", chunked), ("single sum", single_sum(chunked))):
        module = load(text, folder, re.sub(r"\W", "_", f"{label}_{name}"))
        out = module.triton_fused_operator(*on_device).cpu()
        row[label] = worst(out, reference)
    with torch.no_grad():
        row["torch fp32"] = worst(task.fused_operator(*on_device).cpu(), reference)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu", help="cpu (Triton interpreter) or cuda")
    args = ap.parse_args()
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    import torch

    if args.device.startswith("cuda"):
        if not torch.cuda.is_available():
            print("--device cuda, but torch sees no GPU", file=sys.stderr)
            return 2
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    print("| task | chunked: max err, outside tol | single sum | torch fp32 |")
    print("|---|---|---|---|")
    failed = False
    with tempfile.TemporaryDirectory(prefix="drtriton-acc-") as folder:
        for name, (body, shapes) in TASKS.items():
            row = measure(name, body, shapes, args.device, folder)
            cells = [
                f"{row[k][0]:.2e}, {row[k][1]}" for k in ("chunked", "single sum", "torch fp32")
            ]
            print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
            failed |= row["chunked"][1] > row["torch fp32"][1]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

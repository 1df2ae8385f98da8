"""Teacher pointwise kernels against eager PyTorch, contiguous fast path versus strided path.

    python benchmarks/pointwise_speed.py --device cuda                  # H200: timings
    python benchmarks/pointwise_speed.py --device cuda --shape 128 64 256 256 --generic
    python benchmarks/pointwise_speed.py                                # CPU smoke test

For each operator (a 4-D KernelBench-like activation, optionally after a per-channel bias) the
teacher's candidate is verified by drtriton.verify on --device, twice: as emitted (contiguous
inputs take the `if CONTIG:` path, tensors read at `ptr + offs`) and with the flag forced to
False (the strided path, i.e. the teacher's kernels before the fast path). On a GPU the verdict
carries the candidate's time, eager's time and the speedup; on the CPU (Triton interpreter)
only correctness, so the smoke test checks that both paths are accepted.

Prints one row per (operator, path) and, with --out, writes the rows as JSON (atomically).
Exit status 1 when a candidate is rejected, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
from typing import Any

from tqdm import tqdm

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The source tree's package, unless PYTHONPATH names another copy (a private build's _core).
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

from drtriton.errors import UserError  # noqa: E402
from drtriton.teach import emit  # noqa: E402
from drtriton.verify import Options, verify  # noqa: E402

HEADER = "import torch\nimport torch.nn.functional as F\n\n"
# name -> (operator lines over x0 (and the bias x1), whether the task takes a bias)
OPS: dict[str, tuple[list[str], bool]] = {
    "mish": (["t0 = F.mish(x0)"], False),
    "relu": (["t0 = torch.relu(x0)"], False),
    "bias_mish": (["t0 = torch.add(x0, x1)", "t1 = F.mish(t0)"], True),
}
GPU_SHAPE = [128, 64, 128, 128]  # 2^27 float32 elements: 512 MiB per tensor
CPU_SHAPE = [2, 4, 8, 8]


def task(op: str, shape: list[int]) -> str:
    lines, bias = OPS[op]
    args, inputs = "x0", f"torch.randn({', '.join(map(str, shape))})"
    if bias:
        args += ", x1"
        inputs += f", torch.randn({shape[1]}, 1, 1)"
    body = "".join(f"    {line}\n" for line in lines)
    out = lines[-1].split("=")[0].strip()
    return (
        f"{HEADER}def fused_operator({args}):\n{body}    return {out}\n\n"
        f"def get_inputs():\n    return [{inputs}]\n"
    )


def strided(candidate: str) -> str:
    """The same candidate with the fast path switched off (the flag is a launch argument)."""
    if "CONTIG=contig" not in candidate:
        raise UserError("the candidate has no contiguous fast path (CONTIG=contig) to switch off")
    return candidate.replace("CONTIG=contig", "CONTIG=False")


def measure(op: str, path: str, source: str, candidate: str, opts: Options) -> dict[str, Any]:
    verdict = verify(source, candidate, options=opts)
    return {
        "op": op,
        "path": path,
        "status": verdict.status,
        "reason": verdict.reason,
        "time_ms": verdict.time_ms,
        "eager_ms": verdict.eager_ms,
        "speedup": verdict.speedup,
    }


def fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def write_json(path: str, rows: list[dict[str, Any]]) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(rows, f, indent=2)
    os.replace(tmp, path)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--device", default="cpu", help="cpu (interpreter, correctness) or cuda[:N]")
    ap.add_argument("--ops", nargs="+", default=sorted(OPS), choices=sorted(OPS))
    ap.add_argument(
        "--shape",
        nargs=4,
        type=int,
        metavar=("N", "C", "H", "W"),
        help=f"activation shape (default {GPU_SHAPE} on cuda, {CPU_SHAPE} on cpu)",
    )
    ap.add_argument("--generic", action="store_true", help="generic-shape candidates")
    ap.add_argument("--runs", type=int, default=30, help="timed runs per candidate (GPU)")
    ap.add_argument("--out", help="write the rows as JSON here")
    return ap.parse_args(argv)


def run(args: argparse.Namespace) -> int:
    cuda = args.device.startswith("cuda")
    shape = args.shape or (GPU_SHAPE if cuda else CPU_SHAPE)
    if any(s < 1 for s in shape):
        raise UserError(f"--shape sizes must be positive, got {shape}")
    # torch.compile's baseline costs seconds per task and is not what we compare against.
    opts = Options(device=args.device, runs=args.runs, compile_baseline=False)
    rows = []
    jobs = [(op, path) for op in args.ops for path in ("contiguous", "strided")]
    for op, path in tqdm(jobs, desc="verify", unit="candidate"):
        source = task(op, shape)
        candidate = emit(source, generic_shapes=args.generic)
        if path == "strided":
            candidate = strided(candidate)
        rows.append(measure(op, path, source, candidate, opts))
    mode = "generic" if args.generic else "specialized"
    print(f"shape {tuple(shape)} float32, {mode} candidates, device {args.device}")
    print(f"{'op':<10} {'path':<11} {'status':<14} {'ms':>8} {'eager ms':>9} {'speedup':>8}")
    for r in rows:
        print(
            f"{r['op']:<10} {r['path']:<11} {r['status']:<14} {fmt(r['time_ms']):>8} "
            f"{fmt(r['eager_ms']):>9} {fmt(r['speedup']):>8}"
        )
        if r["status"] != "correct":
            print(f"  reason: {r['reason']}")
    if args.out:
        write_json(args.out, rows)
    return 0 if all(r["status"] == "correct" for r in rows) else 1


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

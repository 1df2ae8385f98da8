"""A model checkpoint through the device tool's size limits, for a training run split over calls.

A call brings back at most 8 files of 16 MiB each (64 MiB together), and a call's working tree
(carried files included) is at most 64 MiB. `pack` saves the checkpoint in bfloat16 (the
recipe's 26M-parameter model: 52 MB), tars it with its tokenizer and cuts the tar into 15 MiB
parts; `unpack` joins the parts and extracts the checkpoint. Training continues from the
bfloat16 weights (cast up to float32 when loaded); the optimizer state does not travel.

The float32 weights are rounded to bfloat16 stochastically (up or down with the odds that keep
each weight's expected value), not to the nearest. An RL run moves most weights by less than
half a bfloat16 step (lr 2e-5 for a few dozen optimizer steps, against a step of 1.2e-4 at a
weight of 0.02): rounding to the nearest would put most of them back where the run started, and
a run split over calls would lose most of each call's learning.

    python benchmarks/h200/model_parts.py pack WORK/rl OUT/model          # OUT/model.part00, ...
    python benchmarks/h200/model_parts.py unpack .devdata/model DIR        # DIR/config.json, ...
"""

from __future__ import annotations

import argparse
import glob
import io
import os
import pathlib
import sys
import tarfile
import tempfile

import torch

PART_BYTES = 15 << 20


def round_stochastic(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """float32 -> bfloat16, rounding the magnitude up with probability (the dropped low 16
    bits) / 2^16: unbiased, and exact for values bfloat16 holds (their low bits are 0)."""
    bits = x.float().contiguous().view(torch.int32)
    noise = torch.randint(0, 1 << 16, bits.shape, generator=generator, dtype=torch.int32)
    return ((bits + noise) & -65536).view(torch.float32).to(torch.bfloat16)


def pack(src: str, prefix: str) -> list[str]:
    """The parts written (PREFIX.part00, PREFIX.part01, ...)."""
    from drtriton.policy.hf import load_model

    model, tokenizer = load_model(src, dtype="float32")
    generator = torch.Generator().manual_seed(0)  # the same parts from the same checkpoint
    rounded = {k: round_stochastic(v, generator) if v.is_floating_point() else v
               for k, v in model.state_dict().items()}  # fmt: skip
    model = model.to(torch.bfloat16)
    model.load_state_dict(rounded)
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for name in sorted(os.listdir(tmp)):
                tar.add(os.path.join(tmp, name), arcname=name)
    data = buffer.getvalue()
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    parts = []
    for i, start in enumerate(range(0, len(data), PART_BYTES)):
        path = f"{prefix}.part{i:02d}"
        with open(path, "wb") as f:
            f.write(data[start : start + PART_BYTES])
        parts.append(path)
    return parts


def unpack(prefix: str, dest: str) -> None:
    parts = sorted(glob.glob(glob.escape(prefix) + ".part[0-9][0-9]"))
    if not parts:
        from drtriton.errors import UserError

        raise UserError(f"no parts {prefix}.partNN")
    data = b"".join(pathlib.Path(p).read_bytes() for p in parts)
    os.makedirs(dest, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        tar.extractall(dest, filter="data")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("pack", help="checkpoint dir -> PREFIX.partNN")
    p.add_argument("src")
    p.add_argument("prefix")
    u = sub.add_parser("unpack", help="PREFIX.partNN -> checkpoint dir")
    u.add_argument("prefix")
    u.add_argument("dest")
    args = ap.parse_args(argv)
    from drtriton.errors import UserError

    try:
        return _run(args)
    except UserError as exc:
        print(f"model_parts: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.verb == "pack":
        parts = pack(args.src, args.prefix)
        print(f"{len(parts)} parts, {sum(os.path.getsize(p) for p in parts) / 2**20:.1f} MiB")
    else:
        unpack(args.prefix, args.dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A model checkpoint through the device tool's size limits, for a training run split over calls.

A call brings back at most 8 files of 16 MiB each (64 MiB together), and a call's working tree
(carried files included) is at most 64 MiB. `pack` saves the checkpoint in bfloat16 (the
recipe's 26M-parameter model: 52 MB), tars it with its tokenizer and cuts the tar into 15 MiB
parts; `unpack` joins the parts and extracts the checkpoint. Training continues from the
bfloat16 weights (cast up to float32 when loaded); the optimizer state does not travel.

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

PART_BYTES = 15 << 20


def pack(src: str, prefix: str) -> list[str]:
    """The parts written (PREFIX.part00, PREFIX.part01, ...)."""
    from drtriton.policy.hf import load_model

    model, tokenizer = load_model(src, dtype="bfloat16")
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

"""How far pure memorisation of the SFT answers goes on held-out programs (issue 7's data check).

For each held-out program, the "oracle" answers with the SFT completion of a program with the
same operators whose inputs have the same ranks and the same unit (size-1) dims, and the
verifier judges it on the held-out task. With shape-specialized teacher answers this scores
~0 (every answer hard-codes its program's sizes); with shape-generic ones it is the share a
model that only recalls the right template per operator could reach, before it learns to copy
the program's constants (a softplus beta, an eps, a group count) from the prompt.

    python benchmarks/template_oracle.py --pairs examples/train/data/sft_pairs.jsonl \\
        --heldout examples/train/data/heldout.jsonl --per-level 16
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from typing import Any

from drtriton.verify import Options, verify

SHAPE = re.compile(r"torch\.\w+\(([\d, ]+)\)")


def signature(source: str) -> tuple[Any, ...]:
    """Per input: (rank, positions of size-1 dims), from get_inputs()'s tensor constructors."""
    inputs = source.split("def get_inputs")[-1]
    sig = []
    for shape in SHAPE.findall(inputs):
        dims = [int(d) for d in shape.split(",") if d.strip()]
        sig.append((len(dims), tuple(i for i, d in enumerate(dims) if d == 1)))
    return tuple(sig)


def read(path: str) -> list[dict[str, Any]]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--pairs", required=True, help="SFT pair records (JSONL)")
    ap.add_argument("--heldout", required=True, help="held-out program records (JSONL)")
    ap.add_argument("--per-level", type=int, default=16, help="held-out programs per level")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)

    answers: dict[tuple[Any, ...], str] = {}
    for pair in read(args.pairs):
        if pair.get("correct", True):
            answers.setdefault((tuple(pair["ops"]), signature(pair["source"])), pair["completion"])
    counts: dict[int, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for program in read(args.heldout):
        level = int(program["level"])
        if sum(counts[level].values()) >= args.per_level:
            continue
        answer = answers.get((tuple(program["ops"]), signature(program["source"])))
        if answer is None:
            counts[level]["no template"] += 1
            continue
        verdict = verify(program["source"], answer, Options(device=args.device, timeout=120))
        counts[level]["correct" if verdict.correct else verdict.status] += 1
    for level in sorted(counts):
        n = sum(counts[level].values())
        print(f"level {level}: {counts[level]['correct']}/{n} correct; {dict(counts[level])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

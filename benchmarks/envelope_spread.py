"""Honest float32 answers to an ill-conditioned task, judged with and without the spread.

    python benchmarks/envelope_spread.py                    # 64 batches, 3 seeds (~3 min, 2 cores)
    python benchmarks/envelope_spread.py --batches 8 --seeds 1 --json out.json

The task is paper-preset program 83 (bmm -> mul -> softmax -> div; 538 batches of
2761 x 112 @ 112 x 73), which the verifier rejected on the H200 (2026-12-05c) on 4 of 108M
elements of its scaled_10 input set: logits near 1e4, where a softmax row whose two largest
logits nearly tie turns one float32 rounding of them into an error above 1e-4. Here it runs
with fewer batches on that input set, and each answer below, every one an honest float32
evaluation, is judged by the verifier's comparison (compare.compare, atol = rtol = 1e-4)
against the float64 evaluation alone (envelope.Float64Leaf.alone: the rule before the spread)
and with the spread of a second moved evaluation (envelope.evaluate):
- logits rounded once: the bmm exact (float64), rounded to float32, then the rest in float32;
  no float32 kernel is more exact;
- torch's float32 bmm with K cut into four sums of 28, and with K reversed;
- bf16x6 emulated in the teacher's loop (benchmarks/dot_split_accuracy.py's arithmetic).
Prints, per seed and answer, the elements past the bound and the largest error / bound ratio
(above 1 fails) under both rules.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
from typing import Any

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import dot_split_accuracy as split  # noqa: E402
from drtriton.verify import compare, envelope  # noqa: E402
from drtriton.verify.task import load_task  # noqa: E402

SCALED_10 = 3  # the verifier's input set index of that distribution (task.DISTRIBUTIONS)
K = 112


def task_source(batches: int) -> str:
    return f"""
import torch

def fused_operator(x0, x1, x2, x3):
    t0 = torch.bmm(x0, x1)
    t1 = torch.mul(t0, x2)
    t2 = torch.softmax(t1, 2)
    return torch.div(t2, x3)

def get_inputs():
    return [torch.randn({batches}, 2761, {K}), torch.randn({batches}, {K}, 73),
            torch.randn(73), torch.randn(2761, 1)]
"""


def rest(t0: torch.Tensor, x2: torch.Tensor, x3: torch.Tensor) -> torch.Tensor:
    return torch.div(torch.softmax(torch.mul(t0, x2), 2), x3)


def answers(x0: torch.Tensor, x1: torch.Tensor, x2: torch.Tensor,
            x3: torch.Tensor) -> dict[str, torch.Tensor]:  # fmt: skip
    quarters = sum(torch.bmm(x0[..., i : i + 28], x1[:, i : i + 28]) for i in range(0, K, 28))
    emulated = torch.stack(
        [split.teacher_loop(a, b, "bf16x6", 32, 0) for a, b in zip(x0, x1, strict=True)]
    )
    return {
        "logits rounded once": rest(torch.bmm(x0.double(), x1.double()).float(), x2, x3),
        "fp32 bmm, K in 4 sums": rest(quarters, x2, x3),
        "fp32 bmm, K reversed": rest(torch.bmm(x0.flip(-1), x1.flip(1)), x2, x3),
        "bf16x6 emulated": rest(emulated, x2, x3),
    }


def measure(batches: int, seed: int) -> list[dict[str, Any]]:
    source = task_source(batches)
    task = load_task(source)
    scope: dict[str, Any] = {}
    exec(source, scope)
    f = scope["fused_operator"]
    inputs = task.make_inputs(SCALED_10, seed)
    rows = []
    with torch.no_grad():
        ref = f(*inputs)
        leaf = envelope.evaluate(f, inputs, [ref], compare.flatten)[0]
        before = envelope.Float64Leaf.alone(leaf.value)
        for name, out in answers(*inputs).items():
            old_n, old_r = compare.worst_ratio(out, ref, before)
            new_n, new_r = compare.worst_ratio(out, ref, leaf)
            verdicts = [compare.compare([out], [ref], None, None, [x]) for x in (before, leaf)]
            rows.append({"seed": seed, "answer": name, "before_past": old_n, "before_ratio": old_r,
                         "before_rejects": verdicts[0] is not None, "spread_past": new_n,
                         "spread_ratio": new_r, "spread_rejects": verdicts[1] is not None})  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batches", type=int, default=64, help="of program 83's 538 (default 64)")
    p.add_argument("--seeds", type=int, default=3, help="input seeds 1000.. (default 3)")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args(argv)
    if args.batches < 1 or args.seeds < 1:
        p.error("--batches and --seeds must be >= 1")
    torch.set_num_threads(os.cpu_count() or 1)
    rows = []
    print(
        "| seed | answer | before: past | before: max error/bound | with spread: past | with spread: max |"
    )
    print("|---|---|---|---|---|---|")
    for seed in range(1000, 1000 + args.seeds):
        for row in measure(args.batches, seed):
            rows.append(row)
            print(f"| {seed} | {row['answer']} | {row['before_past']} | {row['before_ratio']:.3f} | "
                  f"{row['spread_past']} | {row['spread_ratio']:.3f} |", flush=True)  # fmt: skip
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"batches": args.batches, "rows": rows}, f, indent=1)
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

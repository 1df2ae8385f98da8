"""KernelBench problems at CPU size: module-level integer constants capped.

KernelBench's shapes are sized for GPUs (a 4096 x 4096 matmul, batch 128 convolutions); on the
CPU, Triton's interpreter needs hours for them.  Capping every module-level integer (and every
integer in a module-level tuple) at --cap keeps each problem's structure (operators, attributes,
parameter layout) while making it small enough to optimize and verify on a laptop-class CPU:

    python benchmarks/shrink_kernelbench.py /work/shared/kernelbench/level2.jsonl small2.jsonl
    drtriton eval kernelbench small2.jsonl --out runs/small2 --device cpu --workers 2

A few problems stop being valid at small sizes (a pooling window larger than the shrunk
input, heads that no longer divide the width); their export fails and the evaluation records
it as unsupported.  Sizes are not performance-relevant here: this checks the pipeline on many
real program structures, not speed.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys


def _cap(node: ast.expr, cap: int) -> ast.expr:
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value > cap:
        return ast.Constant(cap)
    if isinstance(node, ast.Tuple | ast.List):
        node.elts = [_cap(e, cap) for e in node.elts]
    return node


def shrink(code: str, cap: int) -> str:
    tree = ast.parse(code)
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            stmt.value = _cap(stmt.value, cap)
    return ast.unparse(tree) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("problems", help="KernelBench JSONL (level, problem_id, name, code)")
    ap.add_argument("out", help="where to write the shrunk problems")
    ap.add_argument("--cap", type=int, default=16, help="largest module-level integer")
    args = ap.parse_args(argv)
    with open(args.problems) as f, open(args.out, "w") as out:
        for line in f:
            if line.strip():
                record = json.loads(line)
                record["code"] = shrink(record["code"], args.cap)
                out.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

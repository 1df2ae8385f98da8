"""KernelBench problems at CPU size: module-level integer constants capped.

KernelBench's shapes are sized for GPUs (a 4096 x 4096 matmul, batch 128 convolutions); on the
CPU, Triton's interpreter needs hours for them.  Capping every module-level integer (an integer
literal or integer arithmetic such as `2048 * 2`, also inside a module-level tuple) at --cap keeps each problem's structure (operators, attributes,
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
import operator
import sys

# Integer arithmetic of module-level sizes (`N = 2048 * 2` in KernelBench level 1).
_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
               ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}  # fmt: skip


def _int_value(node: ast.expr) -> int | None:
    """The value of an expression of integer literals and + - * // **, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _int_value(node.left), _int_value(node.right)
        if left is None or right is None:
            return None
        if (type(node.op) is ast.FloorDiv and right == 0) or (
            type(node.op) is ast.Pow and right < 0
        ):
            return None  # an error or a float: left as written
        return _ARITHMETIC[type(node.op)](left, right)
    return None


def _cap(node: ast.expr, cap: int) -> ast.expr:
    value = _int_value(node)
    if value is not None and value > cap:
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

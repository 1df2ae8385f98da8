"""The hybrid candidate: each chosen fragment's kernel file, its top-level names prefixed
so that files cannot collide, under the entry point the C++ planner renders
(`fragment_<k>(...)` calls for fused segments, the program's own lines for the rest)."""

from __future__ import annotations

import ast

HEADER = (
    "import torch\nimport torch.nn.functional as F\nimport triton\nimport triton.language as tl\n"
)


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


class _Prefix(ast.NodeTransformer):
    def __init__(self, names: set[str], prefix: str) -> None:
        self.names, self.prefix = names, prefix

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            node.id = self.prefix + node.id
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        if node.name in self.names:
            node.name = self.prefix + node.name
        self.generic_visit(node)
        return node


def prefixed(candidate: str, prefix: str) -> tuple[list[str], str]:
    """(its import lines, the rest with every top-level name prefixed)."""
    tree = ast.parse(candidate)
    imports = [ast.unparse(s) for s in tree.body if isinstance(s, ast.Import | ast.ImportFrom)]
    tree.body = [s for s in tree.body if not isinstance(s, ast.Import | ast.ImportFrom)]
    tree = _Prefix(_top_level_names(tree), prefix).visit(tree)
    return imports, ast.unparse(tree)


def stitch(entry: str, kernels: list[str]) -> str:
    """`entry` calls fragment_<k>; kernels[k] is that fragment's candidate file. A candidate
    that recurs (the same fragment program at another place: each step of an unrolled RNN,
    search.py names fragments canonically) is emitted once and called from each place, so
    Triton compiles its kernels once, not once per step."""
    imports = list(dict.fromkeys(HEADER.splitlines()))
    bodies = []
    owners: dict[str, int] = {}  # candidate text -> the fragment whose prefix it is under
    for k, kernel in enumerate(kernels):
        owner = owners.setdefault(kernel, k)
        if owner == k:
            kernel_imports, body = prefixed(kernel, f"f{k}_")
            imports += [i for i in kernel_imports if i not in imports]
            bodies.append(f"# fragment {k}\n{body}\n")
        entry = entry.replace(f"fragment_{k}(", f"f{owner}_triton_fused_operator(")
    return "\n".join(imports) + "\n\n\n" + "\n\n".join(bodies) + "\n\n" + entry

"""Exact algebra on the exported ATen graph, before decomposition: products that a module
writes as dense matrix products but that touch each element once.

A product with a diagonal matrix built from a vector, `torch.diag(v) @ B` or `B @ torch.diag(v)`,
scales B's rows (columns) by v. As written it builds the N x N matrix (arange, a compare, a
where) and runs a dense GEMM: 2·N·N·M FLOPs (N = M = 4096: 137 GFLOP, ~3 ms at float32's
~50 TFLOP/s), where the scaling reads and writes N·M elements once (128 MB, ~30 us at 4.3 TB/s).
Each output element is v[i]·B[i, j] either way, plus N - 1 products with zero that add
nothing, except where B holds an inf or a NaN: 0 · inf is NaN, so the dense product is NaN over
a whole column where the scaling keeps the other rows' finite values.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten
_PRODUCTS = {aten.matmul.default, aten.mm.default}
_DIAGONALS = {aten.diag.default, aten.diag_embed.default}


def diagonal_products(graph_module: torch.fx.GraphModule) -> int:
    """Rewrites every product of a diagonal matrix made from a vector (diag or diag_embed of a
    1-d tensor, main diagonal) and a tensor of rank >= 1 into a broadcast multiply; returns how
    many it rewrote. A diagonal matrix used elsewhere too is kept for those users."""
    graph = graph_module.graph
    rewritten = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in _PRODUCTS:
            continue
        left, right = node.args[:2]
        if _vector_of_diagonal(left) is not None and _rank(right) >= 1:
            vector = _vector_of_diagonal(left)
            # (diag(v) @ B)[..., i, j] = v[i] · B[..., i, j]; a vector B: v[i] · B[i].
            if _rank(right) >= 2:
                with graph.inserting_before(node):
                    vector = graph.call_function(aten.unsqueeze.default, (vector, -1))
                    vector.meta["val"] = vector.args[0].meta["val"].unsqueeze(-1)
            operands = (vector, right)
        elif _vector_of_diagonal(right) is not None and _rank(left) >= 1:
            # (B @ diag(v))[..., i, j] = B[..., i, j] · v[j]; a vector B: B[j] · v[j].
            operands = (left, _vector_of_diagonal(right))
        else:
            continue
        # The node itself becomes the multiply: its name, which the exported program's
        # signature may list as an output, and its result's metadata stay.
        node.target, node.args, node.kwargs = aten.mul.Tensor, operands, {}
        rewritten += 1
    if rewritten:
        graph.eliminate_dead_code()
        graph_module.recompile()
    return rewritten


def _vector_of_diagonal(node: object) -> torch.fx.Node | None:
    """v where `node` is diag(v) or diag_embed(v) of a 1-d float v on the main diagonal."""
    if not isinstance(node, torch.fx.Node) or node.target not in _DIAGONALS:
        return None
    vector = node.args[0]
    offset = node.args[1] if len(node.args) > 1 else node.kwargs.get("offset", 0)
    if offset != 0 or _rank(vector) != 1:
        return None
    if not vector.meta["val"].is_floating_point():
        return None
    return vector


def _rank(node: object) -> int:
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return val.dim() if isinstance(val, torch.Tensor) else -1

"""Exact algebra on the exported ATen graph, before decomposition.

Products that a module writes as dense matrix products but that touch each element once
(diagonal_products), and gathers through reshaped indices (gathers_through_index_views).

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
        row_scale, column_scale = _vector_of_diagonal(left), _vector_of_diagonal(right)
        if row_scale is not None and _rank(right) >= 1:
            vector = row_scale
            # (diag(v) @ B)[..., i, j] = v[i] · B[..., i, j]; a vector B: v[i] · B[i].
            if _rank(right) >= 2:
                with graph.inserting_before(node):
                    vector = graph.call_function(aten.unsqueeze.default, (vector, -1))
                    vector.meta["val"] = vector.args[0].meta["val"].unsqueeze(-1)
            operands = (vector, right)
        elif column_scale is not None and _rank(left) >= 1:
            # (B @ diag(v))[..., i, j] = B[..., i, j] · v[j]; a vector B: B[j] · v[j].
            operands = (left, column_scale)
        else:
            continue
        # The node itself becomes the multiply: its name, which the exported program's
        # signature may list as an output, and its result's metadata stay.
        node.target, node.args, node.kwargs = aten.mul.Tensor, operands, {}
        rewritten += 1
    return _recompiled(graph_module, rewritten)


def _recompiled(graph_module: torch.fx.GraphModule, rewritten: int) -> int:
    """After `rewritten` nodes changed in place: the nodes no one reads now dropped, the
    module's code made anew."""
    if rewritten:
        graph_module.graph.eliminate_dead_code()
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


_INDEX_VIEWS = {
    aten.view.default,
    aten.reshape.default,
    aten._unsafe_view.default,
    aten.flatten.using_ints,
}


def gathers_through_index_views(graph_module: torch.fx.GraphModule) -> int:
    """Rewrites a gather whose int64 indices are a reshape of other indices (Swin's
    `table[index.view(-1)]`, `embedding(tokens.flatten())`) into the gather of the indices as
    they are, reshaped after: x[idx.view(s)] = x[idx].view(s + x.shape[1:]), and so for an
    embedding's rows.  The catalog's embedding takes indices of any shape, and its layout
    operators float tensors only, so the index reshape would stay a PyTorch call.  Returns
    how many it rewrote."""
    graph = graph_module.graph
    rewritten = 0
    for node in list(graph.nodes):
        index_view = _gathered_index_view(node)
        if index_view is None:
            continue
        source = index_view.args[0]
        args = list(node.args)
        if node.target is aten.embedding.default:
            args[1] = source
        else:
            args[1] = [source]
        with graph.inserting_before(node):
            gather = graph.call_function(node.target, tuple(args), dict(node.kwargs))
        shape = list(node.meta["val"].shape)
        # The node itself becomes the reshape: its name and result metadata stay (as in
        # diagonal_products); the gather's metadata is its own result's.
        gather.meta["val"] = node.meta["val"].reshape(
            *source.meta["val"].shape, *shape[len(index_view.meta["val"].shape) :]
        )
        node.target, node.args, node.kwargs = aten.view.default, (gather, shape), {}
        rewritten += 1
    return _recompiled(graph_module, rewritten)


def _gathered_index_view(node: torch.fx.Node) -> torch.fx.Node | None:
    """The reshape of int64 indices that gather `node` (x[idx] with one index tensor on dim 0,
    or an embedding) reads, or None."""
    if node.op != "call_function":
        return None
    if node.target is aten.embedding.default:
        index = node.args[1]
    elif node.target is aten.index.Tensor and len(node.args[1]) == 1:
        index = node.args[1][0]
    else:
        return None
    if not isinstance(index, torch.fx.Node) or index.target not in _INDEX_VIEWS:
        return None
    source = index.args[0]
    values = [v.meta.get("val") for v in (index, source) if isinstance(v, torch.fx.Node)]
    if len(values) != 2 or any(v is None or v.dtype is not torch.int64 for v in values):
        return None
    return index

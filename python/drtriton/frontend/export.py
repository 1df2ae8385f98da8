"""KernelBench task → exported, decomposed ATen graph (eval mode, or training mode on request).

The task file is trusted (it is the user's own model), so it is exec'd in a fresh namespace.
Decomposition keeps every ATen operator the catalog has whole (aten.ATEN_TO_CATALOG's keys):
PyTorch would otherwise lower linear to addmm with a transposed weight, layer_norm to
mean/var arithmetic, and so on, which no longer reads as one catalog operator.
Recurrent layers (LSTM, GRU, RNN) are kept whole too, as opaque PyTorch calls: decomposed,
they unroll into one cell per time step and layer (KernelBench's L3 35 LSTM became 55,350 ATen
operators, and its search and export ran past the 240 s problem limit).
Small scaled dot-product attention calls are kept whole as well, one
`F.scaled_dot_product_attention` call each: decomposed, each became 16 lines (two scaled
matmuls, softmax, the eight-line guard for fully masked rows of `_safe_softmax`) that run as
separate PyTorch kernels where eager launches one fused attention kernel, and a launch-bound
call gives the teacher nothing to win (KernelBench L3 28, nn.TransformerEncoder: 2 MFLOP a call,
all 96 such lines of its 6 layers stayed in PyTorch, 0.71x eager on the H200; kept whole,
each layer has 15 lines fewer). Large ones are decomposed: their products are where the
teacher's tensor-core kernels can beat eager's float32 attention (L1 97: 1.1 TFLOP a call).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from drtriton.errors import UserError
from drtriton.frontend.aten import kept_whole, own_decompositions
from drtriton.frontend.rewrite import diagonal_products, gathers_through_index_views

_aten = torch.ops.aten
RECURRENT = [
    overload
    for packet in (_aten.lstm, _aten.gru, _aten.rnn_tanh, _aten.rnn_relu)
    for overload in (packet.input, packet.data)
]
ATTENTION = _aten.scaled_dot_product_attention.default
# Matmul FLOPs of one attention call (2·batch·Lq·Lk·(D + Dv)) below which it is kept whole:
# 16 launches of ~5 us outweigh its products up to about 2^32 FLOPs at the ~50 TFLOP/s of
# float32 (L3 28 and 32: 2 and 0.3 MFLOP; L1 97: 1.1 TFLOP).
ATTENTION_WHOLE_BELOW_FLOPS = 2**32


@dataclass
class LoadedTask:
    model: torch.nn.Module
    inputs: list[Any]
    namespace: dict[str, Any]


def load_module_task(
    code: str,
    seed: int = 0,
    training: bool = False,
    inputs: bool = True,
    fake_inputs: bool = False,
) -> LoadedTask:
    """Executes a KernelBench source and builds Model(*get_init_inputs()), in eval mode unless
    `training` (KernelBench's own evaluation never calls eval(); a deployment does).  With
    `inputs=False` get_inputs() is not called (`inputs` is then []): KernelBench's level-1
    inputs reach 1.6G elements, ~15 s of random numbers on the CPU, for a caller that only
    needs the model.  With `fake_inputs` get_inputs() runs under a FakeTensorMode: tensors of
    the real shapes and dtypes that hold no memory, enough for torch.export and the mapping
    (which read shapes only; 1.6G elements would be 6.4 GB), never for running the model."""
    namespace: dict[str, Any] = {"__name__": "drtriton_task"}
    with _users_code("the model file failed to run"):
        exec(compile(code, "<task>", "exec"), namespace)  # a trusted task file
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if name not in namespace:
            raise UserError(f"the task does not define {name!r}")
    torch.manual_seed(seed)
    with _users_code("the model's constructor failed (Model(*get_init_inputs()))"):
        model = namespace["Model"](*namespace["get_init_inputs"]()).train(training)
    if not inputs:
        return LoadedTask(model, [], namespace)
    torch.manual_seed(seed + 1)
    with _users_code("get_inputs() failed"), _fake_mode(fake_inputs):
        return LoadedTask(model, list(namespace["get_inputs"]()), namespace)


@contextmanager
def _fake_mode(enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    from torch._subclasses.fake_tensor import FakeTensorMode

    # Non-fake inputs: get_inputs() may wrap a real constant (torch.tensor([0.5])).
    with FakeTensorMode(allow_non_fake_inputs=True):
        yield


@contextmanager
def _users_code(what: str) -> Iterator[None]:
    """An exception from the user's own code is a UserError that says which part raised it:
    the callers' catch-alls would otherwise blame torch.export for a broken constructor."""
    try:
        yield
    except UserError:
        raise
    except Exception as exc:
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise UserError(f"{what}: {type(exc).__name__}: {first}".rstrip(": ")) from exc


def decompositions() -> dict[Any, Any]:
    """torch.export's default table minus the operators the catalog keeps whole (a copy: the
    caller may change it)."""
    return dict(_decompositions())


@functools.cache
def _decompositions() -> dict[Any, Any]:
    # Built once per process: materializing torch's table walks every registered operator,
    # about 95 ms, which was 15% of each export (0.63 s a KernelBench L1 problem on a CPU).
    # A custom operator registered after the first export is not in it, so it is kept whole
    # rather than decomposed; drtriton registers none, and its static check rejects them.
    table = torch.export.default_decompositions()
    for op in [*kept_whole(), *RECURRENT]:
        table.pop(op, None)
    for op, decomposition in own_decompositions().items():
        table[op] = decomposition
    return table.materialize()


# torch 2.13's export checks `isinstance(treespec, LeafSpec)` inside its own pytree code and
# warns about that deprecation on every export: torch's business, not the user's, so exactly
# that warning is silenced around the export (any other still shows).
_LEAFSPEC_WARNING = r"`isinstance\(treespec, LeafSpec\)` is deprecated"


def export_model(task: LoadedTask) -> torch.export.ExportedProgram:
    with torch.no_grad(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_LEAFSPEC_WARNING, category=FutureWarning)
        exported = torch.export.export(task.model, tuple(task.inputs))
        diagonal_products(exported.graph_module)
        gathers_through_index_views(exported.graph_module)
        table = decompositions()
        if _attention_is_small(exported.graph):
            table.pop(ATTENTION, None)
        return exported.run_decompositions(table)


def attention_flops(node: torch.fx.Node) -> int:
    """The two products' FLOPs of one aten.scaled_dot_product_attention node."""
    query, key, value = (arg.meta["val"] for arg in node.args[:3])
    *batch, lq, head_dim = query.shape
    return 2 * math.prod(batch) * lq * key.shape[-2] * (head_dim + value.shape[-1])


def _attention_is_small(graph: torch.fx.Graph) -> bool:
    """Every attention call of the graph is below ATTENTION_WHOLE_BELOW_FLOPS (one large call
    decomposes them all: the teacher may win there, and the layers of a model are alike)."""
    return all(
        attention_flops(node) < ATTENTION_WHOLE_BELOW_FLOPS
        for node in graph.nodes
        if node.target is ATTENTION
    )

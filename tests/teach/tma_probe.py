"""A child-process probe running candidates whose TMA kernels Triton's interpreter would refuse:
it gives the interpreter TMA's rule for a box (any element coordinate, zeros outside the
tensor), runs each `cand_<name>.py` of the folder in sys.argv[1] in fp16 on its task's inputs
and prints, per case, the kernels launched, the output's dtype and its relative L2 error
against the task in float64. Used by test_conv_input_by_tma.py and test_conv_pool_tail.py
through the `interpreted_probe` fixture: `write_tma_alone` writes the folder.
"""

from __future__ import annotations

import pathlib

from teach_tasks import task

from drtriton.teach import emit

POINTER_PATH = "    if not k0_tma:\n"
# The wrapper's GPU-only part of the TMA flag of a kernel reading the input itself.
GPU_ONLY = 'x0.device.type == "cuda" and x0.is_contiguous()'


def tma_alone(candidate: str) -> str:
    """The candidate with its TMA flag true off a GPU and the other path's launches off."""
    lifted = candidate.replace(GPU_ONLY, "True")
    return lifted.replace(POINTER_PATH, "    if False:\n")


def write_tma_alone(folder: pathlib.Path, cases: dict[str, tuple[list[str], str, str]]) -> None:
    """Per case (task lines, arguments, inputs): its task and its candidate, TMA alone."""
    for name, (lines, args, inputs) in cases.items():
        source = task(lines, args, inputs)
        (folder / f"task_{name}.py").write_text(source)
        (folder / f"cand_{name}.py").write_text(tma_alone(emit(source)))


PROBE = r"""
import json, pathlib, sys
import numpy as np
import torch
from triton.runtime import interpreter
from drtriton.verify.task import import_file


def at_any_coordinate(self, offsets):
    # TMA's rule: a box at any element coordinate, elements outside the tensor read as zeros.
    itemsize = self.base.dtype.element_ty.primitive_bitwidth // 8
    ptrs = np.broadcast_to(self.base.data, self.block_shape)
    masks = np.ones(self.block_shape, dtype=bool)
    for dim, size in enumerate(self.block_shape):
        shape = [1] * len(self.block_shape)
        shape[dim] = size
        index = (offsets[dim].data + np.arange(size)).reshape(shape)
        ptrs = ptrs + (itemsize * index * self.strides[dim].data).astype(np.uint64)
        masks = masks & (0 <= index) & (index < self.shape[dim].data)
    return interpreter.TensorHandle(ptrs, self.base.dtype.scalar), masks


interpreter.TensorDescHandle.materialize_pointers = at_any_coordinate
folder = pathlib.Path(sys.argv[1])
result = {}
for task_path in sorted(folder.glob("task_*.py")):
    name = task_path.stem[len("task_"):]
    task = import_file(str(task_path), "task_" + name)
    torch.manual_seed(0)
    inputs = [x.half() for x in task.get_inputs()]
    with torch.no_grad():
        ref = task.fused_operator(*[x.double() for x in inputs])
    module = import_file(str(folder / f"cand_{name}.py"), "cand_" + name)
    launched = []
    for attr in dir(module):
        kernel = getattr(module, attr)
        if attr.endswith("_kernel") and hasattr(kernel, "run"):
            def counted(*args, _run=kernel.run, _name=attr, **kwargs):
                launched.append(_name)
                return _run(*args, **kwargs)
            kernel.run = counted
    out = module.triton_fused_operator(*inputs)
    err = ((out.double() - ref).norm() / ref.norm()).item()
    result[name] = {"launched": launched, "rel_l2": err, "dtype": str(out.dtype)}
print(json.dumps(result))
"""

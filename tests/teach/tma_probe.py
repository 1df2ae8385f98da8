"""A child-process probe running candidates whose TMA kernels Triton's interpreter would refuse:
it gives the interpreter TMA's rule for a box (any element coordinate, zeros outside the
tensor), runs each `cand_<name>.py` of the folder in sys.argv[1] in fp16 on its task's inputs
and prints, per case, the kernels launched, the output's dtype and its relative L2 error
against the task in float64. Used by test_conv_input_by_tma.py and test_conv_pool_tail.py
through the `interpreted_probe` fixture.
"""

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

"""A child-process probe of TMA kernels alone in Triton's interpreter (fp16, where the
interpreter runs tensor descriptors and tl.dot): it runs each `cand_<name>.py` of the folder
in sys.argv[1] on its task's inputs and prints, per case, the kernels launched, the output's
dtype and its relative L2 error against the task in float64. Used through the
`interpreted_probe` fixture; `write_tma_alone` writes the folder, each candidate with the
launches of its other path switched off.
"""

from __future__ import annotations

import pathlib

from teach_tasks import task

from drtriton.teach import emit

POINTER_PATH = "    if not k0_tma:\n"


def tma_alone(candidate: str) -> str:
    """The candidate with the launches of its other path (the pointer kernel's) off."""
    return candidate.replace(POINTER_PATH, "    if False:\n")


def write_tma_alone(folder: pathlib.Path, cases: dict[str, tuple[list[str], str, str]]) -> None:
    """Per case (task lines, arguments, inputs): its task and its candidate, TMA alone."""
    for name, (lines, args, inputs) in cases.items():
        source = task(lines, args, inputs)
        (folder / f"task_{name}.py").write_text(source)
        (folder / f"cand_{name}.py").write_text(tma_alone(emit(source)))


PROBE = r"""
import json, pathlib, sys
import torch
from drtriton.verify.task import import_file


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

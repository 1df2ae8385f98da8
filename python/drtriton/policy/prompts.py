"""Prompt templates: the DRTriton synthetic prompt (paper, appendix F) and a KernelBench one.

The synthetic prompt asks for exactly one `@triton.jit` kernel, the entry point
`triton_fused_operator`, the answer inside <triton_code> tags, and shows one worked example
(two length-128 vectors added with masked loads and stores), as the paper's template does.
The teacher emits one kernel per fused group, so its pairs may hold more than one kernel; the
verifier accepts any number, and the prompt's "exactly one" is a request, not a check.
"""

from __future__ import annotations

from typing import Any

_EXAMPLE_TASK = """import torch

def fused_operator(x0, x1):
    t0 = torch.add(x0, x1)
    return t0

def get_inputs():
    return [torch.randn(128), torch.randn(128)]"""

_EXAMPLE_ANSWER = """<triton_code>
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def triton_fused_operator(x0, x1):
    out = torch.empty_like(x0)
    n_elements = out.numel()
    grid = (triton.cdiv(n_elements, 1024),)
    add_kernel[grid](x0, x1, out, n_elements, BLOCK_SIZE=1024)
    return out
</triton_code>"""

SYNTHETIC_TEMPLATE = """You are an expert GPU kernel engineer. Convert the PyTorch program below into an \
efficient Triton implementation that produces identical numerical results while running as fast \
as possible.

Requirements:
1. Write exactly one @triton.jit kernel and fuse all operations of `fused_operator` into it.
2. Define the entry point `triton_fused_operator` with the same parameters and return value as \
`fused_operator`. It may allocate outputs and compute the launch grid; all arithmetic must happen \
inside the Triton kernel.
3. Memory efficiency: coalesced accesses, correct handling of every stride, masked loads and \
stores so that no access goes out of bounds for the given input shapes, no redundant memory \
transactions.
4. Performance: choose block sizes that suit the shapes and keep the GPU fully occupied.
5. Return only the Triton code, wrapped in <triton_code> and </triton_code> tags.

Example PyTorch program:
```python
{example_task}
```

Example answer:
{example_answer}

PyTorch program to convert:
```python
{source}
```
"""

KERNELBENCH_TEMPLATE = """You write custom Triton kernels to replace the PyTorch operators in a \
given architecture and make it faster. You may replace some operators and keep others, fuse \
several operators into one kernel (for example matmul followed by relu), or change the algorithm \
(for example an online softmax). Keep the same inputs, outputs and numerical results.

The architecture to optimize:
```python
{source}
```

Write the optimized architecture as a class named ModelNew, with the same constructor arguments \
and parameters (in the same order) as Model, whose forward launches your @triton.jit kernels. \
Output the complete new code in one ```python code block: real, compilable code, with no test \
code and no explanation.
"""


def synthetic_prompt(source: str) -> str:
    """The paper's synthetic-benchmark prompt for one functional task."""
    return SYNTHETIC_TEMPLATE.format(
        example_task=_EXAMPLE_TASK, example_answer=_EXAMPLE_ANSWER, source=source.strip()
    )


def kernelbench_prompt(source: str) -> str:
    """A KernelBench-style Triton prompt for one module task (class Model)."""
    return KERNELBENCH_TEMPLATE.format(source=source.strip())


def is_module_task(source: str) -> bool:
    return "class Model" in source and "def fused_operator" not in source


def prompt_for(record_or_source: dict[str, Any] | str) -> str:
    """The right prompt for a program record or task text (module tasks get KernelBench's)."""
    source = record_or_source if isinstance(record_or_source, str) else record_or_source["source"]
    return kernelbench_prompt(source) if is_module_task(source) else synthetic_prompt(source)

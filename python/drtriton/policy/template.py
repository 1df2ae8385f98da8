"""TemplatePolicy: the C++ teacher (core/codegen) behind the Policy interface.

The teacher reads the task, not a prompt, so the task is recovered from the prompt (the last
```python block, which is where both prompt templates put it). Its "samples" are its distinct
template variants: asking for n returns up to n different kernels, padded by repeating the
last, so that a group always has n members.
"""

from __future__ import annotations

from drtriton.errors import UserError
from drtriton.policy.base import Completion
from drtriton.policy.extract import _fenced_blocks


def task_from_prompt(prompt: str) -> str:
    blocks = [b for b in _fenced_blocks(prompt) if "def fused_operator" in b or "class Model" in b]
    if not blocks:
        raise UserError("TemplatePolicy: the prompt holds no ```python task block")
    return blocks[-1]


class TemplatePolicy:
    name = "teacher"

    def __init__(self, generic_shapes: bool = False) -> None:
        # generic_shapes: candidates that read sizes at run time (drtriton.teach).
        self.generic_shapes = generic_shapes
        try:
            from drtriton import teach

            teach.unsupported_ops  # noqa: B018 (the binding must exist, not just the package)
            from drtriton import _core

            _core.codegen_variants  # noqa: B018
        except (ImportError, AttributeError) as exc:
            raise UserError(
                "TemplatePolicy needs the teacher (drtriton._core built with core/codegen): "
                f"{exc}; rebuild with `pip install --no-build-isolation .`"
            ) from exc
        self._teach = teach

    def generate(self, prompts: list[str], n: int = 1) -> list[list[Completion]]:
        return [self._sample(task_from_prompt(p), n) for p in prompts]

    def _sample(self, source: str, n: int) -> list[Completion]:
        try:
            codes = self._teach.variants(source, n, generic_shapes=self.generic_shapes)
        except UserError:
            codes = []
        if not codes:  # an unsupported task: an empty answer, which the verifier rejects
            return [Completion(text="", finish_reason="stop") for _ in range(n)]
        codes = codes + [codes[-1]] * (n - len(codes))
        return [Completion(text=f"<triton_code>\n{c}</triton_code>", code=c) for c in codes]

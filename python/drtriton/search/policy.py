"""Where fragment candidates come from: anything with `candidates(task_source, k)`.

The teacher (template generator) now; a trained model behind the same protocol later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Policy(Protocol):
    def candidates(self, task_source: str, k: int, amplified: Sequence[str] = ()) -> list[str]:
        """Up to k candidate files (each defines triton_fused_operator) for the task.
        `amplified`: the task's outputs whose rounding an operator outside it magnifies (a
        fragment's output read by another fragment's softmax), to be computed at full
        precision; a policy may ignore it (the verifier judges the fragment alone either way)."""
        ...


class TemplatePolicy:
    """The teacher's variants; [] for a fragment it cannot emit (the search then leaves those
    operators to PyTorch or to another fragment)."""

    def candidates(self, task_source: str, k: int, amplified: Sequence[str] = ()) -> list[str]:
        from drtriton.errors import UserError
        from drtriton.teach import variants

        try:
            return variants(task_source, k, amplified=amplified)
        except UserError:
            return []

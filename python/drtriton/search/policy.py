"""Where fragment candidates come from: anything with `candidates(task_source, k)`.

The teacher (template generator) now; a trained model behind the same protocol later.
"""

from __future__ import annotations

from typing import Protocol


class Policy(Protocol):
    def candidates(self, task_source: str, k: int) -> list[str]:
        """Up to k candidate files (each defines triton_fused_operator) for the task."""
        ...


class TemplatePolicy:
    """The teacher's variants; [] for a fragment it cannot emit (the search then leaves those
    operators to PyTorch or to another fragment)."""

    def candidates(self, task_source: str, k: int) -> list[str]:
        from drtriton.errors import UserError
        from drtriton.teach import variants

        try:
            return variants(task_source, k)
        except UserError:
            return []

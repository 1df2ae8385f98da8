"""Wall-clock budgets (`--max-minutes`) for SFT and RL: a stage stops cleanly, saves and returns
when its time is spent, so a job cut off by a scheduler still leaves a model and its metrics."""

from __future__ import annotations

import time
from typing import Any


class Budget:
    def __init__(self, minutes: float) -> None:
        self.seconds = 60.0 * minutes
        self.start = time.perf_counter()

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def fraction(self) -> float:
        """Share of the budget spent (0 without a budget)."""
        return self.elapsed / self.seconds if self.seconds > 0 else 0.0

    def spent(self, accelerator: Any = None, ahead: float = 0.0) -> bool:
        """True once `elapsed + ahead` (ahead: the expected length of the next unit of work)
        reaches the budget. Every process must agree to stop or a collective would hang: the
        first process past the budget stops them all."""
        if self.seconds <= 0:
            return False
        past = self.elapsed + ahead >= self.seconds
        if accelerator is None or accelerator.num_processes == 1:
            return past
        import torch

        flag = torch.tensor([float(past)], device=accelerator.device)
        return bool(accelerator.reduce(flag, reduction="max").item() > 0)

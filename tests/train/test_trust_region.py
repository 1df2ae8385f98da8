"""DRPO's trust region enforced on every update (train/update.py): a step that takes the policy
past KL(pi_old || pi) <= delta on its batch is halved until it is inside, or undone."""

from __future__ import annotations

import pytest
import torch

from drtriton.policy.hf import load_model
from drtriton.train.drpo import DRPOConfig, GRPOConfig
from drtriton.train.update import StepInputs, policy_update


def _batch(vocab: int) -> StepInputs:
    """Two groups of three rollouts, mixed correct and wrong with different speeds (a signal)."""
    gen = torch.Generator().manual_seed(0)
    seqs = [(torch.randint(4, vocab, (6,), generator=gen),
             torch.randint(4, vocab, (8,), generator=gen)) for _ in range(6)]  # fmt: skip
    return StepInputs(
        seqs,
        torch.tensor([True, True, False, True, False, False]),
        torch.tensor([0.3, 0.1, 0.0, 0.2, 0.0, 0.0]),
        torch.tensor([0, 0, 0, 1, 1, 1]),
    )


def _update(tiny_model, lr: float, backtracks: int, delta: float = 1e-3) -> dict[str, float]:
    from accelerate import Accelerator

    torch.manual_seed(0)
    model, tokenizer = load_model(str(tiny_model))
    accelerator = Accelerator(cpu=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model, optimizer = accelerator.prepare(model, optimizer)
    drpo = DRPOConfig(delta=delta, backtracks=backtracks)
    return policy_update(accelerator, model, optimizer, _batch(tokenizer.vocab_size), "drpo",
                         drpo, GRPOConfig(), pad_id=tokenizer.pad_token_id, micro_batch=4,
                         updates=1, max_grad_norm=1.0)  # fmt: skip


def test_a_step_past_the_bound_is_halved_into_the_trust_region(tiny_model) -> None:
    # A learning rate large enough that one AdamW step leaves the region by far.
    free = _update(tiny_model, lr=3e-2, backtracks=0)
    assert free["kl_after"] > 1e-3 and "step_scale" not in free
    held = _update(tiny_model, lr=3e-2, backtracks=12)
    assert held["kl_after"] <= 1e-3
    assert 0.0 < held["step_scale"] < 1.0  # halved, not undone


def test_a_step_inside_the_region_is_kept_whole(tiny_model) -> None:
    stats = _update(tiny_model, lr=1e-6, backtracks=6)
    assert stats["step_scale"] == 1.0 and stats["kl_after"] <= 1e-3


def test_a_step_that_halving_cannot_bring_inside_is_undone(tiny_model) -> None:
    # No halving allowed is "undo whenever outside"; a zero bound is never met by a real step.
    stats = _update(tiny_model, lr=3e-2, backtracks=1, delta=0.0)
    assert stats["step_scale"] == 0.0
    assert stats["kl_after"] == pytest.approx(0.0, abs=1e-9)  # the policy is pi_old again

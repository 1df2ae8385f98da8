"""One policy update on a batch of rollouts, in micro-batches, for DRPO or GRPO.

The DRPO loss does not split over sequences (a group's log-mean-exp couples its members), yet a
7B model cannot hold the graphs of G x P sequences at once. So each update runs in two passes:
a no-grad pass scores every sequence, the loss and its gradients with respect to the scores and
the KL are taken on those detached values, and a second pass back-propagates the linear
surrogate sum_i dL/ds_i * s_i + dL/dKL * KL micro-batch by micro-batch. Its gradient equals
the full loss's gradient exactly (chain rule), at the cost of one extra forward.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from drtriton.train.drpo import (
    DRPOConfig,
    GRPOConfig,
    drpo_loss,
    grpo_advantages,
    grpo_loss,
    sequence_scores,  # fmt: skip
)
from drtriton.train.rollout import token_logprobs


@dataclass
class StepInputs:
    seqs: list[tuple[Tensor, Tensor]]
    correct: Tensor  # [N] bool
    speed: Tensor  # [N] log speed-up (0 where unknown)
    groups: Tensor  # [N]


def _chunks(n: int, size: int) -> list[slice]:
    return [slice(i, min(n, i + size)) for i in range(0, n, max(1, size))]


def _logprobs(model: Any, inputs: StepInputs, parts: list[slice], pad_id: int, device: Any,
              grad: bool) -> list[tuple[Tensor, Tensor]]:  # fmt: skip
    with torch.set_grad_enabled(grad):
        return [token_logprobs(model, inputs.seqs[s], pad_id, device) for s in parts]


def _k3_sum(logp: Tensor, old: Tensor, mask: Tensor) -> Tensor:
    d = logp - old
    return ((torch.exp(d) - d - 1.0) * mask).sum()


def _tokens(old: list) -> float:
    return max(1.0, float(sum(m.sum() for _, m in old)))


def _kl_per_token(current: list, old: list) -> float:
    """KL(pi_old || pi) per completion token (the k3 estimator), from per-part log-probs."""
    total = sum(float(_k3_sum(c[0], o[0], o[1])) for c, o in zip(current, old, strict=True))
    return total / _tokens(old)


def drpo_backward(accelerator: Any, model: Any, inputs: StepInputs, old: list, parts: list,
                  cfg: DRPOConfig, pad_id: int, first: bool) -> dict[str, float]:  # fmt: skip
    device = accelerator.device
    current = old if first else _logprobs(model, inputs, parts, pad_id, device, grad=False)
    n_tokens = _tokens(old)
    scores = torch.cat([sequence_scores(lp, m) for lp, m in current]).detach().cpu()
    scores.requires_grad_(True)
    kl = torch.tensor(_kl_per_token(current, old), dtype=scores.dtype, requires_grad=True)
    loss, stats = drpo_loss(scores, inputs.correct, inputs.speed, inputs.groups, kl, cfg)
    g_scores, g_kl = torch.autograd.grad(loss, [scores, kl])
    stats["loss"] = float(loss.detach())
    if not bool(g_scores.any()) and float(g_kl) == 0.0:
        stats["skipped"] = 1.0  # nothing to learn from this batch: no forward with grad
        return stats
    for part, (old_lp, mask) in zip(parts, old, strict=True):
        logp, mask = token_logprobs(model, inputs.seqs[part], pad_id, device)
        s = sequence_scores(logp, mask)
        surrogate = (g_scores[part].to(s.device) * s).sum()
        surrogate = surrogate + float(g_kl) * _k3_sum(logp, old_lp, mask) / n_tokens
        accelerator.backward(surrogate)
    return stats


def grpo_backward(accelerator: Any, model: Any, inputs: StepInputs, old: list, parts: list,
                  cfg: GRPOConfig, pad_id: int) -> dict[str, float]:  # fmt: skip
    adv = grpo_advantages(inputs.correct, inputs.speed, inputs.groups, cfg)
    n = len(inputs.seqs)
    total = 0.0
    stats: dict[str, float] = {}
    if not bool(adv.any()):
        return {"loss": 0.0, "objective": 0.0, "kl": 0.0, "kl_penalty": 0.0,
                "groups_used": 0.0, "skipped": 1.0}  # fmt: skip
    for part, (old_lp, _) in zip(parts, old, strict=True):
        logp, mask = token_logprobs(model, inputs.seqs[part], pad_id, accelerator.device)
        loss, stats = grpo_loss(logp, old_lp, mask, adv[part].to(logp.device), cfg)
        scaled = loss * (part.stop - part.start) / n  # the batch mean over sequences
        accelerator.backward(scaled)
        total += float(scaled.detach())
    stats.update(loss=total, objective=-total,
                 groups_used=float(sum(bool(adv[inputs.groups == g].any())
                                       for g in torch.unique(inputs.groups))))  # fmt: skip
    return stats


def policy_update(accelerator: Any, model: Any, optimizer: Any, inputs: StepInputs,
                  loss: str, drpo: DRPOConfig, grpo: GRPOConfig, *, pad_id: int,
                  micro_batch: int, updates: int, max_grad_norm: float,
                  scheduler: Any = None) -> dict[str, float]:  # fmt: skip
    """`updates` optimizer steps on one batch of rollouts (the scheduler, if any, stepped after
    each); returns the last step's stats."""
    parts = _chunks(len(inputs.seqs), micro_batch)
    model.train()
    old = _logprobs(model, inputs, parts, pad_id, accelerator.device, grad=False)
    old = [(lp.detach(), m.float()) for lp, m in old]
    stats: dict[str, float] = {}
    enforce = loss == "drpo" and drpo.backtracks > 0
    scales: list[float] = []
    kl_kept: float | None = None  # the KL the last kept update left, measured by the check
    for u in range(updates):
        if loss == "drpo":
            stats = drpo_backward(accelerator, model, inputs, old, parts, drpo, pad_id, u == 0)
        else:
            stats = grpo_backward(accelerator, model, inputs, old, parts, grpo, pad_id)
        if stats.get("skipped"):
            break
        accelerator.clip_grad_norm_(model.parameters(), max_grad_norm)
        before = [p.detach().clone() for p in model.parameters()] if enforce else []
        optimizer.step()
        optimizer.zero_grad()
        if enforce:
            scale, kl_kept = _within_trust_region(accelerator, model, inputs, old, parts,
                                                  pad_id, before, drpo)  # fmt: skip
            scales.append(scale)
        if scheduler is not None:
            scheduler.step()
    if stats and not stats.get("skipped"):
        if kl_kept is None:  # no check ran, or the last update was undone
            kl_kept = _drift(model, inputs, old, parts, pad_id, accelerator.device, accelerator)
        stats["kl_after"] = kl_kept
        if scales:  # the share of each update kept: 1 inside the region, 2^-k, 0 undone
            stats["step_scale"] = min(scales)
    return stats


def _within_trust_region(accelerator: Any, model: Any, inputs: StepInputs, old: list,
                         parts: list, pad_id: int, before: list[Tensor],
                         cfg: DRPOConfig) -> tuple[float, float | None]:  # fmt: skip
    """Halves the update just taken (parameters `before` it) until KL(pi_old || pi) on the
    batch is within cfg.delta, at most cfg.backtracks times; past that the update is undone.
    Returns the share of the update kept and the KL it left (None when undone). The KL is every
    process's (the same decision on each, or their weights would part)."""
    device = accelerator.device
    scale = 1.0
    params = list(model.parameters())
    for k in range(cfg.backtracks + 1):
        kl = _drift(model, inputs, old, parts, pad_id, device, accelerator)
        if kl <= cfg.delta:
            return scale, kl
        if k == cfg.backtracks:
            break
        scale /= 2
        with torch.no_grad():
            for p, b in zip(params, before, strict=True):
                p.copy_(b + (p - b) * 0.5)
    with torch.no_grad():  # still outside: no step at all
        for p, b in zip(params, before, strict=True):
            p.copy_(b)
    return 0.0, None


def _drift(model: Any, inputs: StepInputs, old: list, parts: list, pad_id: int,
           device: Any, accelerator: Any = None) -> float:  # fmt: skip
    """KL(pi_old || pi) per token on the batch after the step's updates: how far the step
    moved the policy (the KL of the stats is measured before each update, 0 on the first);
    with `accelerator`, over every process's batch."""
    current = _logprobs(model, inputs, parts, pad_id, device, grad=False)
    total = sum(float(_k3_sum(c[0], o[0], o[1])) for c, o in zip(current, old, strict=True))
    tokens = float(sum(m.sum() for _, m in old))
    if accelerator is not None and accelerator.num_processes > 1:
        both = accelerator.reduce(torch.tensor([total, tokens], device=device), reduction="sum")
        total, tokens = float(both[0]), float(both[1])
    return total / max(1.0, tokens)

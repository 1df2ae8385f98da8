"""The DRPO loss (DRTriton, section 4) and GRPO for ablation, as pure functions of tensors.

DRPO is DisCO (discriminative constrained optimization) with DRTriton's decoupled speed reward.
For one prompt q with G rollouts o_1..o_G, split into correct C and incorrect I by the verifier:

    s(o)   = mean token log-probability of o under pi_theta                    (DisCO's "logL")
    r_s(o) = log(t_torch / t_triton)                                            (log speed-up)
    w(o)   = softmax over o in C of r_s(o) / lambda
    J(q)   = sum_{o in C} w(o) s(o)  -  tau * log( mean_{o in I} exp(s(o) / tau) )
    loss   = -mean_q J(q)  +  beta * max(KL(pi_old || pi_theta) - delta, 0)^2

with (beta, tau, lambda, delta) = (100, 5, 0.1, 0.001) by default (the paper's values).

How this departs from the papers (DisCO, arXiv 2505.12366; DRTriton, arXiv 2603.21465):
1. All-correct groups are kept when their kernels differ in speed. The released code drops groups
   whose rollouts are all correct, which removes the speed signal exactly where kernels are
   already right. Here such a group contrasts its own members: the negative term runs over C,
   J = sum_C w s - tau log mean_C exp(s / tau), whose gradient on s(o) is w(o) - softmax(s/tau)(o):
   kernels faster than the policy's current preference go up, slower ones down, and the
   gradient vanishes once the policy ranks them by speed. It is bounded (|grad| <= 1 per output)
   and never raises every likelihood at once. All-correct groups whose speed rewards are all equal
   (always so on a CPU, where the verifier cannot time) carry no signal and are dropped.
2. All-wrong groups are dropped (no positive to discriminate against; pushing down every sample
   alone mostly lowers likelihood of the format). `all_wrong="negatives"` keeps their negative
   term instead, for ablation.
3. A correct output with no timing (CPU verification, or a failed timing) gets r_s = 0; a
   non-finite r_s is clipped to [-speed_clip, speed_clip] (default 5, i.e. 148x) so that one
   suspicious timing cannot take the whole softmax weight.
4. KL(pi_old || pi_theta) is estimated on the rollout tokens (sampled from pi_old) with the
   non-negative k3 estimator  exp(d) - d - 1, d = log pi_theta - log pi_old, averaged over all
   completion tokens of the batch, so positive and negative per-token terms cannot cancel and
   hide a drift from the hinge. With one update per batch (the default) pi_old = pi_theta at the
   update, KL = 0 and the penalty is inactive on the first step; it matters with
   `updates_per_batch > 1`. So the trust region is also enforced after every update
   (update.py): the KL the step reached is measured on the batch, and a step past delta is
   halved until it is inside (at most `backtracks` times, else undone), TRPO's line search.
   On the H200 (2026-11-30) single DRPO updates at lr 2e-5 left KL at 0.002-0.0065 (2-6.5x
   delta) and at 5e-5 at 0.007-0.016, while held-out pass@1 fell from 13/32 to 8/32.
5. J is averaged over the groups that contribute (not over all prompts), so dropped groups do not
   shrink the step; the loss is 0 (with a zero gradient) when no group contributes.
6. No reference model and no entropy bonus (neither paper uses one for DRPO).
7. Timing noise: with `speed_margin` m > 0, correct outputs within m (in log speed-up) of the
   group's fastest count as equally fast: r_s is capped at max_C r_s - m before the softmax. The
   paper's lambda = 0.1 turns a 0.3 difference in log speed-up into a 20x weight, and timings
   of microsecond kernels on a busy host differ by more than that between two runs of one
   kernel (the H200 recipe measured 0.31x-1.06x for the same four kernels), so without the cap
   the weights pick one correct output at random and push the equally good others down. With
   the cap those share the weight; an all-correct group whose capped speeds are equal is
   dropped (departure 1). m = 0 (the default here) is the paper's weighting.
GRPO (the ablation, paper appendix H): sequence reward 1[correct] * (1 + speed_coef * r_s),
group-normalised advantages, PPO clipping at the token level, and no reference-model KL by
default (`ref_beta` > 0 with reference log-probabilities adds the k3 KL of appendix H).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass
class DRPOConfig:
    beta: float = 100.0  # weight of the squared-hinge KL penalty (paper: 100)
    tau: float = 5.0  # temperature of the log-mean-exp over incorrect outputs (paper: 5)
    lam: float = 0.1  # temperature lambda of the speed softmax over correct outputs (paper: 0.1)
    delta: float = 1e-3  # trust region: KL(pi_old || pi) <= delta (paper: 0.001)
    speed_clip: float = 5.0  # |log speed-up| cap (departure 3)
    all_wrong: str = "drop"  # "drop" | "negatives" (departure 2)
    speed_margin: float = 0.0  # log speed-ups this close to the fastest tie (departure 7)
    # Halvings of an update that leaves the trust region before it is undone (departure 4);
    # 0: the hinge penalty alone, as the paper.
    backtracks: int = 6


def sequence_scores(token_logp: Tensor, mask: Tensor) -> Tensor:
    """s(o): the mean log-probability of each sequence's completion tokens. [N, T] -> [N]."""
    mask = mask.to(token_logp.dtype)
    return (token_logp * mask).sum(-1) / mask.sum(-1).clamp_min(1.0)


def speed_weights(speed: Tensor, correct: Tensor, lam: float) -> Tensor:
    """w(o): softmax of r_s / lambda over the correct outputs, 0 on incorrect ones. [G] -> [G]."""
    logits = torch.where(correct, speed / lam, torch.full_like(speed, float("-inf")))
    if not bool(correct.any()):
        return torch.zeros_like(speed)
    return torch.softmax(logits, dim=-1)


def log_mean_exp(scores: Tensor, tau: float) -> Tensor:
    """tau * log mean exp(s / tau), computed stably; a smooth maximum of the scores."""
    n = torch.tensor(float(scores.numel()), dtype=scores.dtype)
    return tau * (torch.logsumexp(scores / tau, dim=-1) - torch.log(n))


def kl_penalty(kl: Tensor, beta: float, delta: float) -> Tensor:
    """beta * max(KL - delta, 0)^2: zero inside the trust region, smooth at its edge."""
    return beta * torch.clamp(kl - delta, min=0.0) ** 2


def k3_kl(token_logp: Tensor, old_token_logp: Tensor, mask: Tensor) -> Tensor:
    """KL(pi_old || pi) from tokens sampled under pi_old: mean of exp(d) - d - 1 (departure 4)."""
    d = token_logp - old_token_logp
    mask = mask.to(d.dtype)
    return ((torch.exp(d) - d - 1.0) * mask).sum() / mask.sum().clamp_min(1.0)


def clean_speed(speed: Tensor, correct: Tensor, clip: float) -> Tensor:
    speed = torch.nan_to_num(speed.to(torch.float32), nan=0.0, posinf=clip, neginf=-clip)
    return torch.where(correct, speed.clamp(-clip, clip), torch.zeros_like(speed))


def tie_near_fastest(speed: Tensor, correct: Tensor, margin: float) -> Tensor:
    """Caps the correct outputs' r_s at (fastest - margin): those within `margin` of the
    fastest become equal (departure 7). Incorrect outputs keep 0."""
    if margin <= 0 or not bool(correct.any()):
        return speed
    cap = speed[correct].max() - margin
    return torch.where(correct, torch.minimum(speed, cap), speed)


def group_objective(scores: Tensor, correct: Tensor, speed: Tensor,
                    cfg: DRPOConfig) -> Tensor | None:  # fmt: skip
    """J(q) for one group, or None when the group carries no signal (departures 1 and 2)."""
    correct = correct.bool()
    speed = clean_speed(speed, correct, cfg.speed_clip).to(scores.dtype)
    speed = tie_near_fastest(speed, correct, cfg.speed_margin)
    if not bool(correct.any()):
        if cfg.all_wrong == "negatives":
            return -log_mean_exp(scores, cfg.tau)
        return None
    w = speed_weights(speed, correct, cfg.lam)
    positive = (w * torch.where(correct, scores, torch.zeros_like(scores))).sum()
    if bool(correct.all()):
        if float(speed.max() - speed.min()) <= 1e-6:
            return None
        return positive - log_mean_exp(scores, cfg.tau)
    return positive - log_mean_exp(scores[~correct], cfg.tau)


def drpo_loss(scores: Tensor, correct: Tensor, speed: Tensor, groups: Tensor,
              kl: Tensor | None, cfg: DRPOConfig) -> tuple[Tensor, dict[str, float]]:  # fmt: skip
    """The DRPO loss over a batch of sequences. `groups[i]` names the prompt of sequence i.

    scores, correct, speed, groups: [N]; kl: a scalar estimate of KL(pi_old || pi) (or None).
    Returns (loss, stats) where stats holds plain floats for logging.
    """
    objectives = []
    for g in torch.unique(groups):
        sel = groups == g
        j = group_objective(scores[sel], correct[sel], speed[sel], cfg)
        if j is not None:
            objectives.append(j)
    if objectives:
        objective = torch.stack(objectives).mean()
    else:
        objective = scores.sum() * 0.0  # keeps the graph: a zero gradient, not an error
    loss = -objective
    penalty = kl_penalty(kl, cfg.beta, cfg.delta) if kl is not None else None
    if penalty is not None:
        loss = loss + penalty
    stats = {"objective": float(objective.detach()), "groups_used": float(len(objectives)),
             "kl": float(kl.detach()) if kl is not None else 0.0,
             "kl_penalty": float(penalty.detach()) if penalty is not None else 0.0}  # fmt: skip
    return loss, stats


@dataclass
class GRPOConfig:
    clip_eps: float = 0.2  # PPO ratio clipping
    speed_coef: float = 1.0  # reward = 1[correct] * (1 + speed_coef * r_s)
    ref_beta: float = 0.0  # KL to a reference model (appendix H); 0: none
    speed_clip: float = 5.0


def grpo_advantages(correct: Tensor, speed: Tensor, groups: Tensor, cfg: GRPOConfig) -> Tensor:
    """(r - mean_group r) / (std_group r + 1e-4) per sequence; 0 in groups of equal rewards."""
    correct = correct.bool()
    speed = clean_speed(speed, correct, cfg.speed_clip)
    reward = correct.float() * (1.0 + cfg.speed_coef * speed)
    adv = torch.zeros_like(reward)
    for g in torch.unique(groups):
        sel = groups == g
        r = reward[sel]
        std = r.std(unbiased=False) if r.numel() > 1 else torch.tensor(0.0)
        adv[sel] = (r - r.mean()) / (std + 1e-4)
    return adv


def grpo_loss(token_logp: Tensor, old_token_logp: Tensor, mask: Tensor, advantages: Tensor,
              cfg: GRPOConfig, ref_token_logp: Tensor | None = None
              ) -> tuple[Tensor, dict[str, float]]:  # fmt: skip
    """The clipped GRPO surrogate, token-mean per sequence, mean over sequences. [N, T] inputs."""
    mask = mask.to(token_logp.dtype)
    ratio = torch.exp(token_logp - old_token_logp)
    adv = advantages.to(token_logp.dtype).unsqueeze(-1)
    clipped = torch.clamp(ratio, 1 - cfg.clip_eps, 1 + cfg.clip_eps)
    per_token = -torch.minimum(ratio * adv, clipped * adv)
    if ref_token_logp is not None and cfg.ref_beta > 0:
        d = ref_token_logp - token_logp
        per_token = per_token + cfg.ref_beta * (torch.exp(d) - d - 1.0)
    per_seq = (per_token * mask).sum(-1) / mask.sum(-1).clamp_min(1.0)
    loss = per_seq.mean()
    return loss, {"objective": float(-loss.detach()), "kl": 0.0, "kl_penalty": 0.0,
                  "groups_used": float(torch.unique(advantages.nonzero()).numel())}  # fmt: skip

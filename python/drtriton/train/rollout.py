"""Rollouts and their token log-probabilities under the current policy.

A rollout is kept as (prompt ids, completion ids), exactly the tokens that were sampled, so that
the training forward scores the same sequence the sampler produced (re-tokenising decoded text
can split it differently).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from drtriton.policy.base import Completion


@dataclass
class Rollouts:
    records: list[dict[str, Any]]  # one per prompt
    completions: list[Completion]  # G per prompt, prompt-major
    seqs: list[tuple[Tensor, Tensor]]  # (prompt ids, completion ids) per completion
    groups: Tensor  # [N] index of the prompt of each completion


def sample(policy: Any, records: list[dict[str, Any]], prompts: list[str], n: int) -> Rollouts:
    groups, raw = policy.generate_ids(prompts, n)
    completions = [c for g in groups for c in g]
    index = torch.arange(len(records)).repeat_interleave(n)
    return Rollouts(records, completions, raw, index)


def token_logprobs(model: Any, seqs: list[tuple[Tensor, Tensor]], pad_id: int,
                   device: Any) -> tuple[Tensor, Tensor]:  # fmt: skip
    """log pi(token) of each completion token: ([m, T], mask [m, T]), T the longest completion.

    Only the completion slice of the logits goes through log_softmax: with a 150k vocabulary
    the full [m, L, V] tensor would dominate memory.
    """
    width = max(len(p) + len(g) for p, g in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    attn = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, (p, g) in enumerate(seqs):
        row = torch.cat([p, g])
        ids[i, : len(row)] = row
        attn[i, : len(row)] = 1
    logits = model(input_ids=ids.to(device), attention_mask=attn.to(device)).logits
    longest = max(1, max(len(g) for _, g in seqs))
    out = torch.zeros((len(seqs), longest), dtype=torch.float32, device=logits.device)
    mask = torch.zeros((len(seqs), longest), dtype=torch.bool, device=logits.device)
    for i, (p, g) in enumerate(seqs):
        if len(g) == 0:
            continue
        start = len(p) - 1  # the logits at position t predict token t + 1
        rows = logits[i, start : start + len(g)].float().log_softmax(-1)
        out[i, : len(g)] = rows.gather(-1, g.to(rows.device)[:, None]).squeeze(-1)
        mask[i, : len(g)] = True
    return out, mask

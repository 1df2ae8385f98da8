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


class ServerRollouts:
    """Rollouts from an inference server (vLLM, SGLang) through any text policy, e.g.
    OpenAIPolicy: the texts are tokenized with the trainer's tokenizer to give the
    (prompt ids, completion ids) the update scores. Two departures from in-process sampling:
    re-tokenizing decoded text may split it differently from the server's own sampling, and the
    server serves the weights of its last sync (`--sync-every`), so rollouts may be a few steps
    stale; DRPO's KL(pi_old || pi) term is taken against the trainer's weights at rollout time.
    """

    def __init__(self, policy: Any, tokenizer: Any) -> None:
        self.policy = policy
        self.tokenizer = tokenizer
        self.name = getattr(policy, "name", "server")

    def generate(self, prompts: list[str], n: int = 1) -> list[list[Completion]]:
        return self.policy.generate(prompts, n)

    def generate_ids(self, prompts: list[str], n: int) -> tuple[list[list[Completion]], list]:
        from drtriton.policy.hf import render_prompt

        tok = self.tokenizer
        groups = self.policy.generate(prompts, n)
        raw = []
        for prompt, group in zip(prompts, groups, strict=True):
            ids = tok(render_prompt(tok, prompt), add_special_tokens=False)["input_ids"]
            for c in group:
                gen = tok(c.text, add_special_tokens=False)["input_ids"]
                if c.finish_reason == "stop" and tok.eos_token_id is not None:
                    gen = [*gen, tok.eos_token_id]  # the server stopped on EOS: score it too
                c.prompt_tokens, c.completion_tokens = len(ids), len(gen)
                raw.append(
                    (torch.tensor(ids, dtype=torch.long), torch.tensor(gen, dtype=torch.long))
                )
        return groups, raw


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

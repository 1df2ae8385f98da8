"""Rollouts from an inference server (ServerRollouts): texts re-tokenized with the trainer's
tokenizer into the (prompt ids, completion ids) the DRPO update scores."""

import torch

from drtriton.policy.base import Completion
from drtriton.policy.hf import load_model, render_prompt
from drtriton.train.rollout import ServerRollouts, sample, token_logprobs


class FakeServer:
    name = "fake-server"

    def __init__(self):
        self.asked = []

    def generate(self, prompts, n=1):
        self.asked.append((list(prompts), n))
        reasons = ["stop", "length"] * n  # alternate: stopped on EOS, cut at the length limit
        return [[Completion(f"<triton_code>\nx = {i}\n</triton_code>", finish_reason=reasons[i])
                 for i in range(n)] for _ in prompts]  # fmt: skip


def test_server_rollouts_are_retokenized(tiny_model):
    model, tok = load_model(tiny_model)
    server = FakeServer()
    rollouts = sample(
        ServerRollouts(server, tok), [{"id": "a"}, {"id": "b"}], ["p one", "p two"], 2
    )
    assert server.asked == [(["p one", "p two"], 2)]
    assert rollouts.groups.tolist() == [0, 0, 1, 1] and len(rollouts.seqs) == 4
    prompt_ids, gen = rollouts.seqs[0]
    assert (
        prompt_ids.tolist()
        == tok(render_prompt(tok, "p one"), add_special_tokens=False)["input_ids"]
    )
    # A completion that stopped ends with EOS (it is scored too); one cut at the length does not.
    assert gen[-1].item() == tok.eos_token_id and rollouts.seqs[1][1][-1].item() != tok.eos_token_id
    assert tok.decode(gen[:-1]) == rollouts.completions[0].text
    assert rollouts.completions[0].code.strip() == "x = 0" and rollouts.completions[
        0
    ].completion_tokens == len(gen)
    logp, mask = token_logprobs(model, rollouts.seqs, tok.pad_token_id, torch.device("cpu"))
    assert mask.sum().item() == sum(len(g) for _, g in rollouts.seqs) and (logp <= 0).all()

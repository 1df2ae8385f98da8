"""The decode loop (policy/decode.py) against transformers' generate on a tiny random Qwen2:
greedy tokens identical, groups of n, EOS handling, nucleus sampling's kept set."""

from __future__ import annotations

import pytest
import torch

from drtriton.policy.decode import decode, pick_tokens
from drtriton.policy.hf import HFPolicy, SamplingConfig

from .conftest import PROMPTS, tiny_qwen


@pytest.fixture(scope="module")
def tiny():
    return tiny_qwen()


def _ids(policy: HFPolicy, n: int) -> list[list[int]]:
    _, raw = policy.generate_ids(PROMPTS, n)
    return [g.tolist() for _, g in raw]


def test_greedy_loop_matches_generate(tiny):
    model, tok = tiny
    loop = _ids(HFPolicy(model, tok, SamplingConfig(0.0, 1.0, 24, engine="loop")), 1)
    ref = _ids(HFPolicy(model, tok, SamplingConfig(0.0, 1.0, 24, engine="hf")), 1)
    assert loop == ref and all(len(x) > 0 for x in loop)


def _decode(model, tok, n: int, static: bool, temperature: float = 0.0) -> torch.Tensor:
    tok.padding_side = "left"
    batch = tok(PROMPTS, return_tensors="pt", padding=True, add_special_tokens=False)
    stops = {tok.eos_token_id}
    with torch.inference_mode():
        return decode(model, batch["input_ids"], batch["attention_mask"], n, 20, temperature,
                      1.0, stops, tok.pad_token_id, static=static)  # fmt: skip


def test_static_cache_steps_match_the_growing_cache(tiny):
    """The GPU path's preallocated cache and 4-D masks (run eagerly here: no CUDA graph on a
    CPU) give the same greedy tokens as the growing cache, left padding included."""
    model, tok = tiny
    for n in (1, 2):
        static, dynamic = _decode(model, tok, n, True), _decode(model, tok, n, False)
        assert static.shape == dynamic.shape and torch.equal(static, dynamic)
    # Sampling draws the same tokens from the same logits and seed.
    torch.manual_seed(3)
    sampled_static = _decode(model, tok, 2, True, 1.0)
    torch.manual_seed(3)
    assert torch.equal(sampled_static, _decode(model, tok, 2, False, 1.0))


def test_static_cache_under_autocast_keeps_each_dtype(tiny):
    """RL samples its fp32 policy under bf16 autocast, where the keys leave the rotary embedding
    in fp32 and the values stay bf16: the static cache holds each in its own dtype."""
    model, tok = tiny
    with torch.autocast("cpu", dtype=torch.bfloat16):
        static, dynamic = _decode(model, tok, 2, True), _decode(model, tok, 2, False)
    assert static.shape == dynamic.shape
    assert torch.equal(static[:, :-8], dynamic[:, :-8])  # bf16 may split a late near-tie


def test_groups_share_one_prompt_prefill(tiny):
    model, tok = tiny
    policy = HFPolicy(model, tok, SamplingConfig(0.0, 1.0, 16, engine="loop"))
    groups, raw = policy.generate_ids(PROMPTS, 3)
    assert [len(g) for g in groups] == [3, 3, 3] and len(raw) == 9
    for j, prompt in enumerate(PROMPTS):  # greedy: the n copies of a prompt agree
        copies = [raw[j * 3 + k][1].tolist() for k in range(3)]
        assert copies[0] == copies[1] == copies[2]
        assert raw[j * 3][0].tolist() == tok(prompt, add_special_tokens=False)["input_ids"]
    sampled = HFPolicy(model, tok, SamplingConfig(1.0, 1.0, 16, engine="loop"))
    torch.manual_seed(0)
    _, raw = sampled.generate_ids(PROMPTS[:1], 4)
    assert len({tuple(g.tolist()) for _, g in raw}) > 1  # sampled copies differ


def test_eos_ends_a_row_and_pads_the_rest(tiny):
    model, tok = tiny
    eos = tok.eos_token_id

    # Make EOS the greedy choice everywhere: every completion is exactly [EOS].
    def force_eos(_module, _inputs, logits):
        logits[..., eos] = 1e4
        return logits

    hook = model.lm_head.register_forward_hook(force_eos)
    try:
        policy = HFPolicy(model, tok, SamplingConfig(0.0, 1.0, 16, engine="loop"))
        groups, raw = policy.generate_ids(PROMPTS, 2)
    finally:
        hook.remove()
    assert all(g.tolist() == [eos] for _, g in raw)
    assert all(c.finish_reason == "stop" and c.text == "" for g in groups for c in g)


def test_max_new_tokens_sets_length_finish(tiny):
    model, tok = tiny
    groups, raw = HFPolicy(model, tok, SamplingConfig(1.0, 1.0, 5)).generate_ids(PROMPTS, 2)
    for (_, g), c in zip(raw, [c for grp in groups for c in grp], strict=True):
        assert len(g) <= 5 and (c.finish_reason == "length") == (len(g) == 5)


def test_pick_tokens_greedy_and_nucleus():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05], [0.05, 0.05, 0.1, 0.8]]))
    assert pick_tokens(logits, 0.0, 1.0).tolist() == [0, 3]
    torch.manual_seed(0)
    # top_p 0.7: row 0 keeps {0, 1} (0.5 < 0.7, 0.8 >= 0.7), row 1 keeps {3} alone.
    seen = {tuple(pick_tokens(logits, 1.0, 0.7).tolist()) for _ in range(200)}
    assert {a for a, _ in seen} == {0, 1} and {b for _, b in seen} == {3}
    seen = {pick_tokens(logits, 1.0, 1.0)[0].item() for _ in range(400)}
    assert seen == {0, 1, 2, 3}


def test_unknown_engine_is_a_user_error(tiny):
    from drtriton.errors import UserError

    model, tok = tiny
    with pytest.raises(UserError, match="engine"):
        HFPolicy(model, tok, SamplingConfig(engine="vllm")).generate_ids(PROMPTS, 1)

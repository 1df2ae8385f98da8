"""The decode loop's GPU path (policy/decode.py StaticSteps: preallocated cache, each step
replayed from a CUDA graph) against the growing-cache path, on a tiny random Qwen2."""

from __future__ import annotations

import warnings

import pytest
import torch

from drtriton.policy.decode import StaticSteps, decode

from .conftest import PROMPTS as ALL_PROMPTS
from .conftest import tiny_qwen

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

PROMPTS = ALL_PROMPTS[:2]


@pytest.fixture(scope="module")
def tiny():
    model, tok = tiny_qwen(64)
    return model.cuda(), tok


def _run(model, tok, n: int, static: bool) -> torch.Tensor:
    tok.padding_side = "left"
    batch = tok(PROMPTS, return_tensors="pt", padding=True, add_special_tokens=False).to("cuda")
    with torch.inference_mode():
        return decode(model, batch["input_ids"], batch["attention_mask"], n, 40, 0.0, 1.0,
                      {tok.eos_token_id}, tok.pad_token_id, static=static)  # fmt: skip


def test_graph_replay_matches_the_growing_cache(tiny):
    model, tok = tiny
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a failed capture (eager fallback) fails the test
        graphed = _run(model, tok, 3, True)
    assert torch.equal(graphed, _run(model, tok, 3, False))


def test_the_step_is_captured_once(tiny, monkeypatch):
    model, tok = tiny
    captures = []
    original = StaticSteps._capture

    def counted(self):
        captures.append(1)
        original(self)
        assert self.graph is not None

    monkeypatch.setattr(StaticSteps, "_capture", counted)
    _run(model, tok, 1, True)
    assert captures == [1]


def test_fp32_policy_under_autocast_is_graphed(tiny):
    """RL samples its fp32 weights under bf16 autocast: keys (fp32 after the rotary
    embedding) and values (bf16) share the promoted cache, and the step is still captured."""
    model, tok = tiny
    with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            graphed = _run(model, tok, 2, True)
        dynamic = _run(model, tok, 2, False)
    assert graphed.shape == dynamic.shape
    assert torch.equal(graphed[:, :-16], dynamic[:, :-16])  # bf16 may split a late near-tie

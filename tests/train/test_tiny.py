import torch

from drtriton.policy import HFPolicy, SamplingConfig, prompt_for
from drtriton.policy.hf import load_model
from drtriton.train.tiny import TinyConfig, corpus_from_records, make_tiny

TASK = "import torch\n\ndef fused_operator(x0):\n    t0 = torch.relu(x0)\n    return t0\n"


def test_round_trip_and_sampling(tmp_path):
    texts = corpus_from_records([{"source": TASK, "completion": "import triton\n"}])
    path = make_tiny(texts, tmp_path / "tiny", TinyConfig(vocab_size=400))
    model, tok = load_model(path)
    assert type(model).__name__ == "Qwen2ForCausalLM"
    assert model.config.num_hidden_layers == 2 and model.config.hidden_size == 64
    assert tok.decode(tok(TASK)["input_ids"]) == TASK  # byte-level: lossless
    again, _ = load_model(path)
    for a, b in zip(model.parameters(), again.parameters(), strict=True):
        assert torch.equal(a, b)
    policy = HFPolicy(model, tok, SamplingConfig(max_new_tokens=8, temperature=1.0))
    groups = policy.generate([prompt_for(TASK), "short"], n=3)
    assert [len(g) for g in groups] == [3, 3]
    assert all(0 < c.completion_tokens <= 8 for g in groups for c in g)
    assert groups[0][0].prompt_tokens > groups[1][0].prompt_tokens


def test_chat_template_is_used_when_present(tmp_path):
    from drtriton.policy.hf import render_prompt

    path = make_tiny([TASK], tmp_path / "tiny", TinyConfig(vocab_size=300))
    _, tok = load_model(path)
    assert render_prompt(tok, "hi") == "hi"  # a base model sees the raw prompt
    tok.chat_template = "{% for m in messages %}<user>{{ m['content'] }}{% endfor %}<bot>"
    assert render_prompt(tok, "hi") == "<user>hi<bot>"
    assert render_prompt(tok, "hi", chat=False) == "hi"

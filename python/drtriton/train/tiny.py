"""Tiny models for tests and demos: a byte-level BPE tokenizer trained on our own corpus and a
small Qwen2-architecture model built from a config, saved in the Hugging Face layout so that
SFT, RL and HFPolicy load it through the same `from_pretrained` path as a real checkpoint.

No weights are downloaded anywhere: the model starts from random initialisation. Its outputs
are garbage until trained; the point is to exercise every code path on a CPU in seconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EOS = "<|endoftext|>"
PAD = "<|pad|>"


@dataclass
class TinyConfig:
    vocab_size: int = 1024  # BPE merges learnt up to this size (bytes + merges + specials)
    hidden_size: int = 64
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2  # grouped-query attention, as in Qwen2
    intermediate_size: int = 128
    max_positions: int = 4096  # prompts (the synthetic one is ~600 tokens) plus completions
    seed: int = 0


def train_tokenizer(texts: Iterable[str], vocab_size: int = 1024) -> Any:
    """A byte-level BPE tokenizer (every string encodable) as a PreTrainedTokenizerFast."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOS, PAD],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=PAD)


def build_model(tokenizer: Any, cfg: TinyConfig) -> Any:
    """A randomly initialised Qwen2ForCausalLM sized by `cfg`."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(cfg.seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.heads,
        num_key_value_heads=cfg.kv_heads,
        max_position_embeddings=cfg.max_positions,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
    return Qwen2ForCausalLM(config)


def make_tiny(texts: Iterable[str], out: str | Path, cfg: TinyConfig | None = None) -> Path:
    """Train the tokenizer on `texts`, build the model, save both to `out`; returns `out`."""
    cfg = cfg or TinyConfig()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(texts, cfg.vocab_size)
    model = build_model(tokenizer, cfg)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def corpus_from_records(records: Iterable[dict[str, Any]]) -> list[str]:
    """Training text for the tokenizer: every prompt and completion in program/pair records."""
    from drtriton.policy.prompts import prompt_for

    texts = []
    for record in records:
        texts.append(prompt_for(record))
        if record.get("completion"):
            texts.append(record["completion"])
    return texts

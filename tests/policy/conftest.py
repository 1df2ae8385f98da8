"""Shared pieces of the decode-loop tests: prompts and a tiny random Qwen2 with its tokenizer."""

from __future__ import annotations

from typing import Any

PROMPTS = [
    "import torch\n\ndef fused_operator(x0):\n    t0 = torch.relu(x0)\n    return t0\n",
    "def f(x):\n    return x",  # shorter: left padding in the batch
    "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, n):\n",
]


def tiny_qwen(width: int = 32) -> tuple[Any, Any]:
    """(model in eval mode, tokenizer): 2 layers, vocabulary 300, trained on PROMPTS."""
    from drtriton.train.tiny import TinyConfig, build_model, train_tokenizer

    tok = train_tokenizer(PROMPTS * 4, 300)
    model = build_model(tok, TinyConfig(vocab_size=300, hidden_size=width, layers=2, heads=2,
                                        kv_heads=1, intermediate_size=2 * width))  # fmt: skip
    return model.eval(), tok

"""Records to training text: JSONL reading, prompts and targets, tokenisation with prompt masking.

A pair record (DESIGN.md "Datasets") becomes (prompt, target): the prompt is the template of
policy/prompts.py for its task, the target the teacher's candidate wrapped the way that prompt
asks for (<triton_code> tags for functional tasks, a ```python block for module tasks) and
ended by EOS, so that a trained model stops and its answer extracts cleanly.
"""

from __future__ import annotations

from typing import Any

from drtriton.errors import UserError
from drtriton.policy.hf import render_prompt
from drtriton.policy.prompts import is_module_task, prompt_for

IGNORE = -100  # label of tokens that carry no loss (the prompt, the padding)


def usable_pair(record: dict[str, Any]) -> bool:
    """A pair worth imitating: it has a completion and no verdict that rejects it."""
    return bool(record.get("completion")) and record.get("correct", True) is not False


def target_text(record: dict[str, Any]) -> str:
    code = record["completion"].strip("\n") + "\n"
    if is_module_task(record["source"]):
        return f"```python\n{code}```"
    return f"<triton_code>\n{code}</triton_code>"


def encode_pair(tokenizer: Any, prompt: str, target: str, max_len: int) -> dict[str, list[int]]:
    """input_ids and labels, the prompt's labels masked; the target is cut at `max_len`."""
    prompt_ids = tokenizer(render_prompt(tokenizer, prompt), add_special_tokens=False)["input_ids"]
    target_ids = tokenizer(target, add_special_tokens=False)["input_ids"]
    target_ids = [*target_ids, tokenizer.eos_token_id]
    if len(prompt_ids) >= max_len:
        raise UserError(f"a prompt of {len(prompt_ids)} tokens does not fit max_len={max_len}")
    ids = (prompt_ids + target_ids)[:max_len]
    labels = ([IGNORE] * len(prompt_ids) + target_ids)[:max_len]
    return {"input_ids": ids, "labels": labels}


def encode_records(tokenizer: Any, records: list[dict[str, Any]], max_len: int) -> list[dict]:
    return [encode_pair(tokenizer, prompt_for(r), target_text(r), max_len) for r in records]


def collate(batch: list[dict[str, list[int]]], pad_id: int) -> dict[str, Any]:
    """Right-padded tensors: input_ids, attention_mask, labels (padding masked)."""
    import torch

    width = max(len(b["input_ids"]) for b in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), IGNORE, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for i, b in enumerate(batch):
        n = len(b["input_ids"])
        ids[i, :n] = torch.tensor(b["input_ids"])
        labels[i, :n] = torch.tensor(b["labels"])
        mask[i, :n] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}

"""HFPolicy: a transformers causal LM from a local checkpoint, batched sampling.

Prompts are left-padded into one batch (decoder-only models continue from the right) and each is
sampled `n` times. The default engine is drtriton's decode loop (policy/decode.py: on a GPU a
preallocated KV cache and one CUDA graph per step, elsewhere one prefill per prompt and a
growing cache; fewer host syncs); `"loop-dynamic"` forces the growing cache; `engine="hf"` is
transformers' `generate` with `num_return_sequences`, and `"hf-static"` the same with a static cache, which transformers
compiles on a GPU (CUDA graphs: worth it for long runs, a compile for every new batch shape).
Generation runs under `torch.inference_mode`; on CUDA, fp32 weights (the RL policy being trained)
sample under bf16 autocast. When the tokenizer has a chat template, the prompt is sent as one
user message; a base model (no template) sees the raw prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drtriton.errors import UserError
from drtriton.policy.base import Completion


@dataclass
class SamplingConfig:
    temperature: float = 1.0  # 0 means greedy
    top_p: float = 1.0
    max_new_tokens: int = 1024
    batch_size: int = 8  # prompts per generate() call; each expands to n sequences
    engine: str = "loop"  # loop | loop-dynamic | hf | hf-static (module docstring)


ENGINES = ("loop", "loop-dynamic", "hf", "hf-static")


def render_prompt(tokenizer: Any, prompt: str, chat: bool | None = None) -> str:
    """The text the model sees: the chat template if there is one (and `chat` is not False)."""
    use_chat = chat if chat is not None else bool(getattr(tokenizer, "chat_template", None))
    if not use_chat:
        return prompt
    messages = [{"role": "user", "content": prompt}]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def load_model(path: str | Path, dtype: str = "auto", device: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) from a local checkpoint directory; never touches the network."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not Path(path).is_dir():
        raise UserError(f"model checkpoint {path} is not a directory")
    try:  # a directory that is not a whole checkpoint (no tokenizer, an empty config.json)
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype, local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        reason = " ".join(str(exc).split())[:300]
        raise UserError(f"model checkpoint {path} cannot be loaded: {reason}") from None
    if device:
        model.to(device)
    return model, tokenizer


class HFPolicy:
    def __init__(self, model: Any, tokenizer: Any, sampling: SamplingConfig | None = None,
                 chat: bool | None = None, name: str = "hf") -> None:  # fmt: skip
        self.model = model
        self.tokenizer = tokenizer
        self.sampling = sampling or SamplingConfig()
        self.chat = chat
        self.name = name
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token

    @classmethod
    def from_pretrained(cls, path: str | Path, sampling: SamplingConfig | None = None,
                        device: str | None = None, **kwargs: Any) -> HFPolicy:  # fmt: skip
        model, tokenizer = load_model(path, device=device)
        return cls(model, tokenizer, sampling, name=str(path), **kwargs)

    def generate(self, prompts: list[str], n: int = 1) -> list[list[Completion]]:
        out: list[list[Completion]] = []
        step = max(1, self.sampling.batch_size)
        for i in range(0, len(prompts), step):
            out.extend(self.generate_ids(prompts[i : i + step], n)[0])
        return out

    def generate_ids(self, prompts: list[str], n: int) -> tuple[list[list[Completion]], Any]:
        """Completions plus the raw (prompt ids, completion ids) per sequence, for training."""
        tok = self.tokenizer
        texts = [render_prompt(tok, p, self.chat) for p in prompts]
        tok.padding_side = "left"
        batch = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        batch = {k: v.to(self.model.device) for k, v in batch.items()}
        was_training = self.model.training
        self.model.eval()
        try:
            seqs = self._sample(batch, n)
        finally:
            self.model.train(was_training)
        width = batch["input_ids"].shape[1]
        prompt_mask = batch["attention_mask"].repeat_interleave(n, dim=0)
        # One transfer, not one per row; the copy is a normal tensor (an inference-mode one
        # could not be saved for backward when RL scores these ids).
        seqs = seqs.to("cpu", copy=True)
        groups: list[list[Completion]] = []
        raw = []
        for j in range(len(prompts)):
            group = []
            for k in range(n):
                row = j * n + k
                prompt_ids = batch["input_ids"][j][prompt_mask[row].bool()].cpu()
                gen = _trim(seqs[row, width:], tok)
                text = tok.decode(gen, skip_special_tokens=True)
                finish = "length" if len(gen) >= self.sampling.max_new_tokens else "stop"
                group.append(Completion(text, len(prompt_ids), len(gen), finish))
                raw.append((prompt_ids, gen))
            groups.append(group)
        return groups, raw

    def _sample(self, batch: dict[str, Any], n: int) -> Any:
        """[len(prompts) * n, width + new] token ids, prompt-major, as `generate` returns them."""
        import contextlib

        import torch

        s, tok = self.sampling, self.tokenizer
        if s.engine not in ENGINES:
            raise UserError(
                f"sampling engine must be one of {', '.join(ENGINES)}, not {s.engine!r}"
            )
        device = batch["input_ids"].device
        # bf16 halves the bytes each step reads; fp32 weights (RL's trained copy) sample under
        # autocast rather than being cast, so the optimizer's master weights stay untouched.
        fp32 = next(self.model.parameters()).dtype == torch.float32
        # No cast cache: a CUDA graph replays the casts, reading the weights as they are then.
        amp = (torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False)
               if device.type == "cuda" and fp32 else contextlib.nullcontext())  # fmt: skip
        with torch.inference_mode(), amp:
            if s.engine.startswith("loop"):
                from drtriton.policy.decode import decode

                stops = {tok.eos_token_id, tok.pad_token_id} - {None}
                static = False if s.engine == "loop-dynamic" else None
                return decode(self.model, batch["input_ids"], batch["attention_mask"], n,
                              s.max_new_tokens, s.temperature, s.top_p, stops,
                              tok.pad_token_id, static=static)  # fmt: skip
            greedy = s.temperature <= 0
            kwargs: dict[str, Any] = {"do_sample": not greedy, "max_new_tokens": s.max_new_tokens,
                                      "num_return_sequences": n, "pad_token_id": tok.pad_token_id,
                                      "eos_token_id": tok.eos_token_id}  # fmt: skip
            if not greedy:
                kwargs.update(temperature=s.temperature, top_p=s.top_p, top_k=0)
            if s.engine == "hf-static":
                kwargs["cache_implementation"] = "static"
            return self.model.generate(**batch, **kwargs)


def _trim(ids: Any, tok: Any) -> Any:
    """Completion ids up to and including the first EOS (padding after it dropped)."""
    stops = {tok.eos_token_id, tok.pad_token_id} - {None}
    for i, t in enumerate(ids.tolist()):
        if t in stops:
            return ids[: i + 1] if t == tok.eos_token_id else ids[:i]
    return ids

"""A lean batched decode loop for HFPolicy: one prefill per prompt, then one forward per token.

Why not `model.generate`: on small models every decode step is bound by per-step overhead, not
by arithmetic, and transformers' generate adds ~2 ms of Python per step (logits processors,
stopping criteria, input preparation, a host sync). Measured on a CPU with a 2-layer width-64
Qwen2, 8 prompts: 5.1 ms per step through generate, 3.2 ms through this loop
(benchmarks/generation_throughput.py). What the loop does:
- on a CPU (DynamicSteps), each prompt is prefilled once and its KV cache repeated `n` times
  (generate with num_return_sequences prefills every copy: n times the prompt compute);
- on a GPU (StaticSteps), the cache is preallocated and each step replays one CUDA graph, so
  the step costs the same whatever else loads the host's cores;
- position ids count real tokens only, so left padding shifts nothing;
- the attention mask is allocated once for the whole run;
- whether every sequence has finished is checked every `check_every` steps (one host sync
  each), not after every token;
- sampling: temperature, then nucleus (top-p) over the sorted distribution, as transformers'
  TopPLogitsWarper keeps the smallest set of tokens whose probability reaches `top_p`;
  temperature 0 is greedy (argmax).
Finished rows keep stepping (a static batch) and their tokens are replaced by padding.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor


def pick_tokens(logits: Tensor, temperature: float, top_p: float,
                generator: torch.Generator | None = None) -> Tensor:  # fmt: skip
    """One token per row of `logits` [B, V]: greedy when temperature <= 0, else sampled."""
    if temperature <= 0:
        return logits.argmax(-1)
    probs = (logits.float() / temperature).softmax(-1)
    if top_p < 1.0:
        sorted_p, order = probs.sort(-1, descending=True)
        # Drop a token when the more likely ones already reach top_p (the first always stays).
        drop = (sorted_p.cumsum(-1) - sorted_p) >= top_p
        sorted_p = sorted_p.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter_(-1, order, sorted_p)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def decode(model: Any, input_ids: Tensor, attention_mask: Tensor, n: int, max_new_tokens: int,
           temperature: float, top_p: float, stop_ids: set[int], pad_id: int,
           check_every: int = 8, static: bool | None = None) -> Tensor:  # fmt: skip
    """[B * n, L + T] like `generate`'s output: each prompt (left-padded, length L) repeated n
    times, prompt-major, followed by its T <= max_new_tokens new tokens; a row ends at its first
    stop id and is padded with `pad_id` after it. `static` (default: on CUDA) decodes into a
    preallocated cache with each step replayed from a CUDA graph (see StaticSteps)."""
    device = input_ids.device
    if static is None:
        static = device.type == "cuda"
    steps_of = StaticSteps if static else DynamicSteps
    stepper = steps_of(model, input_ids, attention_mask, n, max_new_tokens)
    logits = stepper.first_logits
    rows = input_ids.shape[0] * n
    stops = torch.tensor(sorted(stop_ids), dtype=torch.long, device=device)
    new = torch.full((rows, max_new_tokens), pad_id, dtype=torch.long, device=device)
    finished = torch.zeros(rows, dtype=torch.bool, device=device)
    steps = 0
    for t in range(max_new_tokens):
        token = pick_tokens(logits, temperature, top_p).masked_fill(finished, pad_id)
        new[:, t] = token
        finished |= torch.isin(token, stops)
        steps = t + 1
        if t + 1 == max_new_tokens or ((t + 1) % check_every == 0 and bool(finished.all())):
            break
        logits = stepper.advance(token, t)
    return torch.cat([input_ids.repeat_interleave(n, dim=0), new[:, :steps]], dim=1)


class DynamicSteps:
    """A growing cache: each prompt prefilled once and its cache repeated n times; the
    attention mask is allocated once for the whole run and sliced per step."""

    def __init__(self, model: Any, input_ids: Tensor, attention_mask: Tensor, n: int,
                 max_new_tokens: int) -> None:  # fmt: skip
        from transformers import DynamicCache

        self.model, self.cache = model, DynamicCache()
        batch, self.width = input_ids.shape
        positions = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)
        out = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=positions,
                    past_key_values=self.cache, use_cache=True, logits_to_keep=1)  # fmt: skip
        self.first_logits = out.logits[:, -1].repeat_interleave(n, dim=0)
        if n > 1:
            self.cache.batch_repeat_interleave(n)
        self.mask = torch.ones((batch * n, self.width + max_new_tokens),
                               dtype=attention_mask.dtype, device=input_ids.device)  # fmt: skip
        self.mask[:, : self.width] = attention_mask.repeat_interleave(n, dim=0)
        self.position = positions[:, -1:].repeat_interleave(n, dim=0)

    def advance(self, token: Tensor, t: int) -> Tensor:
        self.position = self.position + 1
        out = self.model(input_ids=token[:, None], attention_mask=self.mask[:, : self.width + t + 1],
                         position_ids=self.position, past_key_values=self.cache,
                         use_cache=True)  # fmt: skip
        return out.logits[:, -1]


class StaticSteps:
    """A preallocated cache (transformers' StaticCache, prompt + max_new_tokens slots) and
    every decode step replayed from one CUDA graph on a GPU.

    Why: a small model's decode step is a few hundred tiny kernels, so its speed is the host's
    launch rate. On the H200 host the recipe's loop ran 8-12 ms per step alone but 57-67 ms
    while the evaluation's processes loaded the other cores, and a growing cache allocates new
    blocks every step. A replayed graph launches the whole step at once, and its inputs (token,
    position, mask) are tensors updated in place, so shapes and addresses never change.
    Costs: every step attends over all slots (the future ones masked); the n copies of a prompt
    are prefilled separately; the boolean masks are built here as 4-D tensors, which transformers
    takes as they are (a padded prompt position attends to itself, so no softmax row is empty).
    Off a GPU, or when capture fails, the same steps run eagerly.
    """

    def __init__(self, model: Any, input_ids: Tensor, attention_mask: Tensor, n: int,
                 max_new_tokens: int) -> None:  # fmt: skip
        from transformers import StaticCache

        ids = input_ids.repeat_interleave(n, dim=0)
        real = attention_mask.repeat_interleave(n, dim=0).bool()
        rows, self.width = ids.shape
        slots = self.width + max_new_tokens
        device = ids.device
        self.model = model
        self.cache = StaticCache(config=model.config, max_cache_len=slots)
        _promoting(self.cache)
        # The slots each row may attend to: its real prompt tokens, then each new one as written.
        self.keys = torch.zeros((rows, slots), dtype=torch.bool, device=device)
        self.keys[:, : self.width] = real
        positions = (real.long().cumsum(-1) - 1).clamp(min=0)
        causal = torch.ones((self.width, slots), dtype=torch.bool, device=device).tril()
        diagonal = torch.eye(self.width, slots, dtype=torch.bool, device=device)
        prefill_mask = (causal[None] & self.keys[:, None, :]) | diagonal[None]
        out = model(input_ids=ids, attention_mask=prefill_mask[:, None], position_ids=positions,
                    past_key_values=self.cache, use_cache=True, logits_to_keep=1)  # fmt: skip
        del prefill_mask
        self.first_logits = out.logits[:, -1]
        self.token = torch.zeros((rows, 1), dtype=torch.long, device=device)
        self.position = positions[:, -1:].clone()
        self.mask = self.keys.view(rows, 1, 1, slots)
        self.graph: Any = None
        self.logits: Tensor | None = None
        self.use_graph = device.type == "cuda"

    def _forward(self) -> Tensor:
        out = self.model(input_ids=self.token, attention_mask=self.mask,
                         position_ids=self.position, past_key_values=self.cache,
                         use_cache=True)  # fmt: skip
        return out.logits[:, -1]

    def advance(self, token: Tensor, t: int) -> Tensor:
        self.token.copy_(token[:, None])
        self.position.add_(1)
        self.keys[:, self.width + t] = True  # the slot this token's keys and values go to
        if self.use_graph and self.graph is None:
            self._capture()
        if self.graph is None:
            return self._forward()
        self.graph.replay()
        assert self.logits is not None
        return self.logits

    def _capture(self) -> None:
        """Warm up on a side stream (the cache's write position is restored after), then
        record one step. The recording runs nothing: the first replay is the real step."""
        lengths = [layer.cumulative_length.clone() for layer in self.cache.layers]
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(2):
                    self._forward()
            torch.cuda.current_stream().wait_stream(side)
            self._restore(lengths)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self.logits = self._forward()
            self.graph = graph
        except Exception as exc:  # an op that cannot be recorded: run the steps eagerly
            import warnings

            warnings.warn(f"decode: CUDA graph capture failed ({exc}); decoding eagerly",
                          stacklevel=2)  # fmt: skip
            torch.cuda.synchronize()
            self.use_graph, self.graph, self.logits = False, None, None
        self._restore(lengths)

    def _restore(self, lengths: list[Tensor]) -> None:
        for layer, length in zip(self.cache.layers, lengths, strict=True):
            layer.cumulative_length.copy_(length)


def _promoting(cache: Any) -> None:
    """Makes each static cache layer store keys and values in one promoted dtype.

    StaticCache allocates both in the dtype of the first keys it sees, but under bf16 autocast
    (RL's fp32 policy) the rotary embedding leaves the keys in fp32 while the values stay bf16,
    and its in-place write then refuses the values. A growing cache promotes them to fp32 when
    it concatenates; this does the same.
    """
    for layer in cache.layers:
        update = layer.update

        def promoted(keys: Tensor, values: Tensor, *args: Any, _layer: Any = layer,
                     _update: Any = update, **kwargs: Any) -> Any:  # fmt: skip
            dtype = (_layer.keys.dtype if _layer.is_initialized
                     else torch.promote_types(keys.dtype, values.dtype))  # fmt: skip
            return _update(keys.to(dtype), values.to(dtype), *args, **kwargs)

        layer.update = promoted

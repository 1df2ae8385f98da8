"""SFT warm-up (DRTriton section 4, appendix C): imitate verified level-1 PyTorch-to-Triton pairs.

    drtriton sft --model CKPT --data PAIRS.jsonl --out OUT [--lora] [--max-steps N]
    accelerate launch -m drtriton sft ...          # several GPUs (data parallel)

The loss is next-token cross-entropy on the answer only: prompt tokens are masked (labels -100),
so the model learns to answer the paper's prompt, not to reproduce it. Departures from the paper:
the paper's pairs come from DeepSeek-R1 and GPT-5.2; ours come from the C++ teacher and/or an
API model (`drtriton sft-data`), and pairs whose verdict says incorrect are skipped. The loss
is averaged over answer tokens of each micro-batch (not over sequences).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Any

from drtriton.errors import UserError
from drtriton.jsonl import read_jsonl
from drtriton.train import checkpoint
from drtriton.train.budget import Budget
from drtriton.train.data import collate, encode_records, usable_pair


@dataclass
class LoRAConfig:
    enabled: bool = False
    r: int = field(default=16, metadata={"help": "LoRA rank"})
    alpha: int = field(default=32, metadata={"help": "LoRA scaling alpha"})
    dropout: float = field(default=0.05, metadata={"help": "LoRA dropout"})
    targets: str = field(default="all-linear", metadata={"help": "modules LoRA adapts"})


@dataclass
class SFTConfig:
    model: str = field(metadata={"help": "local checkpoint directory (HF layout)"})
    data: str = field(metadata={"help": "pair records (JSONL: source, completion, verdict)"})
    out: str = field(metadata={"help": "output directory: checkpoints, metrics, final model"})
    epochs: float = field(default=3.0, metadata={"help": "passes over the data"})
    max_steps: int = field(default=0, metadata={"help": "optimizer steps; 0: from epochs"})
    lr: float = field(default=1e-5, metadata={"help": "peak learning rate (AdamW)"})
    warmup: float = field(default=0.03, metadata={"help": "warm-up fraction of the steps"})
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay"})
    batch_size: int = field(default=4, metadata={"help": "sequences per device per micro-batch"})
    grad_accum: int = field(default=1, metadata={"help": "micro-batches per optimizer step"})
    max_len: int = field(default=8192, metadata={"help": "tokens per sequence (answer cut)"})
    max_grad_norm: float = field(default=1.0, metadata={"help": "gradient clipping"})
    mixed_precision: str = field(default="no", metadata={"help": "no | bf16 | fp16"})
    save_every: int = field(default=500, metadata={"help": "optimizer steps between checkpoints"})
    log_every: int = field(default=10, metadata={"help": "optimizer steps between metric lines"})
    resume: bool = field(default=False, metadata={"help": "continue from OUT's latest checkpoint"})
    seed: int = field(default=0, metadata={"help": "data order and initialisation seed"})
    dtype: str = field(default="float32", metadata={"help": "weights: float32 | bfloat16"})
    gradient_checkpointing: bool = field(default=False, metadata={"help": "recompute "
                                         "activations in backward (long sequences)"})  # fmt: skip
    max_minutes: float = field(default=0.0, metadata={"help": "wall-clock budget: stop, save "
                               "and return when spent (the LR decays by time too); 0: none"})  # fmt: skip
    metrics: str = field(default="", metadata={"help": "metrics JSONL (the plot beside it, "
                         ".svg); default: OUT/metrics.jsonl"})  # fmt: skip
    lora: LoRAConfig = field(default_factory=LoRAConfig)


def _with_lora(model: Any, cfg: LoRAConfig) -> Any:
    if not cfg.enabled:
        return model
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(r=cfg.r, lora_alpha=cfg.alpha, lora_dropout=cfg.dropout,
                        target_modules=cfg.targets, task_type="CAUSAL_LM")  # fmt: skip
    return get_peft_model(model, config)


def _examples(cfg: SFTConfig, tokenizer: Any) -> list[dict]:
    records = [r for r in read_jsonl(cfg.data) if usable_pair(r)]
    if not records:
        raise UserError(f"{cfg.data}: no usable pairs (need a completion and no failed verdict)")
    random.Random(cfg.seed).shuffle(records)
    return encode_records(tokenizer, records, cfg.max_len)


def _schedule(optimizer: Any, total: int, warmup: int, budget: Budget | None = None) -> Any:
    import torch

    def factor(step: int) -> float:  # linear warm-up, cosine decay to 10% of the peak
        if step < warmup:
            return (step + 1) / max(1, warmup)
        progress = (step - warmup) / max(1, total - warmup)
        if budget is not None:  # a time budget may end the run first: decay by time as well
            progress = max(progress, budget.fraction())
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def train(cfg: SFTConfig) -> dict[str, Any]:
    """Runs SFT; returns the last metrics line. The final model lands in cfg.out."""
    import torch
    from accelerate import Accelerator
    from accelerate.utils import set_seed

    from drtriton.policy.hf import load_model

    resume_from = checkpoint.resume_point(cfg.out) if cfg.resume else None  # before any loading
    accelerator = Accelerator(gradient_accumulation_steps=cfg.grad_accum,
                              mixed_precision=cfg.mixed_precision)  # fmt: skip
    set_seed(cfg.seed)
    model, tokenizer = load_model(cfg.model, dtype=cfg.dtype)
    if cfg.gradient_checkpointing:
        model.gradient_checkpointing_enable()
        if cfg.lora.enabled:  # frozen embeddings: checkpointed blocks need a grad-carrying input
            model.enable_input_require_grads()
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = _with_lora(model, cfg.lora)
    examples = _examples(cfg, tokenizer)
    loader = torch.utils.data.DataLoader(
        examples, batch_size=cfg.batch_size, shuffle=True,
        collate_fn=lambda b: collate(b, tokenizer.pad_token_id),
        generator=torch.Generator().manual_seed(cfg.seed),
    )  # fmt: skip
    steps_per_epoch = max(1, math.ceil(len(loader) / accelerator.num_processes / cfg.grad_accum))
    total = cfg.max_steps or max(1, math.ceil(cfg.epochs * steps_per_epoch))
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    budget = Budget(cfg.max_minutes)
    # With a time budget, warm-up is a fraction of the first 100 steps (`total` may never come).
    warmup = int(cfg.warmup * (min(total, 100) if budget.seconds > 0 else total))
    scheduler = _schedule(optimizer, total, warmup, budget)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)

    step, start_micro = 0, 0
    if resume_from is not None:
        state = checkpoint.load(accelerator, resume_from)
        step, start_micro = state["step"], state["micro"]
        accelerator.print(f"resumed from {resume_from} at step {step}")
    metrics_path = cfg.metrics or f"{cfg.out}/metrics.jsonl"
    log = checkpoint.MetricsLog(metrics_path, accelerator.is_main_process, resume=cfg.resume)
    metrics: dict[str, Any] = {"step": step}
    micro, tokens, losses, t0 = start_micro, 0, [], time.perf_counter()
    all_tokens, timed_out = 0, False
    # Micro-batches behind the last whole step: a Ctrl-C saves that position, and the resumed
    # run redoes the micro-batches of the step it cut (their gradients are not saved).
    done_micro = micro
    interrupts = checkpoint.Interrupts(accelerator, cfg.out)
    model.train()
    with interrupts.saving(lambda: (step, {"micro": done_micro})):
        while step < total and not timed_out:
            epoch_micro = micro % len(loader)
            batches = accelerator.skip_first_batches(loader, epoch_micro) if epoch_micro else loader
            for batch in batches:
                with accelerator.accumulate(model):
                    loss = model(**batch).loss
                    accelerator.backward(loss)
                    if accelerator.sync_gradients:
                        accelerator.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                    with interrupts.held():  # the update and the counters that name it
                        optimizer.step()
                        scheduler.step()
                        optimizer.zero_grad()
                        micro += 1
                        if accelerator.sync_gradients:
                            step, done_micro = step + 1, micro
                losses.append(float(loss.detach()))
                tokens += int((batch["labels"] != -100).sum())
                all_tokens += int(batch["attention_mask"].sum())
                if not accelerator.sync_gradients:
                    continue
                timed_out = budget.spent(accelerator)
                if step % cfg.log_every == 0 or step == total or timed_out:
                    elapsed = time.perf_counter() - t0
                    metrics = {"step": step, "loss": sum(losses) / len(losses),
                               "lr": scheduler.get_last_lr()[0], "epoch": micro / len(loader),
                               "tokens_per_s": tokens / max(elapsed, 1e-9)}  # fmt: skip
                    log.write(metrics)
                    losses, tokens, t0 = [], 0, time.perf_counter()
                if (cfg.save_every and step % cfg.save_every == 0) or step == total or timed_out:
                    checkpoint.save(accelerator, cfg.out, step, {"micro": micro})
                if step >= total or timed_out:
                    break
    checkpoint.save_final(accelerator, model, tokenizer, cfg.out)
    seconds = budget.elapsed
    return {**metrics, "steps": step, "seconds": seconds, "timed_out": timed_out,
            "train_tokens_per_s": all_tokens * accelerator.num_processes / max(seconds, 1e-9)}  # fmt: skip

"""`drtriton sft-data`, `drtriton sft`, `drtriton rl`, `drtriton tiny-model` and
`drtriton train-recipe`: thin wrappers over the typed configs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from drtriton import cli_checks as c
from drtriton.errors import UserError
from drtriton.train.args import add_arguments, from_namespace

# Every number, device and output path of the train commands, checked while parsing (the
# options come from the dataclass configs, which say types, not ranges): a bad value is a
# one-line usage error before a model loads, not a traceback, or a run that never ends.
_OUT_DIR = c.as_str(c.output_dir)
_METRICS = c.as_str(c.output_file, empty_ok=True)
_IN = c.as_str(c.input_file)
_CKPT = c.as_str(c.checkpoint_dir)
# Words passed on to accelerate and transformers, which would fail only after the model loads.
_MIXED = c.one_of("no", "bf16", "fp16")
_DTYPE = c.one_of("auto", "float32", "bfloat16", "float16")
_LOSS = c.one_of("drpo", "grpo")
SFT_CHECKS = {
    "model": _CKPT, "data": _IN, "out": _OUT_DIR, "mixed_precision": _MIXED, "dtype": _DTYPE, "metrics": _METRICS, "epochs": c.positive_float,
    "max_steps": c.non_negative_int, "lr": c.positive_float, "warmup": c.unit_interval,
    "weight_decay": c.non_negative_float, "batch_size": c.positive_int,
    "grad_accum": c.positive_int, "max_len": c.positive_int, "max_grad_norm": c.positive_float,
    "save_every": c.non_negative_int, "log_every": c.positive_int,
    "max_minutes": c.non_negative_float, "lora_r": c.positive_int, "lora_alpha": c.positive_int,
    "lora_dropout": c.unit_interval,
}  # fmt: skip
SFT_DATA_CHECKS = {
    "out": c.as_str(c.output_file), "per_op": c.positive_int, "levels": c.level_list,
    "per_level": c.positive_int, "samples": c.positive_int,
    "device": c.device, "timeout": c.non_negative_float, "workers": c.non_negative_int,
    "dim_min": c.non_negative_int, "precision": c.precision,
}  # fmt: skip
RL_CHECKS = {
    "model": _CKPT, "programs": _IN, "heldout": c.as_str(c.input_file, empty_ok=True),
    "out": _OUT_DIR, "metrics": _METRICS, "loss": _LOSS, "mixed_precision": _MIXED,
    "dtype": _DTYPE, "heldout_per_level": c.non_negative_int,
    "steps": c.positive_int, "prompts_per_step": c.positive_int, "group_size": c.positive_int,
    "lr": c.positive_float, "updates_per_batch": c.positive_int,
    "warmup_updates": c.non_negative_int, "micro_batch": c.positive_int,
    "max_grad_norm": c.positive_float, "temperature": c.non_negative_float,
    "top_p": c.unit_interval, "max_new_tokens": c.positive_int, "beta": c.non_negative_float,
    "tau": c.positive_float, "lam": c.positive_float, "delta": c.non_negative_float,
    "speed_margin": c.non_negative_float, "backtracks": c.non_negative_int,
    "clip_eps": c.positive_float,
    "advance_at": c.unit_interval, "eval_every": c.positive_int, "eval_size": c.positive_int,
    "patience": c.positive_int, "min_delta": c.non_negative_float, "verify_device": c.device,
    "verify_timeout": c.non_negative_float, "verify_workers": c.non_negative_int,
    "verify_runs": c.non_negative_int, "save_every": c.positive_int,
    "max_minutes": c.non_negative_float, "start_level": c.non_negative_int,
    "sync_every": c.non_negative_int,
}  # fmt: skip
RECIPE_CHECKS = {
    "out": _OUT_DIR, "rl_loss": _LOSS, "work": c.as_str(c.output_dir, empty_ok=True),
    "minutes": c.positive_float, "device": c.device_or_auto, "sft_share": c.unit_interval,
    "vocab_size": c.positive_int, "hidden_size": c.positive_int, "layers": c.positive_int,
    "heads": c.positive_int, "kv_heads": c.positive_int, "intermediate_size": c.positive_int,
    "sft_lr": c.positive_float, "sft_batch": c.positive_int, "rl_lr": c.positive_float,
    "rl_warmup": c.non_negative_int, "rl_updates": c.positive_int,
    "speed_margin": c.non_negative_float, "prompts_per_step": c.positive_int,
    "group_size": c.positive_int, "temperature": c.non_negative_float,
    "eval_temperature": c.non_negative_float, "eval_per_level": c.positive_int,
    "eval_samples": c.positive_int, "verify_workers": c.positive_int,
    "verify_timeout": c.positive_float, "rl_verify_runs": c.positive_int,
    "max_new_tokens": c.non_negative_int,
}  # fmt: skip


def register(subparsers: argparse._SubParsersAction) -> None:
    from drtriton.train.sft import SFTConfig

    p = subparsers.add_parser("sft", help="supervised warm-up on verified pairs",
                              description="Fine-tune a causal LM on PyTorch-to-Triton pairs.")  # fmt: skip
    add_arguments(p, SFTConfig)
    c.set_types(p, SFT_CHECKS)
    p.set_defaults(func=run_sft)

    from drtriton.train.sft_data import SFTDataConfig

    p = subparsers.add_parser("sft-data", help="verified pairs for SFT: level 1 per operator, "
                                               "chains per level",
                              description="Synthesize level-1 programs per operator (and, with "
                                          "--levels, chains of each level >= 2), answer them "
                                          "with the teacher and/or an API model, keep the "
                                          "verified pairs; their operator coverage goes beside "
                                          "the output (OUT's stem + .coverage.json) and to "
                                          "stderr.")  # fmt: skip
    add_arguments(p, SFTDataConfig)
    c.set_types(p, SFT_DATA_CHECKS)
    p.set_defaults(func=run_sft_data)

    from drtriton.train.tiny import TinyConfig  # a dataclass only: no torch at import

    p = subparsers.add_parser("tiny-model", help="build a tiny tokenizer + Qwen2 model (tests)",
                              description="Train a BPE tokenizer on records and save a tiny "
                                          "randomly initialised Qwen2 model.")  # fmt: skip
    p.add_argument("records", type=Path, nargs="+", help="program or pair records (JSONL)")
    p.add_argument("--out", type=c.output_dir, required=True, help="checkpoint directory")
    p.add_argument("--vocab-size", type=c.positive_int, default=1024,
                   help="BPE vocabulary size, >= 1 (the 256 bytes and 2 specials are always "
                   "in it)")  # fmt: skip
    p.add_argument("--hidden-size", type=c.positive_int, default=64,
                   help=f"model width, a multiple of {2 * TinyConfig.heads} (an even width per "
                   "attention head, which rotary embeddings need)")  # fmt: skip
    p.add_argument("--layers", type=c.positive_int, default=2, help="transformer layers, >= 1")
    p.set_defaults(func=run_tiny)

    try:
        from drtriton.train import recipe, rl
    except ImportError:
        return
    rl.register(subparsers)
    c.set_types(subparsers.choices["rl"], RL_CHECKS)
    recipe.register(subparsers)
    c.set_types(subparsers.choices["train-recipe"], RECIPE_CHECKS)


def run_sft(args: argparse.Namespace) -> int:
    from drtriton.train.sft import SFTConfig, train

    cfg = from_namespace(SFTConfig, args)
    metrics = train(cfg)
    print(json.dumps(metrics))
    return 0


def run_sft_data(args: argparse.Namespace) -> int:
    from drtriton.train.pair_coverage import coverage_path, table
    from drtriton.train.sft_data import SFTDataConfig, build

    c.require_visible(args.device)
    cfg = from_namespace(SFTDataConfig, args)
    summary = build(cfg)
    print(json.dumps(summary))  # stdout stays the summary alone (prepare_data.sh keeps it)
    path = coverage_path(cfg.out)
    print(f"operator coverage: kept pairs of {cfg.out} holding each operator, per level "
          f"({path})", file=sys.stderr)  # fmt: skip
    print(table(json.loads(path.read_text())), file=sys.stderr)
    return 0


def run_tiny(args: argparse.Namespace) -> int:
    from drtriton.jsonl import read_jsonl
    from drtriton.train.tiny import TinyConfig, corpus_from_records, make_tiny

    if args.hidden_size % (2 * TinyConfig.heads):
        raise UserError(f"--hidden-size {args.hidden_size}: must be a multiple of "
                        f"{2 * TinyConfig.heads}")  # fmt: skip
    records = [r for path in args.records for r in read_jsonl(path) if r.get("source")]
    if not records:
        raise UserError("no records with a `source` field")
    cfg = TinyConfig(vocab_size=args.vocab_size, hidden_size=args.hidden_size, layers=args.layers)
    make_tiny(corpus_from_records(records), args.out, cfg)
    print(args.out)
    return 0

"""`drtriton sft-data`, `drtriton sft`, `drtriton rl`, `drtriton tiny-model` and
`drtriton train-recipe`: thin wrappers over the typed configs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from drtriton.errors import UserError
from drtriton.train.args import add_arguments, from_namespace


def register(subparsers: argparse._SubParsersAction) -> None:
    from drtriton.train.sft import SFTConfig

    p = subparsers.add_parser("sft", help="supervised warm-up on verified pairs",
                              description="Fine-tune a causal LM on PyTorch-to-Triton pairs.")  # fmt: skip
    add_arguments(p, SFTConfig)
    p.set_defaults(func=run_sft)

    from drtriton.train.sft_data import SFTDataConfig

    p = subparsers.add_parser("sft-data", help="verified level-1 pairs per operator for SFT",
                              description="Synthesize level-1 programs per operator, answer "
                                          "them with the teacher and/or an API model, keep the "
                                          "verified pairs.")  # fmt: skip
    add_arguments(p, SFTDataConfig)
    p.set_defaults(func=run_sft_data)

    p = subparsers.add_parser("tiny-model", help="build a tiny tokenizer + Qwen2 model (tests)",
                              description="Train a BPE tokenizer on records and save a tiny "
                                          "randomly initialised Qwen2 model.")  # fmt: skip
    p.add_argument("records", type=Path, nargs="+", help="program or pair records (JSONL)")
    p.add_argument("--out", type=Path, required=True, help="checkpoint directory")
    p.add_argument("--vocab-size", type=int, default=1024, help="BPE vocabulary size")
    p.add_argument("--hidden-size", type=int, default=64, help="model width")
    p.add_argument("--layers", type=int, default=2, help="transformer layers")
    p.set_defaults(func=run_tiny)

    try:
        from drtriton.train import recipe, rl
    except ImportError:
        return
    rl.register(subparsers)
    recipe.register(subparsers)


def run_sft(args: argparse.Namespace) -> int:
    from drtriton.train.sft import SFTConfig, train

    cfg = from_namespace(SFTConfig, args)
    _check_model(cfg.model)
    metrics = train(cfg)
    print(json.dumps(metrics))
    return 0


def run_sft_data(args: argparse.Namespace) -> int:
    from drtriton.train.sft_data import SFTDataConfig, build

    summary = build(from_namespace(SFTDataConfig, args))
    print(json.dumps(summary))
    return 0


def run_tiny(args: argparse.Namespace) -> int:
    from drtriton.jsonl import read_jsonl
    from drtriton.train.tiny import TinyConfig, corpus_from_records, make_tiny

    records = [r for path in args.records for r in read_jsonl(path) if r.get("source")]
    if not records:
        raise UserError("no records with a `source` field")
    cfg = TinyConfig(vocab_size=args.vocab_size, hidden_size=args.hidden_size, layers=args.layers)
    make_tiny(corpus_from_records(records), args.out, cfg)
    print(args.out)
    return 0


def _check_model(path: str) -> None:
    if not (Path(path) / "config.json").is_file():
        raise UserError(f"{path}: not a model checkpoint (no config.json)")

"""Generation throughput of HFPolicy: generated tokens/s per sampling engine, on the recipe's prompts.

    python benchmarks/generation_throughput.py --device cpu                       # tiny model
    python benchmarks/generation_throughput.py --device cuda --size recipe --prompts 48 \\
        --new 1024 --engines hf loop hf-static --out gen_throughput.json         # the H200 case

The model is the small-model recipe's Qwen2 with random weights (`--size recipe`: width 512,
8 layers, ~26M parameters; `--size tiny`: width 64, 2 layers) and a byte-level BPE tokenizer
trained on the committed SFT pairs; the prompts are the synthetic prompts of the committed
held-out programs (~700 tokens each), as `drtriton train-recipe` evaluates them. A random model
seldom emits EOS, so nearly every sequence runs the full `--new` tokens; the figure is
generated tokens / wall time of `HFPolicy.generate` (what the recipe reports as
gen_tokens_per_s), plus the wall time per decode step. Every engine is run `--repeats` times;
the first call of `hf-static` includes its compilation, so read the last repeat.

Engines (SamplingConfig.engine): `hf` = transformers' generate with num_return_sequences (the
code before the decode loop), `loop` = drtriton's decode loop (policy/decode.py; on a GPU a
preallocated cache and one CUDA graph per step), `loop-dynamic` = the loop with a growing cache
and no graph (the CPU path, and the GPU path before 2026-11-30's sixth session), `hf-static` =
generate with a static KV cache, which transformers compiles on a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
DATA = ROOT / "examples" / "train" / "data"
SIZES = {  # (vocab, width, layers, heads, kv heads, MLP width)
    "tiny": (1024, 64, 2, 4, 2, 128),
    "recipe": (2048, 512, 8, 8, 4, 1536),  # examples/train/h200_recipe.sh's model
}


def build(size: str, workdir: str) -> str:
    """Tokenizer + random Qwen2 of `size` saved to workdir; returns the checkpoint path."""
    from drtriton.jsonl import read_jsonl
    from drtriton.train.tiny import TinyConfig, corpus_from_records, make_tiny

    vocab, width, layers, heads, kv, mlp = SIZES[size]
    pairs = list(read_jsonl(DATA / "sft_pairs.jsonl"))[::3]
    cfg = TinyConfig(vocab_size=vocab, hidden_size=width, layers=layers, heads=heads,
                     kv_heads=kv, intermediate_size=mlp)  # fmt: skip
    return str(make_tiny(corpus_from_records(pairs), pathlib.Path(workdir) / size, cfg))


def measure(policy: Any, prompts: list[str], n: int) -> dict[str, float]:
    import torch

    if policy.model.device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    groups = policy.generate(prompts, n)
    seconds = time.perf_counter() - start
    tokens = sum(c.completion_tokens for g in groups for c in g)
    longest = max(c.completion_tokens for g in groups for c in g)
    return {"seconds": seconds, "tokens": tokens, "tokens_per_s": tokens / seconds,
            "longest": longest, "ms_per_step": 1000.0 * seconds / max(1, longest)}  # fmt: skip


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from drtriton.jsonl import read_jsonl
    from drtriton.policy.hf import HFPolicy, SamplingConfig, load_model
    from drtriton.policy.prompts import prompt_for

    if args.device == "cpu":
        torch.set_num_threads(args.threads)
    dtype = args.dtype if args.dtype != "auto" else ("bfloat16" if args.device == "cuda"
                                                     else "float32")  # fmt: skip
    records = list(read_jsonl(DATA / "heldout.jsonl"))[: args.prompts]
    prompts = [prompt_for(r) for r in records]
    with tempfile.TemporaryDirectory(prefix="drtriton-genbench-") as work:
        model, tok = load_model(build(args.size, work), dtype=dtype, device=args.device)
    params = sum(p.numel() for p in model.parameters())
    result: dict[str, Any] = {"device": args.device, "size": args.size, "params": params,
                              "dtype": dtype, "prompts": len(prompts), "n": args.n,
                              "new": args.new, "temperature": args.temperature,
                              "threads": torch.get_num_threads(), "engines": {}}  # fmt: skip
    if args.device == "cuda":
        result["gpu"] = torch.cuda.get_device_name(0)
    for engine in args.engines:
        sampling = SamplingConfig(args.temperature, 1.0, args.new, len(prompts), engine=engine)
        policy = HFPolicy(model, tok, sampling)
        runs = []
        for _ in range(args.repeats):
            torch.manual_seed(0)
            runs.append(measure(policy, prompts, args.n))
            print(f"{engine}: {json.dumps(runs[-1])}", flush=True)
        result["engines"][engine] = runs
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu", help="cpu | cuda")
    p.add_argument("--size", default="tiny", choices=sorted(SIZES), help="model size")
    p.add_argument("--dtype", default="auto", help="auto (bf16 on cuda, fp32 on cpu) | "
                   "float32 (RL's fp32 policy, sampled under bf16 autocast on cuda) | bfloat16")  # fmt: skip
    p.add_argument("--prompts", type=int, default=8, help="held-out prompts in the batch")
    p.add_argument("--n", type=int, default=1, help="samples per prompt (RL's group size)")
    p.add_argument("--new", type=int, default=64, help="max new tokens per sequence")
    p.add_argument("--temperature", type=float, default=0.7, help="0: greedy")
    p.add_argument(
        "--engines", nargs="+", default=["hf", "loop"], help="hf | loop | loop-dynamic | hf-static"
    )
    p.add_argument("--repeats", type=int, default=2, help="timed calls per engine")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (cpu only)")
    p.add_argument("--out", default="", help="also write the JSON result here")
    args = p.parse_args()
    if args.device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            print("--device cuda, but torch sees no GPU", file=sys.stderr)
            return 2
    result = run(args)
    print(json.dumps(result, indent=1))
    if args.out:
        tmp = f"{args.out}.tmp"
        pathlib.Path(tmp).write_text(json.dumps(result, indent=1))
        os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`drtriton train-recipe`: the whole small-model experiment in one time-boxed process.

    tokenizer + small Qwen2 from scratch -> SFT on verified teacher pairs -> held-out eval
    (before RL) -> DRPO over the programs' levels (--rl-levels) with verifier rewards ->
    held-out eval (after RL)

Built for one GPU and a few minutes (examples/train/h200_recipe.sh); the same code runs on a CPU
with a tiny model to prove the wiring. Every stage has a time budget taken from `--minutes`:
SFT gets `sft_share` of it, the evaluations are sized by `--eval-per-level`, and RL gets what is
left after reserving time for the second evaluation (as long as the first one took). The
summary JSON is rewritten (atomically) after every stage, so a run cut off by its caller still
reports what it finished. Only small files go to OUT (summary.json, sft_metrics.jsonl,
metrics.jsonl and metrics.svg of RL, and eval_before_rl.jsonl / eval_after_rl.jsonl: each
held-out program's verifier status and extracted code); models and checkpoints stay in the
work directory.

A run longer than one sitting (a GPU lent for 10 minutes at a time) is split: the first run
keeps its models (`--work`), and each later one starts from the model the previous one left
(`--init-model WORK/rl`, or WORK/sft when RL did not run), skipping the tokenizer, model and SFT
stages. Each run evaluates before and after its RL; the optimizer starts afresh (with its
warm-up), since only weights travel.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from drtriton.errors import UserError
from drtriton.files import write_text_atomic


@dataclass
class RecipeConfig:
    pairs: str = field(metadata={"help": "verified SFT pairs (JSONL, from prepare_data.sh)"})
    programs: str = field(metadata={"help": "RL programs (JSONL): the curriculum runs over the "
                          "levels of --rl-levels that they hold"})  # fmt: skip
    heldout: str = field(metadata={"help": "held-out programs, disjoint from both (JSONL)"})
    out: str = field(metadata={"help": "small outputs: summary.json, metrics, plot"})
    extra_pairs: str = field(default="", metadata={"help": "more verified pairs for SFT, e.g. "
                             "prepare_l2_pairs.sh's level-2 chains (the paper's SFT is level 1 "
                             "only)"})  # fmt: skip
    work: str = field(default="", metadata={"help": "models and checkpoints; default: a "
                                             "temporary directory, removed at the end"})  # fmt: skip
    # A run split over several calls (a device call lasts 10 minutes): the first builds and
    # SFTs the model, each later one continues RL from the model the previous one left.
    init_model: str = field(default="", metadata={"help": "start from this checkpoint (an "
                            "earlier run's WORK/sft or WORK/rl): no tokenizer, model or SFT "
                            "stage; evaluation, RL and evaluation as usual (RL's draw of "
                            "programs goes on after the steps the model's config.json counts)"})  # fmt: skip
    minutes: float = field(default=6.0, metadata={"help": "wall-clock budget of the whole run"})
    device: str = field(default="auto", metadata={"help": "cuda | cpu | auto"})
    sft_share: float = field(default=0.35, metadata={"help": "share of --minutes for SFT"})
    # Byte-level BPE merges stay within words: past ~2k entries the code tokenizes no shorter.
    vocab_size: int = field(default=2048, metadata={"help": "BPE vocabulary"})
    hidden_size: int = field(default=512, metadata={"help": "model width"})
    layers: int = field(default=8, metadata={"help": "transformer layers"})
    heads: int = field(default=8, metadata={"help": "attention heads"})
    kv_heads: int = field(default=4, metadata={"help": "key/value heads (GQA)"})
    intermediate_size: int = field(default=1536, metadata={"help": "MLP width"})
    sft_lr: float = field(default=6e-4, metadata={"help": "SFT peak learning rate"})
    sft_batch: int = field(default=32, metadata={"help": "SFT sequences per step"})
    rl_loss: str = field(default="drpo", metadata={"help": "drpo | grpo (the ablation)"})
    # 5e-5 without warm-up took held-out level-1 pass@1 from 42% to 8% in 3 DRPO steps on the
    # H200 (2026-11-30): a fresh AdamW's first step is a sign step of the full lr on every weight.
    rl_lr: float = field(default=2e-5, metadata={"help": "RL learning rate (after warm-up)"})
    rl_warmup: int = field(default=10, metadata={"help": "RL optimizer steps of linear LR "
                           "warm-up"})  # fmt: skip
    rl_updates: int = field(default=2, metadata={"help": "optimizer steps per rollout batch "
                            "(from the second on, DRPO's KL hinge sees the drift from pi_old)"})  # fmt: skip
    # The recipe's programs run in microseconds, and 12 verifier processes share the GPU: ten
    # correct kernels verified three times each measured log speed-ups 2.0 apart on average
    # (max - min; e.g. 1.22x, 0.33x, 0.034x for one kernel; H200, 2026-12-01). Differences
    # under a factor e^2 = 7.4 are noise here: such rollouts weigh alike.
    speed_margin: float = field(default=2.0, metadata={"help": "DRPO: correct rollouts within "
                                "this log speed-up of their group's fastest weigh alike"})  # fmt: skip
    prompts_per_step: int = field(default=8, metadata={"help": "RL programs per step"})
    group_size: int = field(default=8, metadata={"help": "RL rollouts per program"})
    # At 0.7 the SFT model repeated itself (72 distinct answers in 192 rollouts) and 0-1 of 8
    # groups carried signal; at 1.0, 3-12 of 8-16 did (H200, 2026-11-30 and 12-01).
    temperature: float = field(default=1.0, metadata={"help": "rollout sampling "
                               "temperature"})  # fmt: skip
    eval_temperature: float = field(default=0.0, metadata={"help": "held-out evaluation "
                                    "temperature (0: greedy, one deterministic answer per "
                                    "program, so before/after RL differ by the model only)"})  # fmt: skip
    eval_per_level: int = field(default=24, metadata={"help": "held-out programs per level"})
    # prepare_data.sh's programs hold levels 1-2, prepare_l1-5.sh's levels 1-5 (issue 23).
    rl_levels: str = field(default="1-5", metadata={"help": "RL curriculum levels, e.g. 1-5 or "
                           "1,2 (those the programs hold)"})  # fmt: skip
    eval_samples: int = field(default=1, metadata={"help": "answers per held-out program; "
                              "more than 1 needs --eval-temperature > 0, and pass@1 is then "
                              "the mean over all answers (an estimate with less variance, of "
                              "the sampled policy that RL trains)"})  # fmt: skip
    verify_workers: int = field(default=12, metadata={"help": "verifier processes"})
    verify_timeout: float = field(default=30.0, metadata={"help": "seconds per candidate"})
    # 2026-11-30, H200: with 72-83% of rollouts correct, verification took 65 s of each 85 s
    # RL step at 30 timed calls per candidate (timings hold the GPU's lock exclusively).
    rl_verify_runs: int = field(default=10, metadata={"help": "timed calls per correct rollout "
                                "(its speed reward); held-out evaluations keep the verifier's 30"})  # fmt: skip
    max_new_tokens: int = field(default=0, metadata={"help": "completion tokens; 0: 1.25x "
                                "the longest SFT answer, at most 2048"})  # fmt: skip
    seed: int = field(default=0, metadata={"help": "seed of everything"})


class Summary:
    """The run's JSON summary, rewritten atomically whenever a stage adds to it."""

    def __init__(self, path: Path, start: float) -> None:
        self.path, self.start, self.data = path, start, {}

    def put(self, key: str, value: Any) -> None:
        self.data[key] = value
        self.data["elapsed_s"] = time.perf_counter() - self.start
        self.data["finished_stage"] = key
        write_text_atomic(self.path, json.dumps(self.data, indent=1))


def _device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError("--device cuda, but torch sees no GPU")
    return name


def _records(path: str) -> list[dict[str, Any]]:
    from drtriton.jsonl import read_jsonl

    if not Path(path).is_file():
        raise UserError(f"{path}: no such file (run examples/train/prepare_data.sh)")
    return [r for r in read_jsonl(path) if r.get("source")]


def _heldout(records: list[dict], per_level: int,
             seen: Sequence[dict] = ()) -> tuple[list[dict], int]:  # fmt: skip
    """`per_level` held-out programs per level, none whose source is in `seen` (the SFT pairs
    and RL programs), and how many were dropped for that. A held-out file is drawn disjoint
    from the data it was prepared with (prepare_data.sh); a larger SFT file given later need
    not be (the 20,161 level 1-3 pairs of 2026-12-06 hold 5 of the 128 committed held-out
    programs), and a program the model was trained on would count as held-out."""
    from drtriton.train.curriculum import by_level

    trained = {r.get("source") for r in seen}
    kept = [r for r in records if r["source"] not in trained]
    chosen = [r for _, rs in sorted(by_level(kept).items()) for r in rs[:per_level]]
    return chosen, len(records) - len(kept)


def build_model(cfg: RecipeConfig, pairs: list[dict], programs: list[dict], path: Path) -> dict:
    """Tokenizer (trained on SFT and RL text, never on held-out programs) and a fresh Qwen2."""
    from drtriton.train.tiny import TinyConfig, corpus_from_records, make_tiny

    tiny = TinyConfig(vocab_size=cfg.vocab_size, hidden_size=cfg.hidden_size, layers=cfg.layers,
                      heads=cfg.heads, kv_heads=cfg.kv_heads,
                      intermediate_size=cfg.intermediate_size, seed=cfg.seed)  # fmt: skip
    make_tiny(corpus_from_records(pairs + programs), path, tiny)
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True)
    return {**asdict(tiny), "params": sum(p.numel() for p in model.parameters())}


def _params(model_dir: Path) -> int:
    from transformers import AutoModelForCausalLM

    if not (model_dir / "config.json").is_file():
        raise UserError(f"--init-model {model_dir}: not a model checkpoint (no config.json)")
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), local_files_only=True)
    return sum(p.numel() for p in model.parameters())


def answer_tokens(model_dir: Path, pairs: list[dict]) -> list[int]:
    """Token counts of the SFT targets: sizes the generation budget."""
    from transformers import AutoTokenizer

    from drtriton.train.data import target_text, usable_pair

    tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    return [len(tok(target_text(r), add_special_tokens=False)["input_ids"]) + 1
            for r in pairs if usable_pair(r)]  # fmt: skip


def run_sft(cfg: RecipeConfig, model_dir: Path, out_dir: Path, minutes: float, device: str,
            metrics: Path, pairs: list[dict]) -> dict:  # fmt: skip
    from drtriton.train.sft import SFTConfig, train

    data = cfg.pairs
    if cfg.extra_pairs:  # SFT reads one file: the union, beside the models
        data = str(out_dir.parent / "sft_pairs.jsonl")
        write_text_atomic(Path(data), "".join(json.dumps(r) + "\n" for r in pairs))
    sft = SFTConfig(model=str(model_dir), data=data, out=str(out_dir), epochs=1000.0,
                    lr=cfg.sft_lr, warmup=0.3, weight_decay=0.01, batch_size=cfg.sft_batch,
                    max_len=4096, save_every=0, log_every=10, seed=cfg.seed,
                    mixed_precision="bf16" if device == "cuda" else "no",
                    max_minutes=minutes, metrics=str(metrics))  # fmt: skip
    return train(sft)


def run_eval(cfg: RecipeConfig, model_dir: Path, heldout: list[dict], max_new: int,
             device: str, verifier: Any, samples: Path) -> dict:  # fmt: skip
    import torch

    from drtriton.policy.hf import HFPolicy, SamplingConfig, load_model
    from drtriton.train.evaluate import evaluate_policy

    dtype = "bfloat16" if device == "cuda" else "float32"
    model, tok = load_model(model_dir, dtype=dtype, device=device)
    heldout = answers(heldout, cfg.eval_samples)
    sampling = SamplingConfig(cfg.eval_temperature, 1.0, max_new, batch_size=len(heldout) or 1)
    torch.manual_seed(cfg.seed)
    result = evaluate_policy(HFPolicy(model, tok, sampling), verifier, heldout, str(samples))
    del model
    if device == "cuda":
        torch.cuda.empty_cache()
    return result


def answers(heldout: list[dict], k: int) -> list[dict]:
    """Each held-out program k times in a row (ids PROGRAM#0 .. #k-1 when k > 1)."""
    if k == 1:
        return heldout
    return [{**r, "id": f"{r.get('id')}#{i}"} for r in heldout for i in range(k)]


def run_rl(cfg: RecipeConfig, model_dir: Path, out_dir: Path, minutes: float, max_new: int,
           start_level: int, device: str, verifier: Any, metrics: Path) -> dict:  # fmt: skip
    from drtriton.train.rl import RLConfig, train

    rl = RLConfig(model=str(model_dir), programs=cfg.programs, out=str(out_dir),
                  heldout_per_level=16, levels=cfg.rl_levels, start_level=start_level,
                  loss=cfg.rl_loss,
                  speed_margin=cfg.speed_margin, steps=100000, prompts_per_step=cfg.prompts_per_step,
                  group_size=cfg.group_size, lr=cfg.rl_lr, micro_batch=16,
                  warmup_updates=cfg.rl_warmup, updates_per_batch=cfg.rl_updates,
                  temperature=cfg.temperature, max_new_tokens=max_new, eval_every=4,
                  eval_size=16, patience=1000, save_every=1000000, verify_device=device,
                  verify_timeout=cfg.verify_timeout, verify_workers=cfg.verify_workers,
                  verify_compile_baseline=False, seed=cfg.seed,
                  mixed_precision="bf16" if device == "cuda" else "no",
                  max_minutes=minutes, metrics=str(metrics))  # fmt: skip
    return train(rl, verifier=verifier)


OUT_FILES = ("summary.json", "sft_metrics.jsonl", "metrics.jsonl", "metrics.svg",
             "eval_before_rl.jsonl", "eval_after_rl.jsonl")  # fmt: skip


def run(cfg: RecipeConfig, verifier: Any = None) -> dict[str, Any]:
    """The whole recipe; returns (and writes to OUT/summary.json) the summary. `verifier`
    replaces the batch verifier (tests)."""
    import torch

    start = time.perf_counter()
    if cfg.eval_samples < 1:
        raise UserError("--eval-samples must be at least 1")
    if cfg.eval_samples > 1 and cfg.eval_temperature <= 0:
        raise UserError(
            "--eval-samples > 1 needs --eval-temperature > 0 (greedy decoding gives one answer)"
        )
    device = _device(cfg.device)
    if device == "cuda":  # tf32 matmuls for the fp32 parts (optimizer, logits in float)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    pairs, programs = _records(cfg.pairs), _records(cfg.programs)
    if cfg.extra_pairs:
        pairs += _records(cfg.extra_pairs)
    from drtriton.jsonl import run_precision
    from drtriton.train.data import usable_pair

    if not any(usable_pair(r) for r in pairs):  # e.g. program records given as --pairs
        raise UserError(f"{cfg.pairs}: no verified pairs (records with a source and a "
                        "completion that no verdict rejects)")  # fmt: skip
    heldout, overlap = _heldout(_records(cfg.heldout), cfg.eval_per_level, pairs + programs)
    # The programs' own mode (fp32 without the field), for the rewards and the held-out alike:
    # checked before the output directory is touched.
    precision = run_precision(programs + heldout, f"{cfg.programs} and {cfg.heldout}")
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in OUT_FILES:  # metrics logs append: start this run's from empty
        (out / name).unlink(missing_ok=True)
    work = Path(cfg.work or tempfile.mkdtemp(prefix="drtriton-recipe-"))
    try:
        return _stages(cfg, device, pairs, programs, heldout, out, work, start, verifier,
                       precision, overlap)  # fmt: skip
    finally:
        if not cfg.work:
            shutil.rmtree(work, ignore_errors=True)


def _stages(cfg: RecipeConfig, device: str, pairs: list[dict], programs: list[dict],
            heldout: list[dict], out: Path, work: Path, start: float,
            verifier: Any, precision: str, overlap: int = 0) -> dict[str, Any]:  # fmt: skip
    import torch

    from drtriton.train.rewards import BatchVerifier

    summary = Summary(out / "summary.json", start)
    gpu = torch.cuda.get_device_name(0) if device == "cuda" else None
    summary.put("setup", {"config": asdict(cfg), "device": device, "gpu": gpu,
                          "data": {"sft_pairs": len(pairs), "rl_programs": len(programs),
                                   "heldout": len(heldout),
                                   "heldout_dropped_as_trained": overlap}})  # fmt: skip

    # Eager PyTorch is the speed reference (DRTriton's r_s); timing torch.compile of every
    # distinct program too would cost more than verifying the candidates.
    def batch_verifier(runs: int | None = None) -> Any:  # `verifier` (tests) replaces both
        return verifier or BatchVerifier(device, cfg.verify_timeout, cfg.verify_workers,
                                         compile_baseline=False, runs=runs,
                                         precision=precision)  # fmt: skip

    eval_verifier = batch_verifier()
    deadline = start + 60.0 * cfg.minutes

    def left() -> float:
        return (deadline - time.perf_counter()) / 60.0

    if cfg.init_model:
        model_dir = Path(cfg.init_model)
        if model_dir.resolve() == (work / "rl").resolve():
            raise UserError("--init-model is this run's own RL output: copy it elsewhere first")
        summary.put("model", {"init_model": str(model_dir), "params": _params(model_dir)})
        tokenizer_dir = model_dir
    else:
        model_dir, tokenizer_dir = work / "sft", work / "init"
        summary.put("model", build_model(cfg, pairs, programs, tokenizer_dir))
    lengths = sorted(answer_tokens(tokenizer_dir, pairs))
    # Level-2 answers run longer than the median level-1 one; the longest level-1 answers
    # (convolutions, ~1.6k tokens) set the room. Every generate() call costs max_new steps.
    max_new = cfg.max_new_tokens or min(2048, int(1.25 * lengths[-1]))
    summary.put("generation", {"max_new_tokens": max_new, "sft_answer_tokens_max": lengths[-1],
                               "sft_answer_tokens_median": lengths[len(lengths) // 2]})  # fmt: skip

    # Metrics go straight to OUT (line by line): a run cut off mid-stage keeps its curves.
    if cfg.init_model:
        summary.put("sft", {"skipped": f"--init-model {cfg.init_model}"})
    else:
        sft = run_sft(cfg, work / "init", model_dir, cfg.sft_share * cfg.minutes, device,
                      out / "sft_metrics.jsonl", pairs)  # fmt: skip
        summary.put("sft", sft)

    t0 = time.perf_counter()
    before = run_eval(cfg, model_dir, heldout, max_new, device, eval_verifier,
                      out / "eval_before_rl.jsonl")  # fmt: skip
    eval_min = (time.perf_counter() - t0) / 60.0
    summary.put("before_rl", before)
    _close(eval_verifier)  # its processes would sit idle beside RL's until the last evaluation

    # Curriculum: start at level 2 when level 1 already passes the paper's 50% bar.
    start_level = 2 if before["per_level"].get("1", {}).get("pass@1", 0.0) > 0.5 else 1
    rl_minutes = left() - 1.2 * eval_min - min(0.25, 0.05 * cfg.minutes)  # margin: saving
    if rl_minutes <= 0.1:
        summary.put("rl", {"skipped": f"no time left ({left():.2f} min)"})
        summary.put("headline", headline(summary.data))
        return summary.data
    rl_verifier = batch_verifier(cfg.rl_verify_runs)
    try:
        rl = run_rl(cfg, model_dir, work / "rl", rl_minutes, max_new, start_level, device,
                    rl_verifier, out / "metrics.jsonl")  # fmt: skip
    finally:
        if rl_verifier is not verifier:
            _close(rl_verifier)
    summary.put("rl", {**rl, "budget_min": rl_minutes, "start_level": start_level})

    after = run_eval(cfg, work / "rl", heldout, max_new, device, eval_verifier,
                     out / "eval_after_rl.jsonl")  # fmt: skip
    summary.put("after_rl", after)
    summary.put("headline", headline(summary.data))
    return summary.data


def _close(verifier: Any) -> None:
    """Stops a BatchVerifier's harness processes (a test's stand-in has none)."""
    close = getattr(verifier, "close", None)
    if callable(close):
        close()


def headline(data: dict[str, Any]) -> dict[str, Any]:
    """The figures the note reports, pulled out of the stages."""
    b, a, sft, rl = (data.get(k, {}) for k in ("before_rl", "after_rl", "sft", "rl"))
    keys = ("pass@1", "geomean_speedup", "mean_speedup", "mean_log_speedup", "fast1")
    return {
        "before_rl": {k: b.get(k) for k in keys},
        "after_rl": {k: a.get(k) for k in keys},
        "per_level_pass@1": {
            stage: {lv: s["pass@1"] for lv, s in d.get("per_level", {}).items()}
            for stage, d in (("before_rl", b), ("after_rl", a))
        },
        "sft_steps": sft.get("steps"),
        "sft_train_tokens_per_s": sft.get("train_tokens_per_s"),
        "rl_steps": rl.get("step"),
        "rl_gen_tokens_per_s": rl.get("gen_tokens_per_s"),
        "rl_rollouts": rl.get("rollouts"),
        "rl_rollouts_verified": rl.get("rollouts_verified"),
        "rl_rollouts_distinct": rl.get("rollouts_distinct"),
        "rl_rollouts_verified_per_min": rl.get("rollouts_verified_per_min"),
        "rl_train_tokens_per_s": rl.get("train_tokens_per_s"),
        "eval_gen_tokens_per_s": b.get("gen_tokens_per_s"),
    }


def register(subparsers: argparse._SubParsersAction) -> None:
    from drtriton.train.args import add_arguments

    p = subparsers.add_parser("train-recipe", help="small model from scratch: SFT, eval, DRPO, "
                              "eval, in one time budget", description=__doc__.split("\n\n")[0])  # fmt: skip
    add_arguments(p, RecipeConfig)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from drtriton.train.args import from_namespace

    cfg = from_namespace(RecipeConfig, args)
    if cfg.minutes <= 0:
        raise UserError("--minutes must be positive")
    data = run(cfg)
    print(json.dumps(data.get("headline", data), indent=1))
    return 0

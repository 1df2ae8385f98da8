"""Curriculum RL with DRPO (DRTriton section 4): `drtriton rl --model SFT_CKPT --programs P.jsonl`.

Each step: sample `prompts_per_step` programs of the current level, draw `group_size` rollouts
per prompt from the policy (HFPolicy over the model being trained), judge every rollout with the
sandboxed batch verifier (correctness, and log speed-up on a GPU), and take the DRPO update
(drpo.py; its docstring lists every departure from the DRPO/DisCO and DRTriton papers). GRPO
(`--loss grpo`) is the ablation. Every `eval_every` steps the held-out pass@1 of the current
level decides the curriculum (curriculum.py): above 50% advance a level, a plateau stops.

How this loop departs from the paper besides the loss: held-out programs are a seeded sample of
each level of the same program file unless `--heldout` names another file; pass@1 is one sample
per held-out program at the rollout temperature; rollouts are generated with transformers
in-process (slow for large models) unless `--rollout-url` names a vLLM/SGLang server, whose
samples are re-tokenized and whose weights are refreshed every `--sync-every` steps
(rollout.ServerRollouts states what that changes). `--max-minutes` ends the run cleanly.

Outputs in OUT: metrics.jsonl (one line per step and per evaluation), metrics.svg (a plot),
checkpoint-<step>/ (resume with --resume) and the final model in the HF layout.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drtriton.errors import UserError
from drtriton.train import checkpoint
from drtriton.train.budget import Budget
from drtriton.train.curriculum import CurriculumState, by_level, split_by_level, update
from drtriton.train.drpo import DRPOConfig, GRPOConfig
from drtriton.train.rewards import BatchVerifier, Reward, Verifier


@dataclass
class RLConfig:
    model: str = field(metadata={"help": "local checkpoint (the SFT model), HF layout"})
    programs: str = field(metadata={"help": "program records (JSONL with id, level, source)"})
    out: str = field(metadata={"help": "output directory: metrics, checkpoints, final model"})
    heldout: str = field(default="", metadata={"help": "held-out program records; default: "
                                               "a sample of each level of --programs"})  # fmt: skip
    heldout_per_level: int = field(default=64, metadata={"help": "held-out programs per level"})
    levels: str = field(default="1-5", metadata={"help": "curriculum levels, e.g. 1-5 or 1,2"})
    loss: str = field(default="drpo", metadata={"help": "drpo | grpo (ablation)"})
    steps: int = field(default=1000, metadata={"help": "total policy steps (all levels)"})
    prompts_per_step: int = field(default=8, metadata={"help": "programs per step (per device)"})
    group_size: int = field(default=8, metadata={"help": "rollouts G per program"})
    lr: float = field(default=1e-6, metadata={"help": "AdamW learning rate"})
    updates_per_batch: int = field(
        default=1, metadata={"help": "optimizer steps per rollout batch"}
    )
    warmup_updates: int = field(default=10, metadata={"help": "optimizer steps over which the "
                                "learning rate rises linearly to --lr (a fresh AdamW's first "
                                "step moves every weight by the full lr); 0: none"})  # fmt: skip
    micro_batch: int = field(default=4, metadata={"help": "sequences per forward/backward"})
    max_grad_norm: float = field(default=1.0, metadata={"help": "gradient clipping"})
    temperature: float = field(default=1.0, metadata={"help": "rollout sampling temperature"})
    top_p: float = field(default=1.0, metadata={"help": "rollout nucleus sampling"})
    max_new_tokens: int = field(default=4096, metadata={"help": "completion tokens per rollout"})
    beta: float = field(default=100.0, metadata={"help": "DRPO KL hinge weight (paper 100)"})
    tau: float = field(default=5.0, metadata={"help": "DRPO negatives temperature (paper 5)"})
    lam: float = field(default=0.1, metadata={"help": "DRPO speed softmax lambda (paper 0.1)"})
    delta: float = field(default=1e-3, metadata={"help": "DRPO KL bound (paper 0.001)"})
    backtracks: int = field(default=DRPOConfig.backtracks, metadata={"help": "DRPO: halvings "
                            "of an update past the KL bound before it is undone; 0: the "
                            "hinge penalty alone (the paper)"})  # fmt: skip
    speed_margin: float = field(default=0.0, metadata={"help": "DRPO: correct rollouts within "
                                "this log speed-up of the group's fastest weigh alike (timing "
                                "noise; 0: the paper's weights)"})  # fmt: skip
    clip_eps: float = field(default=0.2, metadata={"help": "GRPO ratio clipping"})
    advance_at: float = field(default=0.5, metadata={"help": "held-out pass@1 to advance a level"})
    eval_every: int = field(default=20, metadata={"help": "steps between held-out evaluations"})
    eval_size: int = field(default=64, metadata={"help": "held-out programs per evaluation"})
    patience: int = field(default=3, metadata={"help": "evaluations without gain = plateau"})
    min_delta: float = field(default=0.01, metadata={"help": "pass@1 gain that is progress"})
    verify_device: str = field(default="cpu", metadata={"help": "verifier device: cpu or cuda"})
    verify_timeout: float = field(
        default=0.0, metadata={"help": "seconds per candidate; 0: default"}
    )
    verify_workers: int = field(default=0, metadata={"help": "verifier processes; 0: default"})
    verify_runs: int = field(default=0, metadata={"help": "timed calls per correct rollout on a "
                             "GPU (its speed reward); 0: the verifier's 30"})  # fmt: skip
    save_every: int = field(default=50, metadata={"help": "steps between checkpoints"})
    resume: bool = field(default=False, metadata={"help": "continue from OUT's latest checkpoint"})
    mixed_precision: str = field(default="no", metadata={"help": "no | bf16 | fp16"})
    seed: int = field(default=0, metadata={"help": "sampling and data seed"})
    dtype: str = field(default="float32", metadata={"help": "weights: float32 | bfloat16"})
    gradient_checkpointing: bool = field(default=False, metadata={"help": "recompute "
                                         "activations in backward (long sequences)"})  # fmt: skip
    max_minutes: float = field(default=0.0, metadata={"help": "wall-clock budget: no step "
                               "starts that would end past it; then save and return; 0: none"})  # fmt: skip
    metrics: str = field(default="", metadata={"help": "metrics JSONL (the plot beside it, "
                         ".svg); default: OUT/metrics.jsonl"})  # fmt: skip
    start_level: int = field(default=0, metadata={"help": "curriculum level to start at "
                             "(e.g. one a prior evaluation already passes); 0: the first"})  # fmt: skip
    rollout_url: str = field(default="", metadata={"help": "OpenAI-compatible server "
                             "(vLLM, SGLang) that samples rollouts; default: in-process"})  # fmt: skip
    rollout_model: str = field(default="", metadata={"help": "model name at --rollout-url"})
    rollout_key_env: str = field(default="OPENAI_API_KEY", metadata={"help": "env var of its "
                                 "key (not needed for localhost)"})  # fmt: skip
    sync_every: int = field(default=0, metadata={"help": "steps between weight syncs to the "
                            "server: save OUT/sync (HF layout), then run --sync-cmd"})  # fmt: skip
    sync_cmd: str = field(default="", metadata={"help": "shell command that makes the server "
                          "load OUT/sync ({dir} is replaced), e.g. a curl to SGLang's "
                          "/update_weights_from_disk"})  # fmt: skip
    verify_compile_baseline: bool = field(default=True, metadata={"help": "also time "
                                          "torch.compile of each task (slow on many tasks)"})  # fmt: skip


def _programs(cfg: RLConfig) -> tuple[dict[int, list], dict[int, list], list[int]]:
    from drtriton.jsonl import read_jsonl
    from drtriton.synth import parse_levels

    records = [r for r in read_jsonl(cfg.programs) if r.get("source")]
    train, heldout = split_by_level(records, 0 if cfg.heldout else cfg.heldout_per_level, cfg.seed)
    if cfg.heldout:
        heldout = by_level([r for r in read_jsonl(cfg.heldout) if r.get("source")])
    levels = [lv for lv in parse_levels(cfg.levels) if train.get(lv)]
    if not levels:
        raise UserError(f"{cfg.programs}: no programs at levels {cfg.levels}")
    return train, heldout, levels


def programs_precision(cfg: RLConfig) -> str:
    """The mode the rollouts are verified in: the program records' own (fp32 without the
    field), one for the training and the held-out programs alike, so that the rewards and the
    held-out pass rates judge one thing."""
    from drtriton.jsonl import read_jsonl, run_precision

    paths = [cfg.programs] + ([cfg.heldout] if cfg.heldout else [])
    return run_precision([r for path in paths for r in read_jsonl(path)], " and ".join(paths))


def _judge(verifier: Verifier, rollouts: Any) -> list[Reward]:
    tasks = [rollouts.records[int(g)]["source"] for g in rollouts.groups]
    return verifier.judge(tasks, [c.code for c in rollouts.completions])


def _rollout_metrics(rewards: list[Reward], completions: list, seconds: float) -> dict[str, float]:
    correct = [r for r in rewards if r.correct]
    timed = [r.log_speedup for r in correct if r.log_speedup is not None]
    reward = [(1.0 + (r.log_speedup or 0.0)) if r.correct else 0.0 for r in rewards]
    tokens = sum(c.completion_tokens for c in completions)
    return {"pass@1": len(correct) / max(1, len(rewards)),
            "mean_log_speedup": sum(timed) / len(timed) if timed else None,
            "reward": sum(reward) / max(1, len(reward)),
            "tokens_per_s": tokens / max(seconds, 1e-9),
            "completion_tokens": tokens / max(1, len(completions))}  # fmt: skip


def evaluate(policy: Any, verifier: Verifier, records: list[dict], size: int) -> dict[str, float]:
    """Held-out pass@1 (one sample per program) and mean log speed-up of the correct ones."""
    from drtriton.policy.prompts import prompt_for
    from drtriton.train.rollout import sample

    records = records[:size]
    if not records:
        return {"pass@1": 0.0, "mean_log_speedup": None}
    t0 = time.perf_counter()
    rollouts = sample(policy, records, [prompt_for(r) for r in records], 1)
    rewards = _judge(verifier, rollouts)
    m = _rollout_metrics(rewards, rollouts.completions, time.perf_counter() - t0)
    return {"pass@1": m["pass@1"], "mean_log_speedup": m["mean_log_speedup"]}


# The final model's config.json counts the RL steps behind it (all runs that led to it).
RL_STEPS_KEY = "drtriton_rl_steps"


def _pick(pool: list[dict], k: int, seed: int, step: int, rank: int) -> list[dict]:
    # Seeded by (seed, step, rank) alone, so a resumed run draws what the first run would have.
    rng = random.Random(f"{seed}/{step}/{rank}")
    return rng.sample(pool, k) if len(pool) >= k else [rng.choice(pool) for _ in range(k)]


def train(cfg: RLConfig, verifier: Verifier | None = None) -> dict[str, Any]:
    """Runs curriculum RL; returns the final curriculum state and last step metrics."""
    import torch
    from accelerate import Accelerator
    from accelerate.utils import set_seed

    from drtriton.policy.hf import HFPolicy, SamplingConfig, load_model
    from drtriton.policy.prompts import prompt_for
    from drtriton.train.plot import plot_metrics
    from drtriton.train.rollout import sample
    from drtriton.train.update import StepInputs, policy_update

    if cfg.loss not in ("drpo", "grpo"):
        raise UserError(f"--loss must be drpo or grpo, not {cfg.loss!r}")
    resume_from = checkpoint.resume_point(cfg.out) if cfg.resume else None  # before any loading
    train_sets, heldout, levels = _programs(cfg)
    verifier = verifier or BatchVerifier(cfg.verify_device, cfg.verify_timeout or None,
                                         cfg.verify_workers or None,
                                         cfg.verify_compile_baseline,
                                         cfg.verify_runs or None,
                                         programs_precision(cfg))  # fmt: skip
    accelerator = Accelerator(mixed_precision=cfg.mixed_precision)
    set_seed(cfg.seed)
    model, tokenizer = load_model(cfg.model, dtype=cfg.dtype)
    if cfg.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    warmup = max(1, cfg.warmup_updates)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: min(1.0, (k + 1) / warmup))
    model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)
    sampling = SamplingConfig(cfg.temperature, cfg.top_p, cfg.max_new_tokens, cfg.prompts_per_step)
    policy = _rollout_policy(cfg, HFPolicy(accelerator.unwrap_model(model), tokenizer, sampling))
    drpo = DRPOConfig(beta=cfg.beta, tau=cfg.tau, lam=cfg.lam, delta=cfg.delta,
                      speed_margin=cfg.speed_margin, backtracks=cfg.backtracks)  # fmt: skip
    grpo = GRPOConfig(clip_eps=cfg.clip_eps)

    if cfg.start_level and cfg.start_level not in levels:
        raise UserError(f"--start-level {cfg.start_level} is not among levels {levels}")
    step, state = 0, CurriculumState(cfg.start_level or levels[0])
    # Steps an earlier RL run took from this model (its config.json, written below): the draw
    # of programs goes on from there, so a run continued from a finished one (the recipe's
    # --init-model) does not train on the same batches again.
    drawn = int(getattr(model.config, RL_STEPS_KEY, 0) or 0)
    if resume_from is not None:
        saved = checkpoint.load(accelerator, resume_from)
        step, state = saved["step"], CurriculumState(**saved["curriculum"])
    metrics_path = cfg.metrics or f"{cfg.out}/metrics.jsonl"
    log = checkpoint.MetricsLog(metrics_path, accelerator.is_main_process, resume=cfg.resume)
    metrics: dict[str, Any] = {}
    budget, totals, last_step_s = Budget(cfg.max_minutes), Totals(), 0.0
    interrupts = checkpoint.Interrupts(accelerator, cfg.out)
    with interrupts.saving(lambda: (step, {"curriculum": state.to_dict()})):
        while step < cfg.steps and not state.done and not budget.spent(accelerator, last_step_s):
            records = _pick(train_sets[state.level], cfg.prompts_per_step, cfg.seed, drawn + step,
                            accelerator.process_index)  # fmt: skip
            t0 = time.perf_counter()
            rollouts = sample(policy, records, [prompt_for(r) for r in records], cfg.group_size)
            t_gen = time.perf_counter() - t0
            rewards = _judge(verifier, rollouts)
            t_verify = time.perf_counter() - t0 - t_gen
            inputs = StepInputs(
                rollouts.seqs,
                torch.tensor([r.correct for r in rewards]),
                torch.tensor([r.log_speedup or 0.0 for r in rewards], dtype=torch.float32),
                rollouts.groups,
            )
            with interrupts.held():  # the update and the step count that names it
                stats = policy_update(accelerator, model, optimizer, inputs, cfg.loss, drpo, grpo,
                                      pad_id=tokenizer.pad_token_id, micro_batch=cfg.micro_batch,
                                      updates=cfg.updates_per_batch,
                                      max_grad_norm=cfg.max_grad_norm, scheduler=scheduler)  # fmt: skip
                step += 1
            stats["lr"] = scheduler.get_last_lr()[0]
            t_update = time.perf_counter() - t0 - t_gen - t_verify
            gen_tokens = sum(c.completion_tokens for c in rollouts.completions)
            train_tokens = cfg.updates_per_batch * sum(len(p) + len(g) for p, g in rollouts.seqs)
            # no code: never sent to the verifier
            judged = sum(r.status != "no_code" for r in rewards)
            distinct = getattr(verifier, "last_distinct", judged)
            totals.add(gen_tokens, t_gen, len(rewards), judged, distinct, t_verify, train_tokens,
                       t_update)  # fmt: skip
            metrics = {"step": step, "level": state.level,
                       **_rollout_metrics(rewards, rollouts.completions, t_gen), **stats,
                       "gen_s": t_gen, "verify_s": t_verify, "update_s": t_update,
                       "rollouts_verified": judged,
                       # identical rollouts of one prompt share a verification (BatchVerifier)
                       "rollouts_distinct": distinct,
                       "rollouts_verified_per_min": _per_min(judged, t_verify),
                       "train_tokens_per_s": train_tokens / max(t_update, 1e-9),
                       "elapsed_s": budget.elapsed}  # fmt: skip
            log.write(metrics)
            last_step_s = time.perf_counter() - t0
            if step % cfg.eval_every == 0 or step == cfg.steps:
                # A level too small to hold programs out is judged on training programs (logged).
                pool = heldout.get(state.level) or train_sets[state.level]
                result = evaluate(policy, verifier, pool, cfg.eval_size)
                result["heldout"] = bool(heldout.get(state.level))
                new = update(state, result["pass@1"], levels, cfg.advance_at, cfg.patience,
                             cfg.min_delta)  # fmt: skip
                log.write({"step": step, "level": state.level, "eval": True,
                           **{f"eval_{k}": v for k, v in result.items()},
                           "next_level": new.level, "done": new.done})  # fmt: skip
                state = new
            if step % cfg.save_every == 0 or step == cfg.steps or state.done:
                checkpoint.save(accelerator, cfg.out, step, {"curriculum": state.to_dict()})
            if cfg.rollout_url and cfg.sync_every and step % cfg.sync_every == 0:
                _sync(accelerator, model, tokenizer, cfg)
    if step and _unsaved(cfg.out, step):  # a time budget ended the loop between checkpoints
        checkpoint.save(accelerator, cfg.out, step, {"curriculum": state.to_dict()})
    setattr(accelerator.unwrap_model(model).config, RL_STEPS_KEY, drawn + step)
    checkpoint.save_final(accelerator, model, tokenizer, cfg.out)
    if accelerator.is_main_process:
        plot_metrics(metrics_path, str(Path(metrics_path).with_suffix(".svg")))
    return {"step": step, "curriculum": state.to_dict(), "last": metrics,
            "seconds": budget.elapsed, "timed_out": step < cfg.steps and not state.done,
            **totals.rates()}  # fmt: skip


def _rollout_policy(cfg: RLConfig, local: Any) -> Any:
    """The in-process HFPolicy, or a server's samples re-tokenized for the update."""
    if not cfg.rollout_url:
        return local
    from drtriton.policy import OpenAIConfig, OpenAIPolicy
    from drtriton.train.rollout import ServerRollouts

    if not cfg.rollout_model:
        raise UserError("--rollout-url needs --rollout-model (the server's model name)")
    server = OpenAIPolicy(OpenAIConfig(cfg.rollout_model, cfg.rollout_url, cfg.rollout_key_env,
                                       cfg.temperature, cfg.top_p, cfg.max_new_tokens))  # fmt: skip
    return ServerRollouts(server, local.tokenizer)


def _sync(accelerator: Any, model: Any, tokenizer: Any, cfg: RLConfig) -> None:
    """Saves the current weights to OUT/sync and runs the command that reloads the server."""
    import subprocess

    target = f"{cfg.out}/sync"
    checkpoint.save_final(accelerator, model, tokenizer, target)
    if cfg.sync_cmd and accelerator.is_main_process:
        subprocess.run(cfg.sync_cmd.replace("{dir}", target), shell=True, check=True)
    accelerator.wait_for_everyone()


def _per_min(count: int, seconds: float) -> float | None:
    return 60.0 * count / seconds if count and seconds > 0 else None


def _unsaved(out: str, step: int) -> bool:
    last = checkpoint.latest(out)
    return last is None or int(last.name.split("-")[1]) < step


@dataclass
class Totals:
    """Throughput over the whole run (the per-step lines hold each step's own rates)."""

    gen_tokens: int = 0
    gen_s: float = 0.0
    rollouts: int = 0
    verified: int = 0  # rollouts with code, judged by the verifier
    distinct: int = 0  # of those, distinct (task, code) pairs: the verifications actually run
    verify_s: float = 0.0
    train_tokens: int = 0
    update_s: float = 0.0

    def add(self, gen_tokens: int, gen_s: float, rollouts: int, verified: int, distinct: int,
            verify_s: float, train_tokens: int, update_s: float) -> None:  # fmt: skip
        self.gen_tokens += gen_tokens
        self.gen_s += gen_s
        self.rollouts += rollouts
        self.verified += verified
        self.distinct += distinct
        self.verify_s += verify_s
        self.train_tokens += train_tokens
        self.update_s += update_s

    def rates(self) -> dict[str, Any]:
        return {"gen_tokens_per_s": self.gen_tokens / max(self.gen_s, 1e-9),
                "rollouts_verified_per_min": _per_min(self.verified, self.verify_s),
                "train_tokens_per_s": self.train_tokens / max(self.update_s, 1e-9),
                "rollouts": self.rollouts, "rollouts_verified": self.verified,
                "rollouts_distinct": self.distinct,
                "gen_tokens": self.gen_tokens,
                "gen_s": self.gen_s, "verify_s": self.verify_s, "update_s": self.update_s}  # fmt: skip


def register(subparsers: argparse._SubParsersAction) -> None:
    from drtriton.train.args import add_arguments

    p = subparsers.add_parser("rl", help="curriculum RL (DRPO or GRPO) with verified rewards",
                              description=__doc__.split("\n\n")[0])  # fmt: skip
    add_arguments(p, RLConfig)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from drtriton.train.args import from_namespace

    cfg = from_namespace(RLConfig, args)
    if not (Path(cfg.model) / "config.json").is_file():
        raise UserError(f"{cfg.model}: not a model checkpoint (no config.json)")
    print(json.dumps(train(cfg)))
    return 0

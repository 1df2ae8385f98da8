"""Held-out evaluation of a policy on synthetic programs: pass@1 and speed-up over eager PyTorch.

One completion per program (pass@1 as sampled at the policy's temperature; greedy when it is 0),
judged by the verifier. Speed-ups are over the correct outputs only, as the verifier measures
them (eager time / Triton time, GPU only): their mean log, its exponential (the geometric mean)
and the arithmetic mean; `fast1` is the share of all programs solved correctly and faster than
eager (KernelBench's fast_1). Reported overall and per level, with generation and verification
throughput, and the verifier's statuses (why the wrong ones failed: no_code, compile_error,
runtime_error, mismatch, timeout, ...). `samples` (a JSONL path) receives one line per program:
id, level, status, the verifier's reason, correct and the extracted code, for reading what the
model wrote.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import Counter
from typing import Any

from drtriton.train.rewards import Reward, Verifier
from drtriton.train.stats import program_means, rate_interval


def summarize(rewards: list[Reward], records: list[dict] | None = None) -> dict[str, Any]:
    """pass@1, speed-up statistics and fast1 of one set of verdicts; with the `records` they
    judge (ids PROGRAM or PROGRAM#k), pass@1's 95% interval over programs too (stats.py)."""
    correct = [r for r in rewards if r.correct]
    logs = [r.log_speedup for r in correct if r.log_speedup is not None]
    mean_log = sum(logs) / len(logs) if logs else None
    interval: dict[str, Any] = {}
    if records is not None:
        rows = [{"id": rec.get("id"), "correct": r.correct}
                for rec, r in zip(records, rewards, strict=True)]  # fmt: skip
        rates = program_means(rows)
        _, lo, hi = rate_interval(rates)
        interval = {"programs": len(rates),
                    "pass@1_ci": None if math.isnan(lo) else [lo, hi]}  # fmt: skip
    return {
        "n": len(rewards),
        **interval,
        "pass@1": len(correct) / len(rewards) if rewards else 0.0,
        "timed": len(logs),
        "mean_log_speedup": mean_log,
        "geomean_speedup": math.exp(mean_log) if mean_log is not None else None,
        "mean_speedup": sum(math.exp(x) for x in logs) / len(logs) if logs else None,
        "fast1": sum(x > 0 for x in logs) / len(rewards) if rewards else 0.0,
    }


def evaluate_policy(policy: Any, verifier: Verifier, records: list[dict[str, Any]],
                    samples: str = "") -> dict:  # fmt: skip
    """Samples one completion per record, verifies it, and reports overall and per level."""
    from drtriton.policy.prompts import prompt_for

    if not records:
        return {**summarize([], []), "per_level": {}}
    t0 = time.perf_counter()
    groups = policy.generate([prompt_for(r) for r in records], 1)
    t_gen = time.perf_counter() - t0
    completions = [g[0] for g in groups]
    rewards = verifier.judge([r["source"] for r in records], [c.code for c in completions])
    t_verify = time.perf_counter() - t0 - t_gen
    levels: dict[int, list[tuple[dict, Reward]]] = {}
    for record, reward in zip(records, rewards, strict=True):
        levels.setdefault(int(record.get("level", 0)), []).append((record, reward))
    if samples:
        _write_samples(samples, records, completions, rewards)
    tokens = sum(c.completion_tokens for c in completions)
    judged = sum(bool(c.code) for c in completions)
    per_level = {str(lv): summarize([w for _, w in pairs], [r for r, _ in pairs])
                 for lv, pairs in sorted(levels.items())}  # fmt: skip
    return {
        **summarize(rewards, records),
        "per_level": per_level,
        "statuses": dict(Counter(r.status for r in rewards).most_common()),
        "no_code": sum(not c.code for c in completions),
        "truncated": sum(c.finish_reason == "length" for c in completions),
        "mean_completion_tokens": tokens / len(completions),
        "gen_s": t_gen,
        "gen_tokens_per_s": tokens / max(t_gen, 1e-9),
        # One batch (the recipe's) decodes as many steps as its longest completion: the cost
        # per step, to compare across runs (58 ms and 8 ms for one model on the H200).
        "decode_ms_per_step": 1e3 * t_gen / max(1, max(c.completion_tokens for c in completions)),
        "verify_s": t_verify,
        # Completions without code never reach the verifier: the rate counts the judged ones.
        "verified_per_min": 60.0 * judged / t_verify if judged and t_verify > 0 else None,
    }


def _write_samples(path: str, records: list[dict], completions: list, rewards: list) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        for record, c, r in zip(records, completions, rewards, strict=True):
            line = {"id": record.get("id"), "level": record.get("level"), "status": r.status,
                    "correct": r.correct, "log_speedup": r.log_speedup, "reason": r.reason,
                    "completion_tokens": c.completion_tokens,
                    "finish_reason": c.finish_reason, "code": c.code}  # fmt: skip
            f.write(json.dumps(line) + "\n")
    os.replace(tmp, path)

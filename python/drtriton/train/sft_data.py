"""`drtriton sft-data`: verified level-1 pairs per operator for the SFT warm-up (paper, appendix C).

The paper samples 200 level-1 programs for each of its 61 operators, has DeepSeek-R1 write
Triton for them, keeps the pairs that pass execution-based checks (1,464 of 12,200), then
evaluates the SFT+RL model per operator and adds targeted pairs for the operators it fails on
(562 more). Here:
1. Programs: CSP-DAG level-1 programs, drawn in chunks and bucketed by operator until every
   operator has `per_op` (or the draw budget, `per_op * operators * 8` programs, runs out:
   some operators admit few distinct level-1 programs under the bounds: with the paper's
   2^34-2^35 FLOPs, cheap elementwise operators are rare at level 1, so `--preset tiny`
   covers all operators far faster; operators left short are listed in the summary).
2. Answers: the C++ teacher (`--source teacher`, deterministic, no cost; with
   `--generic-shapes` its kernels read sizes at run time, so a small model copies size names
   instead of computing products and strides) and/or an OpenAI-compatible model
   (`--source api --api-model NAME`), `samples` answers per program.
3. Filtering: every answer goes through the batch verifier; only correct pairs are written.
4. Targeted augmentation: `--ops a,b` restricts the run to named operators (with another
   `--seed`, the programs differ); `weak_ops(pairs)` lists the operators whose success rate is
   below a threshold in any verdict-bearing pairs file (e.g. an evaluation of the SFT model).
The summary (per operator: programs, answers, verified) is printed as JSON.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drtriton.cli_checks import PRECISION_HELP
from drtriton.errors import UserError
from drtriton.files import removed_if_left_empty
from drtriton.jsonl import require_precision


@dataclass
class SFTDataConfig:
    out: str = field(metadata={"help": "pair records (JSONL), appended"})
    per_op: int = field(default=200, metadata={"help": "level-1 programs per operator (paper 200)"})
    ops: str = field(default="", metadata={"help": "comma-separated operators; default: all"})
    source: str = field(default="teacher", metadata={"help": "teacher | api | both"})
    samples: int = field(default=1, metadata={"help": "answers per program and source"})
    api_model: str = field(default="", metadata={"help": "model name at the API endpoint"})
    base_url: str = field(default="https://api.openai.com/v1", metadata={"help": "API base URL"})
    key_env: str = field(default="OPENAI_API_KEY", metadata={"help": "env var with the API key"})
    preset: str = field(default="paper", metadata={"help": "synthesis bounds preset"})
    seed: int = field(default=0, metadata={"help": "synthesis seed"})
    # The programs' mode (a field of every pair) and the verifier's: one mode per output file.
    precision: str = field(default="fp32", metadata={"help": PRECISION_HELP})
    device: str = field(default="cpu", metadata={"help": "verifier device: cpu or cuda"})
    timeout: float = field(
        default=0.0, metadata={"help": "verifier seconds per answer; 0: default"}
    )
    workers: int = field(default=0, metadata={"help": "verifier processes; 0: default"})
    dim_min: int = field(
        default=0,
        metadata={
            "help": "smallest tensor dim of the synthesized programs; 0: the preset's (2 keeps "
            "unit dims, which generic answers treat as broadcast structure, out of the data)"
        },
    )
    generic_shapes: bool = field(
        default=False,
        metadata={
            "help": "teacher candidates read sizes at run time (one text per operator chain "
            "and rank)"
        },
    )


def level1_programs(
    per_op: int,
    ops: set[str] | None,
    preset: str,
    seed: int,
    dim_min: int = 0,
    precision: str = "fp32",
) -> list[dict]:
    """Up to `per_op` distinct level-1 programs per operator (all catalog operators by default),
    each record naming `precision`, the mode it is verified in (as `drtriton synth` writes)."""
    from drtriton.catalog import ops as catalog_ops
    from drtriton.synth import Synthesizer

    bounds = {"dim_min": dim_min} if dim_min > 0 else {}
    synth = Synthesizer(1, preset, seed, 1, **bounds)
    buckets: dict[str, list[dict]] = defaultdict(list)
    budget = per_op * len(catalog_ops()) * 8  # operators come up about uniformly
    drawn = 0
    while drawn < budget:
        batch = synth.next(min(1024, budget - drawn))
        if not batch:
            break
        drawn += len(batch)
        for r in batch:
            op = r["ops"][0]
            if (ops is None or op in ops) and len(buckets[op]) < per_op:
                buckets[op].append({**r, "precision": precision})
        if ops and all(len(buckets[o]) >= per_op for o in ops):
            break
    return [r for op in sorted(buckets) for r in buckets[op]]


def _policies(cfg: SFTDataConfig) -> list[Any]:
    from drtriton.policy import OpenAIConfig, OpenAIPolicy, TemplatePolicy

    if cfg.source not in ("teacher", "api", "both"):
        raise UserError(f"--source must be teacher, api or both, not {cfg.source!r}")
    out: list[Any] = []
    if cfg.source in ("teacher", "both"):
        out.append(TemplatePolicy(generic_shapes=cfg.generic_shapes))
    if cfg.source in ("api", "both"):
        if not cfg.api_model:
            raise UserError("--source api needs --api-model")
        out.append(OpenAIPolicy(OpenAIConfig(cfg.api_model, cfg.base_url, cfg.key_env)))
    return out


def build(cfg: SFTDataConfig, verifier: Any = None) -> dict[str, dict[str, int]]:
    """Writes verified pairs to cfg.out; returns the per-operator summary."""
    from drtriton.policy import prompt_for
    from drtriton.train.rewards import BatchVerifier

    ops = {o.strip() for o in cfg.ops.split(",") if o.strip()} or None
    require_precision(cfg.out, cfg.precision, "pairs")  # before the programs are drawn
    programs = level1_programs(cfg.per_op, ops, cfg.preset, cfg.seed, cfg.dim_min, cfg.precision)
    if not programs:
        raise UserError("no level-1 programs for the requested operators")
    verifier = verifier or BatchVerifier(cfg.device, cfg.timeout or None, cfg.workers or None,
                                         precision=cfg.precision)  # fmt: skip
    summary: dict[str, Counter] = defaultdict(Counter)
    for op in ops or ():
        summary[op]["programs"] += 0  # requested but never drawn: listed with 0
    for r in programs:
        summary[r["ops"][0]]["programs"] += 1
    Path(cfg.out).parent.mkdir(parents=True, exist_ok=True)
    # A run that fails before its first pair (an API error, say) leaves no empty file behind.
    with removed_if_left_empty(cfg.out), open(cfg.out, "a") as f:
        for policy in _policies(cfg):
            groups = policy.generate([prompt_for(r) for r in programs], cfg.samples)
            flat = [
                (r, i, c) for r, g in zip(programs, groups, strict=True) for i, c in enumerate(g)
            ]
            rewards = verifier.judge(
                [r["source"] for r, _, _ in flat], [c.code for _, _, c in flat]
            )
            for (r, i, c), reward in zip(flat, rewards, strict=True):
                summary[r["ops"][0]]["answers"] += 1
                if not reward.correct:
                    continue
                summary[r["ops"][0]]["verified"] += 1
                pair = {**r, "id": f"{r['id']}#{policy.name}{i}", "completion": c.code,
                        "teacher": policy.name, "status": reward.status, "correct": True}  # fmt: skip
                f.write(json.dumps(pair) + "\n")
    return {op: dict(c) for op, c in sorted(summary.items())}


def weak_ops(pairs: list[dict[str, Any]], threshold: float = 0.2) -> list[str]:
    """Operators whose verified fraction in `pairs` (records with `ops` and `correct`) is below
    `threshold`: the targets of the paper's augmentation stage."""
    seen: Counter = Counter()
    good: Counter = Counter()
    for p in pairs:
        for op in set(p.get("ops") or []):
            seen[op] += 1
            good[op] += bool(p.get("correct"))
    return sorted(op for op in seen if good[op] / seen[op] < threshold)

"""`drtriton sft-data`: verified pairs for the SFT warm-up (paper, appendix C), level 1 per operator
and, beyond the paper, synthesized chains of levels >= 2.

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
5. Chains (a departure: the paper's SFT data is level 1 only): `--levels 1-3` adds
   `per_level` programs of each level >= 2, drawn as `drtriton synth` draws them (one stream
   over those levels, which it takes in turn). The held-out evaluation and the curriculum go
   to level 5, and a model that saw single operators alone composed none (held-out level-2
   pass@1 0/12 in every 2026-11-30 run: examples/train/README.md). With `--ops`, a chain
   qualifies when it holds one of the named operators.
Long runs resume: answers are judged in batches of JUDGE_BATCH programs, each batch's pairs
written and flushed and its answer ids then appended to OUT.judged; the same command run again
skips every answer listed there or in OUT, and prints a progress line on stderr per batch.
The summary (per level-1 operator, and per level >= 2 as "level N": programs, answers,
verified, counting this run's answers) is printed as JSON; the operator coverage of the output file (pair_coverage.py) is
written beside it and printed as a table.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drtriton.cli_checks import PRECISION_HELP
from drtriton.errors import UserError
from drtriton.files import removed_if_left_empty
from drtriton.jsonl import require_precision


@dataclass
class SFTDataConfig:
    out: str = field(
        metadata={
            "help": "pair records (JSONL), appended; OUT.judged lists the answers judged, so "
            "the same command run again resumes where it stopped"
        }
    )
    per_op: int = field(default=200, metadata={"help": "level-1 programs per operator (paper 200)"})
    levels: str = field(
        default="1",
        metadata={
            "help": "levels, e.g. 1, 1-3 or 2,3: level 1 per operator (--per-op, the paper); "
            "each level N >= 2, --per-level synthesized chains of N operators (a departure)"
        },
    )
    # 200 per operator over the 60 operators the synthesizer draws, and 4,000 chains of each
    # of levels 2 and 3: about 20,000 programs for --levels 1-3 (issue 23 item 1).
    per_level: int = field(
        default=4000, metadata={"help": "programs per level >= 2 (with --levels)"}
    )
    ops: str = field(
        default="",
        metadata={
            "help": "comma-separated operators (a chain qualifies holding one); default: all"
        },
    )
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

    buckets: dict[str, list[dict]] = defaultdict(list)
    budget = per_op * len(catalog_ops()) * 8  # operators come up about uniformly
    for r in _drawn(_synthesizer(1, preset, seed, dim_min), budget):
        op = r["ops"][0]
        if (ops is None or op in ops) and len(buckets[op]) < per_op:
            buckets[op].append({**r, "precision": precision})
            if ops and all(len(buckets[o]) >= per_op for o in ops):
                break
    return [r for op in sorted(buckets) for r in buckets[op]]


def _synthesizer(levels: int | list[int], preset: str, seed: int, dim_min: int) -> Any:
    from drtriton.synth import Synthesizer

    bounds = {"dim_min": dim_min} if dim_min > 0 else {}
    return Synthesizer(levels, preset, seed, 1, **bounds)


def _drawn(synth: Any, budget: int) -> Iterator[dict]:
    """Records from `synth`, drawn in batches of up to 1024, until `budget` records are drawn
    or the stream ends."""
    drawn = 0
    while drawn < budget:
        batch = synth.next(min(1024, budget - drawn))
        if not batch:
            return
        drawn += len(batch)
        yield from batch


def chain_programs(
    per_level: int,
    levels: list[int],
    ops: set[str] | None,
    preset: str,
    seed: int,
    dim_min: int = 0,
    precision: str = "fp32",
) -> list[dict]:
    """Up to `per_level` distinct programs of each level in `levels` (all >= 2), holding one of
    `ops` when given, in level order. Their ids name the level: the level-1 programs of the same
    seed share the synthesizer's ids (`synth-PRESET-SEED-INDEX`), and a pairs file's ids must be
    unique (verify-batch resumes by id)."""
    from drtriton.catalog import ops as catalog_ops

    assert levels and min(levels) >= 2, f"chain levels must be >= 2, not {levels}"
    buckets: dict[int, list[dict]] = {level: [] for level in levels}
    # The stream takes the levels in turn; a chain of N operators holds one of k named ones
    # about N * k / 60 of the time, so the budget grows as the named set shrinks.
    share = 1 if ops is None else -(-len(catalog_ops()) // len(ops))
    budget = per_level * len(levels) * 8 * share
    for r in _drawn(_synthesizer(levels, preset, seed, dim_min), budget):
        bucket = buckets[r["level"]]
        if len(bucket) < per_level and (ops is None or ops & set(r["ops"])):
            rid = f"synth-{preset}-{seed}-l{r['level']}-{r['index']}"
            bucket.append({**r, "id": rid, "precision": precision})
            if all(len(b) >= per_level for b in buckets.values()):
                break
    return [r for level in levels for r in buckets[level]]


def _programs(cfg: SFTDataConfig, levels: list[int], ops: set[str] | None) -> list[dict]:
    """Level 1 per operator (as before levels existed), then the chains."""
    programs = []
    if 1 in levels:
        programs += level1_programs(cfg.per_op, ops, cfg.preset, cfg.seed, cfg.dim_min,
                                    cfg.precision)  # fmt: skip
    chains = [level for level in levels if level >= 2]
    if chains:
        programs += chain_programs(cfg.per_level, chains, ops, cfg.preset, cfg.seed,
                                   cfg.dim_min, cfg.precision)  # fmt: skip
    if not programs:
        what = "level-1" if levels == [1] else f"level {cfg.levels}"
        raise UserError(f"no {what} programs for the requested operators")
    return programs


def _summary_key(record: dict) -> str:
    """Level 1 is summarized per operator (the paper's buckets), chains per level."""
    return record["ops"][0] if record["level"] == 1 else f"level {record['level']}"


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
    """Writes verified pairs to cfg.out and their operator coverage beside it; returns the
    summary (per level-1 operator, per level >= 2)."""
    from drtriton.synth import parse_levels
    from drtriton.train import pair_coverage
    from drtriton.train.rewards import BatchVerifier

    levels = sorted(set(parse_levels(cfg.levels)))
    ops = {o.strip() for o in cfg.ops.split(",") if o.strip()} or None
    require_precision(cfg.out, cfg.precision, "pairs")  # before the programs are drawn
    programs = _programs(cfg, levels, ops)
    verifier = verifier or BatchVerifier(cfg.device, cfg.timeout or None, cfg.workers or None,
                                         precision=cfg.precision)  # fmt: skip
    summary: dict[str, Counter] = defaultdict(Counter)
    for op in (ops or ()) if 1 in levels else ():
        summary[op]["programs"] += 0  # requested but never drawn: listed with 0
    for r in programs:
        summary[_summary_key(r)]["programs"] += 1
    Path(cfg.out).parent.mkdir(parents=True, exist_ok=True)
    policies = _policies(cfg)
    progress = _Progress(cfg.out, len(programs) * cfg.samples * len(policies))
    # A run that fails before its first pair (an API error, say) leaves no empty file behind.
    with removed_if_left_empty(cfg.out), open(cfg.out, "a") as f:
        for policy in policies:
            left = [r for r in programs if not progress.judged_all(r, policy.name, cfg.samples)]
            progress.skip((len(programs) - len(left)) * cfg.samples)
            # Batches bound what an interruption loses: each batch's pairs are written and
            # flushed, then its answers are marked judged (JUDGED_SUFFIX), and a rerun skips them.
            for start in range(0, len(left), JUDGE_BATCH):
                batch = left[start : start + JUDGE_BATCH]
                f.writelines(_verified_pairs(cfg, policy, verifier, batch, summary))
                f.flush()
                progress.mark(batch, policy.name, cfg.samples, summary)
    pair_coverage.write(cfg.out, levels)
    return {op: dict(c) for op, c in sorted(summary.items())}


# Programs a verifier call judges (each call starts its worker processes anew: ~10 s on two
# CPUs against ~1-2 s an answer in the interpreter, so 256 keep that under 5%).
JUDGE_BATCH = 256
# Beside OUT: the ids of the answers judged so far, one a line (verified or not), so that a
# rerun of the same command resumes instead of judging (and appending) them again.
JUDGED_SUFFIX = ".judged"


def _answer_id(record: dict, policy: str, sample: int) -> str:
    return f"{record['id']}#{policy}{sample}"


class _Progress:
    """What OUT and its .judged file say was judged, and a line on stderr per batch."""

    def __init__(self, out: str, total: int) -> None:
        self.path = Path(str(out) + JUDGED_SUFFIX)
        self.judged: set[str] = set()
        if self.path.exists():
            self.judged.update(x.strip() for x in self.path.read_text().splitlines() if x.strip())
        if Path(out).exists():  # pairs written before their batch was marked (an interruption)
            for line in Path(out).read_text().splitlines():
                if line.strip():
                    self.judged.add(json.loads(line).get("id", ""))
        self.total, self.done, self.resumed, self.began = total, 0, 0, time.monotonic()

    def judged_all(self, record: dict, policy: str, samples: int) -> bool:
        return all(_answer_id(record, policy, i) in self.judged for i in range(samples))

    def skip(self, answers: int) -> None:
        self.resumed += answers
        self.done += answers

    def mark(self, batch: list[dict], policy: str, samples: int,
             summary: dict[str, Counter]) -> None:  # fmt: skip
        ids = [_answer_id(r, policy, i) for r in batch for i in range(samples)]
        with open(self.path, "a") as f:
            f.writelines(x + "\n" for x in ids)
        self.done += len(ids)
        verified = sum(c["verified"] for c in summary.values())
        rate = (self.done - self.resumed) / max(time.monotonic() - self.began, 1e-9)
        resumed = f", {self.resumed} judged before" if self.resumed else ""
        print(f"sft-data: {self.done}/{self.total} answers judged ({verified} verified this run"
              f"{resumed}), {rate:.2f} answers/s", file=sys.stderr, flush=True)  # fmt: skip


def _verified_pairs(cfg: SFTDataConfig, policy: Any, verifier: Any, programs: list[dict],
                    summary: dict[str, Counter]) -> list[str]:  # fmt: skip
    """The JSON lines of `policy`'s verified answers to `programs`, counted in `summary`."""
    from drtriton.policy import prompt_for

    groups = policy.generate([prompt_for(r) for r in programs], cfg.samples)
    flat = [(r, i, c) for r, g in zip(programs, groups, strict=True) for i, c in enumerate(g)]
    rewards = verifier.judge([r["source"] for r, _, _ in flat], [c.code for _, _, c in flat])
    lines = []
    for (r, i, c), reward in zip(flat, rewards, strict=True):
        key = _summary_key(r)
        summary[key]["answers"] += 1
        if not reward.correct:
            continue
        summary[key]["verified"] += 1
        pair = {**r, "id": _answer_id(r, policy.name, i), "completion": c.code,
                "teacher": policy.name, "status": reward.status, "correct": True}  # fmt: skip
        lines.append(json.dumps(pair) + "\n")
    return lines


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

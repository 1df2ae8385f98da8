"""`drtriton eval synthetic`: a policy on held-out synthetic programs, by level.

    programs.jsonl ─► policy (template teacher or a checkpoint) ─► candidates.jsonl
        ─► verify-batch ─► verdicts.jsonl ─► results.jsonl (best variant per program)
        ─► summary.md + speedup.png (the same tables as `eval kernelbench`)

With --variants K a program is correct when any of its (distinct) K candidates is, and its
speedup is the best correct candidate's (best-of-K, as a test-time search would pick).
Resumable: programs with candidates are not sent to the policy again, and verify-batch skips
candidates it has judged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from drtriton.errors import UserError
from drtriton.evaluate.metrics import positive
from drtriton.evaluate.store import ResultStore, read_results
from drtriton.evaluate.summary import Column, fmt_ms, fmt_text, fmt_x, precision_line, write_summary
from drtriton.files import write_text_atomic
from drtriton.jsonl import read_jsonl, record_precision, require_precision, run_precision

CANDIDATES = "candidates.jsonl"
VERDICTS = "verdicts.jsonl"
RESULTS = "results.jsonl"
TIMING_KEYS = (
    "time_ms",
    "eager_ms",
    "compile_ms",
    "speedup",
    "speedup_vs_compile",
    "compile_error",
)
PROMPTS_PER_CALL = 32  # policy calls between appends: the unit of resumption

COLUMNS = (
    Column("level", "level"),
    Column("id", "id"),
    Column("status", "status"),
    Column("ok variants", "variants_correct", lambda v: "" if v is None else str(v)),
    Column("kernel ms", "time_ms", fmt_ms),
    Column("vs eager", "speedup", fmt_x),
    Column("vs compile", "speedup_vs_compile", fmt_x),
    Column("ops", "ops", lambda v: " ".join(v) if isinstance(v, list) else ""),
    Column("reason", "reason", fmt_text(80)),
)


def load_programs(path: Path) -> list[dict[str, Any]]:
    records = list(read_jsonl(path, ("id", "level", "source"), "program record"))
    unique = {str(r["id"]): r for r in records}
    if not unique:
        raise UserError(f"{path}: no program records")
    return list(unique.values())


def make_policy(spec: str, device: str) -> Any:
    """`template` (the C++ teacher) or `hf:PATH` (a local transformers checkpoint)."""
    if spec == "template":
        from drtriton.policy import TemplatePolicy

        return TemplatePolicy()
    if spec.startswith("hf:") and len(spec) > 3:
        from drtriton.policy import HFPolicy

        return HFPolicy.from_pretrained(spec[3:], device=device)
    raise UserError(f"--policy must be `template` or `hf:PATH`, not {spec!r}")


def generate_candidates(programs: Sequence[dict[str, Any]], path: Path, policy_spec: str,
                        variants: int, device: str, progress: bool = True) -> int:  # fmt: skip
    """Appends up to `variants` distinct candidates per program without any; returns how many
    programs were sent to the policy. A program the policy has no answer for gets one pair
    with `completion: null`, which verify-batch records as an error (no candidate)."""
    from tqdm import tqdm

    from drtriton.policy import prompt_for

    with ResultStore(path) as store:
        have = {str(r.get("program_id")) for r in read_results(path)}
        todo = [p for p in programs if str(p["id"]) not in have]
        if not todo:
            return 0
        policy = make_policy(policy_spec, device)
        bar = tqdm(total=len(todo), disable=not progress, unit="program", desc="generate")
        for i in range(0, len(todo), PROMPTS_PER_CALL):
            chunk = todo[i : i + PROMPTS_PER_CALL]
            groups = policy.generate([prompt_for(p) for p in chunk], variants)
            for program, group in zip(chunk, groups, strict=True):
                for pair in _pairs(program, [c.code for c in group]):
                    store.append(pair)
            bar.update(len(chunk))
        bar.close()
    _release(policy)
    return len(todo)


def _pairs(program: dict[str, Any], codes: list[str]) -> list[dict[str, Any]]:
    distinct = list(dict.fromkeys(c for c in codes if c and c.strip()))
    base = {"program_id": program["id"], "level": program["level"], "source": program["source"],
            "precision": record_precision(program)}  # fmt: skip
    if not distinct:
        return [{**base, "id": f"{program['id']}#v0", "variant": 0, "completion": None}]
    return [{**base, "id": f"{program['id']}#v{i}", "variant": i, "completion": code}
            for i, code in enumerate(distinct)]  # fmt: skip


def _release(policy: Any) -> None:
    """Frees a GPU policy before verification needs the device for timing."""
    if getattr(policy, "model", None) is None:
        return
    policy.model = None
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def program_results(programs: Sequence[dict[str, Any]], candidates: Sequence[dict[str, Any]],
                    verdicts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:  # fmt: skip
    """One record per program with any verdict: its best variant (correct first, then fastest)."""
    by_candidate = {str(v["id"]): v for v in verdicts}
    per_program: dict[str, list[dict[str, Any]]] = {}
    for c in candidates:
        verdict = by_candidate.get(str(c["id"]))
        if verdict is not None:
            per_program.setdefault(str(c["program_id"]), []).append(verdict)
    out = []
    for program in programs:
        judged = per_program.get(str(program["id"]))
        if judged:
            out.append(_program_record(program, judged))
    return out


def _program_record(program: dict[str, Any], judged: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [v for v in judged if v.get("correct") is True]
    best = max(ok, key=lambda v: positive(v.get("speedup")) or 0.0) if ok else judged[0]
    status = best.get("status") or ("no_candidate" if best.get("error") else "error")
    return {
        "id": program["id"],
        "level": program["level"],
        "ops": program.get("ops"),
        "status": status,
        "correct": bool(ok),
        "variants": len(judged),
        "variants_correct": len(ok),
        "best_variant": best.get("id"),
        "precision": best.get("precision"),  # the verifier's mode (None: no verdict)
        **{k: best.get(k) for k in TIMING_KEYS},
        "reason": best.get("reason") or best.get("error"),
    }


def _same_precision(out_dir: Path, precision: str) -> None:
    """A resumed evaluation stays in one mode: verify-batch skips the candidates it has judged,
    so verdicts of another mode would enter the tables unnoticed. Records without the field
    (candidates from before it, verify-batch's `error` records) name no mode and pass."""
    require_precision(out_dir / CANDIDATES, precision, "candidates", unstated=None)
    require_precision(out_dir / VERDICTS, precision, "verdicts", unstated=None)


def run_synthetic(programs_path: Path, out_dir: Path, *, policy: str = "template",
                  variants: int = 1, device: str = "cpu", workers: int | None = None,
                  timeout: float | None = None, progress: bool = True,
                  precision: str | None = None) -> Path:  # fmt: skip
    """The whole pipeline; returns the summary's path. `precision`: the mode of programs
    without the field (None: fp32), which must be that of the others (jsonl.run_precision)."""
    from drtriton.verify import Options
    from drtriton.verify.batch import run_batch

    programs = load_programs(programs_path)
    precision = run_precision(programs, programs_path, precision)
    programs = [{**p, "precision": precision} for p in programs]
    _same_precision(out_dir, precision)
    out_dir.mkdir(parents=True, exist_ok=True)
    generate_candidates(programs, out_dir / CANDIDATES, policy, variants, device, progress)
    run_batch(str(out_dir / CANDIDATES), str(out_dir / VERDICTS),
              Options(device=device, timeout=timeout, precision=precision), workers=workers,
              progress=progress)  # fmt: skip
    candidates = read_results(out_dir / CANDIDATES)
    results = program_results(programs, candidates, read_results(out_dir / VERDICTS))
    write_text_atomic(out_dir / RESULTS, "".join(json.dumps(r) + "\n" for r in results))
    done = {str(r["id"]) for r in results}
    missing = [p for p in programs if str(p["id"]) not in done]
    preamble = [f"Programs: `{programs_path}`; policy: {policy}; variants per program: "
                f"{variants} (best-of-{variants}); device: {device}.",
                precision_line([r for r in results if r.get("precision")], precision)]  # fmt: skip
    return write_summary(out_dir, results, missing, title="Synthetic programs: held-out evaluation",
                         preamble=preamble, columns=COLUMNS)  # fmt: skip

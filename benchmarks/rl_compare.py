"""Policies judged on the same held-out programs, side by side: pass@1 with its 95% interval
over programs and each policy's paired difference from the first (issue 23's table).

    python benchmarks/rl_compare.py SFT=sft_samples.jsonl DRPO=drpo_samples.jsonl \\
        GRPO=grpo_samples.jsonl [--out compare.json]

Each file is an evaluation's samples (train/evaluate.py `samples`, e.g. the recipe's
`eval_before_rl.jsonl` / `eval_after_rl.jsonl`): one line per judged answer with id (PROGRAM or
PROGRAM#k for K answers per program), level, correct and log_speedup. Per level and overall:
programs, pass@1 [95% interval] (train/stats.py: the program is the unit, its K answers
averaged), the difference from the first policy over the programs both judged [95% paired
interval] and whether that interval excludes 0 ("beyond CI"), and the mean log speed-up of the
correct answers [95% interval over programs] with the share of answers correct and faster
than eager (fast_1). Exit 0 when the table was made, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

from drtriton.files import write_text_atomic  # noqa: E402
from drtriton.train.stats import (  # noqa: E402
    mean_interval,
    paired_difference,
    program_means,
    rate_interval,
)


def read_samples(path: pathlib.Path) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if "id" not in row or "correct" not in row:
            raise ValueError(f"{path}:{n}: a sample needs id and correct")
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no samples")
    return rows


def _correct_speeds(rows: list[dict[str, Any]]) -> dict[str, float]:
    kept = [{"id": r["id"], "log_speedup": r.get("log_speedup")} for r in rows if r["correct"]]
    return program_means(kept, "log_speedup")


def policy_row(rows: list[dict[str, Any]], base: list[dict[str, Any]] | None) -> dict:
    rates = program_means(rows)
    mean, lo, hi = rate_interval(rates)
    out: dict[str, Any] = {"programs": len(rates), "pass@1": mean, "pass@1_ci": [lo, hi]}
    if base is not None:
        d, dlo, dhi, n = paired_difference(rates, program_means(base))
        out.update(diff=d, diff_ci=[dlo, dhi], paired_programs=n,
                   beyond_ci=bool(n > 1 and (dlo > 0 or dhi < 0)))  # fmt: skip
    speeds = _correct_speeds(rows)
    smean, slo, shi = mean_interval(list(speeds.values()))
    out.update(mean_log_speedup=smean, mean_log_speedup_ci=[slo, shi], timed_programs=len(speeds))
    faster = [r for r in rows if r["correct"] and (r.get("log_speedup") or 0.0) > 0]
    out["fast1"] = len(faster) / len(rows) if rows else math.nan
    return out


def compare(runs: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """{level or "all": {policy: row}} for the policies in order (the first is the base)."""
    levels = sorted({str(r.get("level")) for _, rows in runs for r in rows})
    table: dict[str, Any] = {}
    for level in [*levels, "all"]:
        pick = (lambda rows: rows) if level == "all" else (
            lambda rows, lv=level: [r for r in rows if str(r.get("level")) == lv])  # fmt: skip
        base = pick(runs[0][1])
        table[level] = {name: policy_row(pick(rows), None if i == 0 else base)
                        for i, (name, rows) in enumerate(runs)}  # fmt: skip
    return table


def fmt_ci(value: float, ci: list[float], digits: int = 3) -> str:
    if math.isnan(value):
        return "-"
    if math.isnan(ci[0]):
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def print_table(table: dict[str, Any], names: list[str]) -> None:
    print(f"{'level':<6} {'policy':<10} {'programs':>8} {'pass@1 [95% CI]':<26} "
          f"{'vs ' + names[0] + ' [95% paired CI]':<32} {'beyond':>6} "
          f"{'mean log speed-up [95% CI]':<28} {'fast_1':>6}")  # fmt: skip
    for level, rows in table.items():
        for name in names:
            r = rows[name]
            diff = fmt_ci(r["diff"], r["diff_ci"]) if "diff" in r else "-"
            beyond = ("yes" if r["beyond_ci"] else "no") if "diff" in r else "-"
            print(f"{level:<6} {name:<10} {r['programs']:>8} "
                  f"{fmt_ci(r['pass@1'], r['pass@1_ci']):<26} {diff:<32} {beyond:>6} "
                  f"{fmt_ci(r['mean_log_speedup'], r['mean_log_speedup_ci']):<28} "
                  f"{r['fast1']:6.3f}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="NAME=SAMPLES.jsonl",
                    help="policies in order; the first is the base of the differences")  # fmt: skip
    ap.add_argument("--out", help="write the table as JSON here")
    args = ap.parse_args(argv)
    runs = []
    for spec in args.runs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            print(f"rl_compare: {spec!r} is not NAME=SAMPLES.jsonl", file=sys.stderr)
            return 2
        try:
            runs.append((name, read_samples(pathlib.Path(path))))
        except (OSError, ValueError) as exc:
            print(f"rl_compare: {exc}", file=sys.stderr)
            return 2
    table = compare(runs)
    print_table(table, [n for n, _ in runs])
    if args.out:
        write_text_atomic(args.out, json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

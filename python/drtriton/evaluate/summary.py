"""summary.md and speedup.png of an evaluation directory, from its result records.

Shared by `drtriton eval kernelbench`, `eval synthetic`, `eval summarize` and
benchmarks/teacher_acceptance.py: the by-level tables come from `by_level` (metrics.py) and
are rendered here in one way only.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drtriton.evaluate.metrics import FAST_P, LevelStats, by_level, level_order
from drtriton.evaluate.plot import plot_speedups
from drtriton.files import write_text_atomic
from drtriton.jsonl import record_precision

SUMMARY_MD = "summary.md"
SPEEDUP_PNG = "speedup.png"


@dataclass(frozen=True)
class Column:
    """One column of the per-problem table: header, record key, and how to print the value."""

    header: str
    key: str
    fmt: Callable[[Any], str] = str


def fmt_ms(v: Any) -> str:
    return "" if v is None else f"{v:.4g}"


def fmt_x(v: Any) -> str:
    return "" if v is None else f"{v:.2f}x"


def fmt_text(limit: int) -> Callable[[Any], str]:
    def fmt(v: Any) -> str:
        text = "" if v is None else " ".join(str(v).split())
        return text if len(text) <= limit else text[: limit - 3] + "..."

    return fmt


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100.0 * v:.1f}%"


def _x(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}x"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def level_tables(stats: Sequence[LevelStats]) -> list[str]:
    """The three by-level tables (correctness; fast_p and geomean vs eager; vs torch.compile)."""
    lines = ["### Correctness", ""]
    lines += _table(
        ["level", "problems", "run", "not run", "correct", "correct %", "timed",
         "torch.compile failed"],
        [[s.level, str(s.problems), str(s.run), str(s.not_run), str(s.correct),
          _pct(s.correct_rate), str(s.timed), str(s.compile_failed)] for s in stats],
    )  # fmt: skip
    for title, fast, gm in (
        ("Against eager PyTorch", "fast_eager", "geomean_eager"),
        ("Against torch.compile", "fast_compile", "geomean_compile"),
        ("Against eager with PyTorch's TF32 defaults", "fast_tf32", "geomean_tf32"),
    ):
        if title.endswith("defaults") and all(getattr(s, gm) is None for s in stats):
            continue  # runs from before the baselines were strict float32, or in another mode
        lines += ["", f"### {title}", ""]
        headers = ["level", *[f"fast_{p:g}" for p in FAST_P], "geomean speedup (correct)"]
        rows = [
            [s.level, *[_pct(getattr(s, fast)[p]) for p in FAST_P], _x(getattr(s, gm))]
            for s in stats
        ]
        lines += _table(headers, rows)
    return lines


def _status_counts(records: Sequence[dict[str, Any]]) -> list[str]:
    per_level: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in records:
        per_level[str(r.get("level", "?"))][str(r.get("status", "?"))] += 1
    if not per_level:
        return []
    lines = ["", "### Outcomes", ""]
    for level in sorted(per_level, key=level_order):
        counts = ", ".join(f"{k} {n}" for k, n in per_level[level].most_common())
        lines.append(f"- level {level}: {counts}")
    relative = [f"L{r.get('level')} {r.get('problem_id', r.get('id'))}" for r in records
                if r.get("correct") and r.get("baseline_error_sets")]  # fmt: skip
    if relative:  # the verdict's reason says the same per problem
        lines.append(f"- correct only as no less exact than eager in the mode, which is itself "
                     f"outside the tolerance there: {', '.join(relative)}")  # fmt: skip
    return lines


def render_summary(
    records: Sequence[dict[str, Any]],
    not_run: Sequence[dict[str, Any]],
    *,
    title: str,
    preamble: Sequence[str] = (),
    columns: Sequence[Column] = (),
    plot_note: str | None = None,
) -> str:
    stats = by_level(records, not_run)
    lines = [f"# {title}", "", *preamble]
    if preamble:
        lines.append("")
    lines += [
        "fast_p: share of the problems run that are correct and more than p times faster than "
        "the baseline (KernelBench's definition; failures and timeouts count as not fast). "
        "Geometric means are over correct, timed problems. Times exist only on a GPU: a CPU "
        "run judges correctness alone (n/a).",
        "",
        "## By level",
        "",
        *level_tables(stats),
        *_status_counts(records),
    ]
    if not_run:
        lines += ["", f"### Not run ({len(not_run)})", "",
                  "Selected but never started (time budget spent or run interrupted); not counted "
                  "above. A rerun with the same --out picks them up.", ""]  # fmt: skip
        names = [f"L{r.get('level')} {r.get('name') or r.get('id')}" for r in not_run]
        lines.append(", ".join(names))
    lines += ["", f"## Speedup distribution ({SPEEDUP_PNG})", ""]
    lines.append(plot_note or f"![speedups]({SPEEDUP_PNG})")
    if columns:
        lines += ["", "## Problems", ""]
        ordered = sorted(records, key=lambda r: (level_order(str(r.get("level"))), _sort_id(r)))
        lines += _table([c.header for c in columns],
                        [[c.fmt(r.get(c.key)) for c in columns] for r in ordered])  # fmt: skip
    return "\n".join(lines) + "\n"


def _sort_id(record: dict[str, Any]) -> tuple[int, str]:
    pid = record.get("problem_id")
    return (pid, "") if isinstance(pid, int) else (0, str(record.get("id", "")))


def precision_line(records: Sequence[dict[str, Any]], configured: str) -> str:
    """The summary's statement of its precision mode(s): every table names what it compares."""
    from drtriton.verify.precision import MODES

    names = sorted({record_precision(r) for r in records} or {configured})
    parts = []
    for name in names:
        mode = MODES.get(name)
        what = "unknown mode" if mode is None else (
            f"{mode.dtype} tensors{', TF32 allowed' if mode.tf32 else ''}, "
            f"atol = rtol = {mode.tolerance:g} by default")  # fmt: skip
        parts.append(f"`{name}` ({what})")
    return (f"Precision: {'; '.join(parts)}; eager and torch.compile were timed in the same "
            "mode as the kernels.")  # fmt: skip


def write_summary(
    out_dir: Path,
    records: Sequence[dict[str, Any]],
    not_run: Sequence[dict[str, Any]] = (),
    *,
    title: str,
    preamble: Sequence[str] = (),
    columns: Sequence[Column] = (),
) -> Path:
    """Writes out_dir/summary.md (and speedup.png when it can); returns the summary's path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    png = out_dir / SPEEDUP_PNG
    note = plot_speedups(records, png, title)
    if note is not None and png.exists():
        png.unlink()  # a stale plot of older results would contradict the summary
    text = render_summary(records, not_run, title=title, preamble=preamble, columns=columns,
                          plot_note=note)  # fmt: skip
    path = out_dir / SUMMARY_MD
    write_text_atomic(path, text)
    return path

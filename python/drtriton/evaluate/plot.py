"""speedup.png: the distribution of speedups per level, against eager and torch.compile.

Like the DRTriton paper's Figure 4: one box (with the problems as points) per level and
baseline, speedup on a log scale, a line at 1x. Only correct, timed problems have a speedup.
matplotlib is optional: without it `plot_speedups` says why it drew nothing.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from drtriton.evaluate.metrics import level_order, positive

BASELINES = (
    ("speedup", "vs eager", "tab:blue"),
    ("speedup_vs_compile", "vs torch.compile", "tab:orange"),
)


def plot_speedups(records: Sequence[dict[str, Any]], path: Path, title: str) -> str | None:
    """Draws the PNG at `path` (atomically); returns None, or why no PNG was drawn."""
    series = _series(records)
    if not any(values for per_level in series.values() for values in per_level.values()):
        return "no correct, timed result (times exist only on a GPU): no speedup plot"
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display on the evaluation machines
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return "matplotlib is not installed: no speedup plot (`pip install matplotlib`)"
    levels = sorted(series, key=level_order)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.8 * len(levels) + 1.5), 4.0))
    width = 0.35
    for b, (key, label, color) in enumerate(BASELINES):
        offset = (b - 0.5) * width
        legend: str | None = label  # once per baseline
        for i, level in enumerate(levels):
            values = series[level][key]
            if not values:
                continue
            x = i + offset
            ax.boxplot([values], positions=[x], widths=width * 0.8, showfliers=False,
                       patch_artist=True, boxprops={"facecolor": color, "alpha": 0.3},
                       medianprops={"color": color})  # fmt: skip
            jitter = [x + width * 0.25 * ((j * 0.618) % 1.0 - 0.5) for j in range(len(values))]
            ax.scatter(jitter, values, s=10, color=color, zorder=3, label=legend)
            legend = None
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    counts = [len(series[lv]["speedup"]) for lv in levels]
    ax.set_xticks(
        range(len(levels)), [f"level {lv}\n(n={n})" for lv, n in zip(levels, counts, strict=True)]
    )
    ax.set_ylabel("speedup (log scale)")
    ax.set_title(title)
    ax.legend(loc="best")
    fig.tight_layout()
    try:
        _save_atomic(fig, path)
    finally:
        plt.close(fig)
    return None


def _series(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, list[float]]]:
    series: dict[str, dict[str, list[float]]] = {}
    for r in records:
        per_level = series.setdefault(str(r.get("level", "?")), {k: [] for k, _, _ in BASELINES})
        if r.get("correct") is not True:
            continue
        for key, _, _ in BASELINES:
            value = positive(r.get(key))
            if value is not None:
                per_level[key].append(value)
    return series


def _save_atomic(fig: Any, path: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".speedup-", suffix=".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=120)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the plot from other users
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise

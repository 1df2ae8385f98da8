"""A dependency-free SVG plot of metrics.jsonl (matplotlib is not on every machine we use):
one panel per metric against the step, evaluation lines drawn as points."""

from __future__ import annotations

import json
from pathlib import Path

PANELS = ("pass@1", "eval_pass@1", "reward", "mean_log_speedup", "loss", "kl_after", "lr",
          "tokens_per_s", "level")  # fmt: skip
W, H, PAD = 320, 160, 30


def _series(lines: list[dict], key: str) -> list[tuple[float, float]]:
    return [(float(d["step"]), float(d[key])) for d in lines
            if isinstance(d.get(key), int | float) and not isinstance(d.get(key), bool)]  # fmt: skip


def _panel(points: list[tuple[float, float]], key: str, x0: int, y0: int) -> str:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    lo_x, hi_x = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    lo_y, hi_y = min(ys), max(ys) if max(ys) > min(ys) else min(ys) + 1

    def at(x: float, y: float) -> str:
        px = x0 + PAD + (x - lo_x) / (hi_x - lo_x) * (W - 2 * PAD)
        py = y0 + H - PAD - (y - lo_y) / (hi_y - lo_y) * (H - 2 * PAD)
        return f"{px:.1f},{py:.1f}"

    line = " ".join(at(x, y) for x, y in points)
    dots = "".join(f'<circle cx="{at(x, y).split(",")[0]}" cy="{at(x, y).split(",")[1]}" r="2"/>'
                   for x, y in points)  # fmt: skip
    return (f'<g><rect x="{x0}" y="{y0}" width="{W}" height="{H}" fill="none" stroke="#ccc"/>'
            f'<text x="{x0 + PAD}" y="{y0 + 16}" font-size="12">{key} '
            f"[{lo_y:.3g}, {hi_y:.3g}]</text>"
            f'<polyline fill="none" stroke="#1f77b4" points="{line}"/>{dots}</g>')  # fmt: skip


def plot_metrics(jsonl: str | Path, svg: str | Path) -> Path | None:
    """Writes `svg` from `jsonl`; returns None when there is nothing to plot."""
    lines = []
    for text in Path(jsonl).read_text().splitlines():
        try:
            lines.append(json.loads(text))
        except json.JSONDecodeError:
            continue  # a torn last line
    panels = [(k, s) for k in PANELS if (s := _series(lines, k))]
    if not panels:
        return None
    cols = 2
    rows = (len(panels) + cols - 1) // cols
    body = "".join(_panel(s, k, (i % cols) * W, (i // cols) * H) for i, (k, s) in enumerate(panels))
    Path(svg).write_text(f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * W}" '
                         f'height="{rows * H}" font-family="sans-serif">{body}</svg>\n')  # fmt: skip
    return Path(svg)

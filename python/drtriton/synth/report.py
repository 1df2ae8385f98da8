"""Human-readable sampling statistics (`drtriton synth --stats`): how evenly the operators
come out, and how often each was drawn but could not be applied, so bias is visible."""

from __future__ import annotations

from typing import Any


def format_stats(stats: dict[str, Any]) -> str:
    ops: dict[str, dict[str, Any]] = stats["ops"]
    emitted_total = sum(o["emitted"] for o in ops.values()) or 1
    uniform = 1.0 / max(len(ops), 1)
    lines = [
        f"samples {stats['samples']}, kept {stats['kept']}, duplicates {stats['duplicates']}; "
        f"restarts: dead ends {stats['dead_ends']}, solver {stats['solve_failures']}, "
        f"checks {stats['check_failures']}",
        "kept per level: "
        + ", ".join(f"L{k}={v}" for k, v in sorted(stats["kept_per_level"].items())),
        "",
        f"{'operator':<24}{'emitted':>9}{'share':>8}{'/unif':>7}{'tried':>10}{'reject':>8}  reasons",
    ]
    for name, o in sorted(ops.items(), key=lambda kv: -kv[1]["emitted"]):
        rejected = sum(o["rejected"].values())
        share = o["emitted"] / emitted_total
        rate = rejected / o["tried"] if o["tried"] else 0.0
        reasons = ", ".join(
            f"{k} {v}" for k, v in sorted(o["rejected"].items(), key=lambda kv: -kv[1])
        )
        lines.append(
            f"{name:<24}{o['emitted']:>9}{share:>8.2%}{share / uniform:>7.2f}"
            f"{o['tried']:>10}{rate:>8.1%}  {reasons}"
        )
    missing = [name for name, o in ops.items() if o["emitted"] == 0]
    lines.append("")
    lines.append(
        f"operators emitted: {len(ops) - len(missing)}/{len(ops)}"
        + (f"; never: {', '.join(sorted(missing))}" if missing else "")
    )
    if stats["check_errors"]:
        lines.append(
            "check refusals: "
            + "; ".join(
                f"{k.strip()} x{v}"
                for k, v in sorted(stats["check_errors"].items(), key=lambda kv: -kv[1])
            )
        )
    return "\n".join(lines)

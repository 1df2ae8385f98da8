"""The Markdown report of one optimize run (drtriton optimize --report)."""

from __future__ import annotations

from typing import Any


def _ms(value: Any) -> str:
    return f"{value:.4f} ms" if isinstance(value, int | float) else "-"


def _x(value: Any) -> str:
    return f"{value:.2f}x" if isinstance(value, int | float) else "-"


def _summary(result: Any) -> list[str]:
    verdict = result.verdict or {}
    lines = [
        f"- device: `{result.config.get('device')}`, mode: `{result.config.get('mode')}`, "
        f"max_ops {result.config.get('max_ops')}, k {result.config.get('k')}",
        f"- time spent: {result.seconds:.1f} s",
        f"- frontend: {result.frontend.get('n_catalog')} of {result.frontend.get('n_ops')} "
        f"operators in the catalog; fully mapped: {result.frontend.get('fully_mapped')}",
    ]
    for arg, value in (result.frontend.get("specialized") or {}).items():
        lines.append(f"- argument `{arg}` = {value} was specialized by torch.export: ModelNew "
                     "raises ValueError for any other value")  # fmt: skip
    for arg in result.frontend.get("runtime_scalars") or []:
        lines.append(f"- argument `{arg}` (a Python number) is read at run time")
    if result.error:
        lines.append(f"- **no verified model**: {result.error}")
    if verdict:
        lines.append(f"- final verdict: **{verdict.get('status')}** ({verdict.get('reason')})")
    if verdict.get("time_ms") is not None:
        lines.append(
            f"- ModelNew {_ms(verdict.get('time_ms'))}, eager {_ms(verdict.get('eager_ms'))}, "
            f"torch.compile {_ms(verdict.get('compile_ms'))}: speedup {_x(verdict.get('speedup'))}"
            f" vs eager, {_x(verdict.get('speedup_vs_compile'))} vs torch.compile"
        )
    elif verdict:
        lines.append(
            "- on the CPU nothing is timed (Triton's interpreter): fragments were chosen by "
            "modelled memory traffic"
        )
    return lines


def _segment_rows(result: Any) -> list[str]:
    rows = ["| run | operators | where | kernel | cost |", "| --- | --- | --- | --- | --- |"]
    for seg in result.segments:
        ops = " → ".join(f"`{op}`" for op in seg["ops"])
        if seg["fused"]:
            if seg.get("time_ms") is not None:
                cost = f"{_ms(seg['time_ms'])} (eager {_ms(seg.get('eager_ms'))})"
            else:
                cost = f"{seg.get('modelled_bytes', 0):.0f} bytes modelled"
            rows.append(f"| {seg['run']} | {ops} | Triton | `{seg['kernel']}` | {cost} |")
        else:
            rows.append(f"| {seg['run']} | {ops} | PyTorch | - | {seg.get('why', '')} |")
    return rows


def render(result: Any) -> str:
    verdict = result.verdict or {}
    allowed = verdict.get("allowed_torch") or []
    out = ["# drtriton optimize report", "", *_summary(result), "", "## Fragments", ""]
    out += _segment_rows(result)
    out += ["", "## Left in PyTorch", ""]
    opaque = result.frontend.get("opaque_calls") or []
    if opaque:
        out.append("Operators outside the catalog (no kernel template): "
                   + ", ".join(f"`{c}`" for c in dict.fromkeys(opaque)) + ".")  # fmt: skip
    if allowed:
        out.append("ATen operators the verifier allowed in PyTorch (everything else was "
                   "poisoned): " + ", ".join(f"`{a}`" for a in allowed) + ".")  # fmt: skip
    if not opaque and not allowed:
        out.append("Nothing: every operator runs in a Triton kernel.")
    return "\n".join(out) + "\n"

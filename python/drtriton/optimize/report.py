"""The Markdown report of one optimize run (drtriton optimize --report)."""

from __future__ import annotations

from typing import Any


def _ms(value: Any) -> str:
    return f"{value:.4f} ms" if isinstance(value, int | float) else "-"


def _x(value: Any) -> str:
    return f"{value:.2f}x" if isinstance(value, int | float) else "-"


def _mb(nbytes: float) -> str:
    mb = nbytes / 1e6
    if mb >= 100:
        return f"{mb:,.0f} MB"
    return f"{mb:.3g} MB" if mb >= 0.001 else f"{nbytes:.0f} bytes"


def _change(before: float, after: float, unit: str) -> str:
    """`after` against `before` in words: "25.0% less", "10.0% more"."""
    if before <= 0 or after == before:
        return "no change"
    share = 100.0 * abs(before - after) / before
    return f"{share:.1f}% {'less' if after < before else 'more'}{unit}"


def _modelled_before_after(result: Any) -> list[str]:
    """CPU: what the model moves in memory, all in PyTorch against ModelNew (modelled)."""
    traffic = result.traffic or {}
    before, after = traffic.get("before_bytes"), traffic.get("after_bytes")
    if not before or after is None:
        return []
    counted = f"{traffic.get('ops_counted')} of {traffic.get('ops')} operators"
    line = (f"- before: {_mb(before)} moved with every operator in PyTorch; after: "
            f"{_mb(after)} with ModelNew ({_change(before, after, '')}); modelled memory "
            f"traffic of the {counted} the search could model")  # fmt: skip
    if after < before and not result.correct:
        line += "; ModelNew was not verified, so the original stays the one to use"
    return [line]


def _measured_before_after(verdict: dict[str, Any]) -> list[str]:
    """GPU: the verifier's eager time against ModelNew's, and torch.compile's for reference."""
    eager, new = verdict.get("eager_ms"), verdict.get("time_ms")
    if not isinstance(eager, int | float) or not isinstance(new, int | float) or new <= 0:
        return []
    ratio = verdict.get("speedup") or eager / new  # the verifier's own figure where it gave one
    pace = f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"
    line = (f"- before: {_ms(eager)} in eager PyTorch; after: {_ms(new)} with ModelNew "
            f"({pace}, {_change(eager, new, ' time')})")  # fmt: skip
    if verdict.get("compile_ms") is not None:
        line += (f"; torch.compile {_ms(verdict.get('compile_ms'))} (ModelNew "
                 f"{_x(verdict.get('speedup_vs_compile'))} vs torch.compile)")  # fmt: skip
    return [line]


def _served(shapes: dict[str, Any]) -> list[str]:
    """Which calls ModelNew's kernels serve (optimize/generic.py), and why not more."""
    what = shapes.get("served")
    lines = [f"- ModelNew's kernels serve {what}" if what else
             "- ModelNew's kernels serve the example inputs' shapes and dtypes"]  # fmt: skip
    if shapes.get("any_batch"):
        checked = ", ".join(f"{c['batch']} ({c['status']})" for c in shapes.get("checks", []))
        lines.append(f"- the kernels read sizes at run time; verified at batch {checked}")
    elif shapes.get("why"):
        lines.append(f"- only the example shapes: {shapes['why']}")
    lines.append("- every other call (shape, dtype, the other module mode where the output "
                 "depends on it, CPU inputs without Triton's interpreter) runs Model's own "
                 "forward, with a one-time warning")  # fmt: skip
    return lines


def _summary(result: Any) -> list[str]:
    verdict = result.verdict or {}
    lines = [
        f"- device: `{result.config.get('device')}`, mode: `{result.config.get('mode')}`, "
        f"precision: `{result.config.get('precision', 'fp32')}`, "
        f"max_ops {result.config.get('max_ops')}, k {result.config.get('k')}",
        f"- time spent: {result.seconds:.1f} s",
        f"- frontend: {result.frontend.get('n_catalog')} of {result.frontend.get('n_ops')} "
        f"operators in the catalog; fully mapped: {result.frontend.get('fully_mapped')}",
    ]
    for arg, value in (result.frontend.get("specialized") or {}).items():
        lines.append(f"- argument `{arg}` = {value} was specialized by torch.export: for any "
                     "other value ModelNew runs Model's own forward")  # fmt: skip
    for arg in result.frontend.get("runtime_scalars") or []:
        lines.append(f"- argument `{arg}` (a Python number) is read at run time")
    if result.model_new:
        lines += _served(getattr(result, "shapes", None) or {})
    if result.error:
        lines.append(f"- **no verified model**: {result.error}")
    if verdict:
        lines.append(f"- final verdict: **{verdict.get('status')}** ({verdict.get('reason')})")
    measured = _measured_before_after(verdict)
    lines += measured or _modelled_before_after(result)
    if verdict and not measured:
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
                cost = f"{_mb(seg.get('modelled_bytes', 0))} moved (modelled)"
                if seg.get("pytorch_bytes") is not None:
                    cost += f"; in PyTorch: {_mb(seg['pytorch_bytes'])}"
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

"""One KernelBench problem in a process of its own: `python -m drtriton.evaluate.worker JOB OUT`.

JOB is a JSON file {"problem": {level, problem_id, name, code}, "optimizer": "module:function",
"config": {...OptimizeConfig fields}, "kernel_path": str}. The worker optimizes the problem,
writes the ModelNew source to kernel_path, and the outcome as JSON to OUT (atomically; the
parent reads OUT only after this process exited). A crash or hang here costs one problem: the
parent (kernelbench.py) kills this process at its wall-clock limit and records the failure.

SIGTERM (the parent's first, polite stop) raises SystemExit, so that the verifier's `finally`
blocks kill its own sandboxed workers, which live in sessions of their own.
"""

from __future__ import annotations

import importlib
import json
import signal
import sys
import time
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from drtriton.errors import UserError
from drtriton.files import write_text_atomic

DEFAULT_OPTIMIZER = "drtriton.optimize:optimize_source"


def resolve(spec: str) -> tuple[Callable[..., Any], Any]:
    """(optimize function, its module's OptimizeConfig or a plain namespace) for "module:fn"."""
    module_name, _, fn_name = spec.partition(":")
    module = importlib.import_module(module_name)
    config_type = getattr(module, "OptimizeConfig", types.SimpleNamespace)
    return getattr(module, fn_name or "optimize_source"), config_type


def summarize_result(result: Any) -> dict[str, Any]:
    """The JSON-able parts of an OptimizeResult (or any object with its attributes)."""
    return {
        "has_kernel": getattr(result, "model_new", None) is not None,
        "verdict": getattr(result, "verdict", None),
        "segments": getattr(result, "segments", None) or [],
        "frontend": getattr(result, "frontend", None) or {},
        "optimize_seconds": getattr(result, "seconds", None),
        "search_costs": getattr(result, "search_costs", None) or None,
        "error": getattr(result, "error", None),
        # optimize_source reports its own bugs in `error` with a traceback in `config`; an
        # error without one is an answer ("no kernel beat PyTorch"), not a failure
        "traceback": (getattr(result, "config", None) or {}).get("traceback"),
    }


def _stamped(start: float) -> Callable[[str], None]:
    """Progress lines with the seconds since the problem started, into the problem's log: where
    a problem that hit its timeout spent the time (search or the final verification)."""

    def say(message: str) -> None:
        print(f"[{time.monotonic() - start:7.1f} s] {message}", file=sys.stderr, flush=True)

    return say


def _takes_progress(fn: Callable[..., Any]) -> bool:
    import inspect

    try:
        return "progress" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    start = time.monotonic()
    try:
        optimize, config_type = resolve(job.get("optimizer") or DEFAULT_OPTIMIZER)
        kwargs = {"progress": _stamped(start)} if _takes_progress(optimize) else {}
        result = optimize(job["problem"]["code"], config_type(**job["config"]), **kwargs)
    except UserError as exc:  # the model is outside what the frontend handles (export failed)
        return {"status": "unsupported", "error": str(exc),
                "optimize_seconds": time.monotonic() - start}  # fmt: skip
    except Exception as exc:  # an optimizer bug is this problem's failure, recorded with its cause
        tail = traceback.format_exc(limit=-3)
        return {"error": f"{type(exc).__name__}: {exc}", "traceback": tail,
                "optimize_seconds": time.monotonic() - start}  # fmt: skip
    out = summarize_result(result)
    out["gpu_lock"] = _lock_totals()
    model_new = getattr(result, "model_new", None)
    if model_new is not None and job.get("kernel_path"):
        write_text_atomic(Path(job["kernel_path"]), model_new)
    return out


def _lock_totals() -> dict[str, float]:
    """Seconds this problem's process waited for the GPU's lock and held it exclusively."""
    from drtriton.verify import gpu_lock

    return gpu_lock.totals()


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m drtriton.evaluate.worker JOB.json OUT.json", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _terminate)
    job = json.loads(Path(argv[0]).read_text())
    outcome = run_job(job)
    write_text_atomic(Path(argv[1]), json.dumps(outcome, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

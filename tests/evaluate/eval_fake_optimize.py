"""A stand-in for drtriton.optimize.optimize_source, for the evaluation runner's tests.

Imported by the per-problem worker (tests pass this folder on its PYTHONPATH). What it does
depends on a marker in the problem's code: HANG sleeps, CRASH kills the process, RAISE raises,
OOM raises an out-of-memory error while $EVAL_FAKE_OOM is set, LOSTMEM returns a correct
result whose search lost a candidate to memory while it is set,
anything else returns a correct result whose timings come from `# time_ms=...` markers.
Every call appends the problem's first line to $EVAL_FAKE_CALLS, so tests can count calls,
and its config to $EVAL_FAKE_CONFIGS.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
import types
from typing import Any

MODEL_NEW = "class ModelNew:\n    pass\n"


def optimize_source(source: str, config: Any) -> types.SimpleNamespace:
    calls = os.environ.get("EVAL_FAKE_CALLS")
    if calls:
        with open(calls, "a") as f:
            f.write(f"{source.splitlines()[0]} {config.device}\n")
    configs = os.environ.get("EVAL_FAKE_CONFIGS")
    if configs:
        with open(configs, "a") as f:
            f.write(json.dumps(vars(config)) + "\n")
    if "HANG" in source:
        time.sleep(600)
    if "CRASH" in source:
        os.kill(os.getpid(), signal.SIGKILL)
    if "RAISE" in source:
        raise RuntimeError("the fake optimizer failed")
    if "OOM" in source and os.environ.get("EVAL_FAKE_OOM"):
        raise RuntimeError("CUDA out of memory. Tried to allocate 6.00 GiB.")
    timing = {k: float(v) for k, v in re.findall(r"# (\w+_ms)=([0-9.]+)", source)}
    verdict: dict[str, Any] = {"status": "correct", "correct": True, "reason": "", **timing}
    if "time_ms" in timing:
        verdict["speedup"] = timing["eager_ms"] / timing["time_ms"]
        verdict["extra"] = {"speedup_vs_compile": timing["compile_ms"] / timing["time_ms"]}
    segments: list[dict[str, Any]] = [
        {"start": 0, "end": 1, "fused": True},
        {"start": 1, "end": 2, "fused": False},
    ]
    if "LOSTMEM" in source and os.environ.get("EVAL_FAKE_OOM"):
        segments[0]["tried"] = ["conv: out_of_memory: CUDA out of memory. Tried to allocate"]
    return types.SimpleNamespace(
        model_new=MODEL_NEW,
        verdict=verdict,
        segments=segments,
        frontend={"n_ops": 2, "n_catalog": 1, "opaque_calls": ["aten.foo"], "fully_mapped": False},
        seconds=0.01,
        error=None,
    )

"""`drtriton optimize`: a user's PyTorch model → a verified hybrid ModelNew (issue 6, part 3).

    from drtriton.optimize import optimize_source, OptimizeConfig
    result = optimize_source(open("model.py").read(), OptimizeConfig(device="cuda"))
    result.model_new          # KernelBench-compatible file: class ModelNew(Model), or None
    result.verdict            # the verifier's JSON on the module task (allow_torch recorded)
    result.report_markdown()

Pipeline (pipeline.py): frontend (torch.export in the config's mode) → test-time search on
each catalog run → assemble.py (ModelNew: the user's file, the runs' kernels, a forward that
reads parameters by attribute path) → allowed.py (the ATen operators left in PyTorch, by
running those lines under a recording dispatch mode) → the verifier, strict everywhere else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drtriton.optimize.pipeline import OptimizeConfig, OptimizeResult, optimize_source

__all__ = ["OptimizeConfig", "OptimizeResult", "optimize_source"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: the pipeline imports torch and the C++ core, which `drtriton --help`
    # (it imports optimize.cli, inside this package) should need neither of.
    if name in __all__:
        return getattr(importlib.import_module("drtriton.optimize.pipeline"), name)
    raise AttributeError(f"module 'drtriton.optimize' has no attribute {name!r}")

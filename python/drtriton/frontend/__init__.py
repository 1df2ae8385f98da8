"""The torch.export frontend: PyTorch programs → drtriton's program IR (issue 6, part 1).

    from drtriton.frontend import from_module_source, from_functional_source, check_equivalence
    result = from_module_source(kernelbench_code)   # Model / get_inputs / get_init_inputs
    result.program_text       # the functional task (DESIGN.md format) when every op maps
    result.source             # always runnable: unmapped ops as opaque torch.ops.aten calls
    result.runs()             # catalog runs (tasks for the search) and opaque lines between
    check_equivalence(code, result)  # the functional program reproduces the module

Pipeline: export.py (exec the trusted task, eval mode, torch.export, decompositions that
keep the catalog's operators whole) → aten.py (the ATen → catalog table) → lower.py (one
line per node, each catalog line checked by the IR's shape rules) → result.py.
"""

from __future__ import annotations

from drtriton.frontend.equivalence import Equivalence, check_equivalence
from drtriton.frontend.lower import Input, Line
from drtriton.frontend.result import FrontendResult, Run
from drtriton.frontend.trace import from_functional_source, from_module_source

__all__ = [
    "Equivalence",
    "FrontendResult",
    "Input",
    "Line",
    "Run",
    "check_equivalence",
    "from_functional_source",
    "from_module_source",
]

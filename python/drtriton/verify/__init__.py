"""The verifier: a strict, sandboxed judge of Triton kernels (DESIGN.md, "Verification rules").

Every reward and every reported number comes from here, so it is built to be hard to fool:

    candidate text ──► static.py (parse, entry point, @triton.jit launched, banned constructs)
                          │
    harness.py (parent) ──spawn──► worker.py (child, in sandbox.py's namespaces, rlimits)
      task.py: inputs, references          imports the candidate; poison.py: every call runs
      compare.py: shape/dtype/values       under a dispatch mode that poisons torch compute and
      timing.py: eager, torch.compile      counts Triton launches; timing.py on the GPU
                 ◄── outputs as torch.save files (weights_only), JSON replies on a pipe ──┘

The parent never imports the candidate; the child never sees a reference output; the verdict is
built by the parent from outputs it compares itself. See each module's docstring for its rules
and their rationale.

Python API:

    from drtriton.verify import verify, Options
    verdict = verify(task_source, candidate_source, device="cpu")
    verdict.status, verdict.correct, verdict.to_json()

CLI: `drtriton verify TASK CANDIDATE` and `drtriton verify-batch PAIRS.jsonl` (cli.py, batch.py).
"""

from __future__ import annotations

from drtriton.verify.harness import Options, verify
from drtriton.verify.verdict import STATUSES, Verdict

__all__ = ["STATUSES", "Options", "Verdict", "verify"]

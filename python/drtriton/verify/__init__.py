"""The verifier: a strict, sandboxed judge of Triton kernels (DESIGN.md, "Verification rules").

Every reward and every reported number comes from here, so it is built to be hard to fool:

    candidate text ──► static.py (parse, entry point, @triton.jit launched, banned constructs)
                          │
    harness.py (parent) ──channel.py──► worker.py (child, in sandbox.py's namespaces, rlimits)
      inputs.py, references.py: inputs,      imports the candidate; compile_pass.py: its kernels
        references (task.py)                 compile, no GPU work; poison.py: every call runs
      compare.py: shape/dtype/values         under a dispatch mode that poisons torch compute
      measure.py: timing rounds, with        and counts Triton launches; worker_timing.py:
        baselines.py (eager, torch.compile)  the candidate's timed calls (timing.py)
                 ◄── outputs as torch.save files (weights_only), JSON replies on a pipe ──┘
    gpu_lock.py: every GPU section holds the GPU's lock (timed rounds exclusively)

The parent never imports the candidate; the child never sees a reference output; the verdict is
built by the parent from outputs it compares itself. See each module's docstring for its rules
and their rationale.

Decisions, and their limits:
- Genuine use is judged at the ATen dispatcher (poison.py), for every call, timed ones included:
  torch may allocate, view and copy (copies the task itself uses excepted); any other torch
  operator during a call is `not_genuine`, and in the correctness calls its result is also
  replaced by noise (the paper's no-op patch). Host-side reads of tensor values (`.item()`,
  `bool(t)`) count as compute, which also takes away value-keyed caches.
- Anti-caching: every call gets fresh values in the same buffers (same addresses, same strides),
  so shape- or pointer-keyed caches return stale results; timed calls rotate the input sets the
  same way and a few random timed outputs are checked. A kernel that memoizes on the device by
  comparing whole inputs against the previous few sets is not caught.
- Timing runs in the candidate's process (it must: that is where its kernels are). The timers are
  captured before the candidate loads and checked after; the static rules remove every spelling
  that could patch them (no time/timeit, no torch.cuda.Event/synchronize/streams, no
  assignment into imported modules, no setattr/getattr/exec, no dunders or private attributes).
  A candidate that escapes the static rules with a trick they do not know could still patch them.
- The reference and the eager/torch.compile baselines run in the harness process: tasks are
  trusted, candidates are not. Every verification times them again, interleaved round by
  round with its candidate in one exclusive hold of the GPU's lock (measure.py); only the
  compiled baseline is kept between verifications (baselines.py).
- Only verify/ measures: the search's operator costs (`time_task`) and its check of a stitched
  hybrid (search/hybrid.py, a verification with the kept operators allowed) go through here.
- Sandbox levels and what each guarantees: sandbox.py. At level "none" (no bwrap, no working
  unshare) a candidate that got past the static rules could read the harness's memory via /proc.
- Precision (precision.py): strict fp32 by default; tf32, bf16 and fp16 are explicit modes in
  which the reference, the candidate's worker and both baselines run alike (dtype and TF32
  flags), with the mode's tolerance. Every verdict names its mode. Within the tolerance results
  are judged, not instructions: at 1e-2 an output rounded through bf16 also passes tf32.
- Worker start-up (Python + torch + triton imports, about 3 s on the 2-core CI machine) dominates
  the cost on the CPU; batch mode starts the next worker while the current one runs
  (Options.prewarm, with a `Verifier` that keeps the spare). Every worker still serves exactly
  one candidate.

Python API:

    from drtriton.verify import verify, Options, Verifier
    verdict = verify(task_source, candidate_source, device="cpu")
    verdict.status, verdict.correct, verdict.to_json()
    with Verifier() as v:             # many candidates: a spare worker, compiled baselines
        v.verify(task_source, candidate_source, Options(device="cuda", prewarm=True))
    time_task(task_source, "cuda")    # eager time of a trusted task (ms figures)

CLI: `drtriton verify TASK CANDIDATE` and `drtriton verify-batch PAIRS.jsonl` (cli.py, batch.py).
"""

from __future__ import annotations

from drtriton.verify.harness import Options, Verifier, verify
from drtriton.verify.measure import time_task, time_tasks
from drtriton.verify.verdict import STATUSES, Verdict

__all__ = ["STATUSES", "Options", "Verdict", "Verifier", "time_task", "time_tasks", "verify"]

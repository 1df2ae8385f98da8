"""`verify` for tests that judge candidates (the teacher's, the frontend's) and test nothing of
the verifier's own start: drtriton.verify.verify with one Verifier per test process.

verify() without a verifier makes a fresh one, whose fork server (verify/zygote.py) starts a
sandbox and imports torch and Triton again for that one candidate: 2.5-4 s a call on the idle
2-core CPU machine (add_relu: 2.7 s fresh, 0.16 s forked from a running server), more under
pytest-xdist's second worker. The verdicts are the same: every candidate still gets a worker
of its own, forked from the server, which clears what the last one left (zygote.py). Under
pytest-xdist each worker process has its own Verifier; it is closed at exit.
"""

from __future__ import annotations

import atexit
from typing import Any

from drtriton.verify import Options, Verifier
from drtriton.verify.verdict import Verdict

_verifier: Verifier | None = None


def verify(task_source: str, candidate_source: str, options: Options | None = None,
           **kwargs: Any) -> Verdict:  # fmt: skip
    """drtriton.verify.verify(task_source, candidate_source, options, **kwargs), judged by this
    process's Verifier."""
    global _verifier
    if _verifier is None:
        _verifier = Verifier()
        atexit.register(_verifier.close)
    return _verifier.verify(task_source, candidate_source, options, **kwargs)

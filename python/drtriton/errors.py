"""Errors a user can cause and fix: the CLI prints them without a traceback and exits 2."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the user: a missing file, a malformed program, impossible bounds."""


class ResourceError(Exception):
    """The harness itself ran out of a shared resource (GPU memory, while building the
    reference or timing the baselines): the candidate was not judged, and a later attempt, with
    fewer verifications sharing the GPU, may succeed. Never a verdict: a reward or an acceptance
    rate must not count it against the candidate."""


class SandboxError(Exception):
    """The verifier's sandbox cannot start the worker's interpreter on this machine (bubblewrap
    missing its permissions, a Python environment the sandbox cannot reach): an error of the
    harness's setup, never a verdict, since every candidate, honest ones too, would come back
    `crashed` and an RL run would hand out zero rewards for all of them.

    Not a UserError on purpose: the code that records a UserError per item (verify-batch's
    "this pair's task is unusable" lines, which a resumed run does not redo) must not swallow
    it. The CLI prints it like a UserError (one line, exit 2)."""

"""Errors a user can cause and fix: the CLI prints them without a traceback and exits 2."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the user: a missing file, a malformed program, impossible bounds."""


class ResourceError(Exception):
    """The harness itself ran out of a shared resource (GPU memory, while building the
    reference or timing the baselines): the candidate was not judged, and a later attempt, with
    fewer verifications sharing the GPU, may succeed. Never a verdict: a reward or an acceptance
    rate must not count it against the candidate."""

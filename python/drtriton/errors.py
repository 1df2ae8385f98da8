"""Errors a user can cause and fix: the CLI prints them without a traceback and exits 2."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the user: a missing file, a malformed program, impossible bounds."""

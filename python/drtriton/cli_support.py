"""What the top-level CLI (cli.py) needs beyond assembling commands: a stand-in for a C++ core
that does not load, the package's version, and a stdout whose reader went away.

Without the core (`drtriton._core`: a fresh clone before `scripts/install.sh`, or a build for
another Python), `drtriton --help` still lists every command, since no command module loads the
core at import (tests/test_cli.py holds them to it); a command that uses it meets a stand-in
whose every attribute raises CoreMissing, a UserError that says how to build the core: one line,
exit 2, instead of an ImportError traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import NoReturn

from drtriton.errors import UserError

CORE = "drtriton._core"
BUILD_HINT = (
    "build it with scripts/install.sh (or `python3 -m pip install --no-build-isolation .` "
    "in the repository; about 2 minutes)"
)
# 128 + SIGPIPE: what a tool killed by SIGPIPE reports (`yes | head` gives it too).
BROKEN_PIPE_EXIT = 141


class CoreMissing(UserError, ImportError):
    """A command needed the C++ core, which does not load here. Also an ImportError: code that
    falls back when the core is absent (synth's --help lists its bounds without it) catches
    that, and meets the stand-in's error where it would have met the import's."""


def core_failure() -> str | None:
    """None when the C++ core loads; else why it does not (one line)."""
    try:
        importlib.import_module(CORE)
    except ImportError as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return None


def core_missing_message(reason: str) -> str:
    return f"this command needs the C++ core ({CORE}), which does not load ({reason}): {BUILD_HINT}"


def install_core_stub(reason: str) -> None:
    """Puts a stand-in for the core in sys.modules (and the package): importing it works, and
    any use of it raises CoreMissing."""
    if isinstance(sys.modules.get(CORE), _CoreStub):
        return
    stub = _CoreStub(CORE, reason)
    sys.modules[CORE] = stub
    # `from drtriton import _core` reads the package's attribute before sys.modules.
    vars(importlib.import_module("drtriton"))["_core"] = stub


class _CoreStub(ModuleType):
    def __init__(self, name: str, reason: str) -> None:
        super().__init__(name, "a stand-in for the C++ core, which does not load")
        self._reason = reason

    def __getattr__(self, name: str) -> NoReturn:
        if name.startswith("__"):  # import machinery and hasattr probes: plain absence
            raise AttributeError(name)
        raise CoreMissing(core_missing_message(self._reason))


def package_version() -> str:
    """The installed distribution's version, else the source tree's `drtriton.__version__`."""
    from importlib import metadata

    try:
        return metadata.version("drtriton")
    except metadata.PackageNotFoundError:
        return str(getattr(importlib.import_module("drtriton"), "__version__", "unknown"))


def quiet_broken_pipe() -> int:
    """The reader of stdout went away (`drtriton ops --json | head`): it had what it wanted, so
    no traceback. Python's documented recipe: point stdout at /dev/null so the interpreter's
    final flush does not raise again. Exit 141, as a tool killed by SIGPIPE would: the output was
    cut short, which `set -o pipefail` scripts should see, and without pipefail it is ignored."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
    return BROKEN_PIPE_EXIT

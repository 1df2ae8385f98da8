"""One child process under supervision: started in a session of its own, its output in a log
file, waited for against a deadline, and stopped with everything it started.

The verifier's sandboxed workers (verify/channel.py) and the evaluation's problem processes
(evaluate/kernelbench.py) are both children of this kind; the search's check of a stitched
hybrid goes through the verifier and so through the same code.

- A new session (`start_new_session`): the child's group can be signalled as a whole, so a
  kill also reaches what it started (a sandbox's shell, Inductor's compile workers).
- `stop()` sends SIGTERM to the group, waits `grace` seconds, then SIGKILL: a Python child can
  run its `finally` blocks (the evaluation's worker kills its own verifier workers there).
  `grace=0` goes straight to SIGKILL (a sandboxed candidate gets no say).
- `exit_text()` says how it ended in words ("was killed by SIGSEGV"); sandboxes report a
  child's signal N as exit code 128 + N, which is read back as the signal.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path


class Child:
    """A started child process; `log` holds its stdout and stderr."""

    def __init__(self, argv: Sequence[str], log: str | Path, *, env: dict[str, str] | None = None,
                 cwd: str | Path | None = None, pass_fds: Sequence[int] = ()) -> None:  # fmt: skip
        self.log = Path(log)
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env, cwd=cwd,
                pass_fds=tuple(pass_fds), start_new_session=True,
            )  # fmt: skip

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def running(self) -> bool:
        return self.proc.poll() is None

    def wait(self, deadline: float | None = None, stop: threading.Event | None = None,
             poll_s: float = 0.5) -> str:  # fmt: skip
        """Waits until the child exits ("exited"), `deadline` (time.monotonic()) passes
        ("deadline") or `stop` is set ("stopped"). The child is left running in the last two
        cases: the caller decides how to stop it."""
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return "deadline"
            step = poll_s if left is None else max(0.0, min(poll_s, left))
            try:
                self.proc.wait(timeout=step)
                return "exited"
            except subprocess.TimeoutExpired:
                pass
            if stop is not None and stop.is_set():
                return "stopped"

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM to the child's group, `grace` seconds, then SIGKILL to what is left."""
        if grace > 0 and self.running():
            self._signal_group(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=grace)
        self._signal_group(signal.SIGKILL)  # the group may outlive its leader
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)

    def _signal_group(self, signo: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signo)

    def exit_text(self, wait_s: float = 0.0) -> str:
        """'was killed by SIGKILL', 'exited with code 3', or 'is still running'."""
        try:
            code = self.proc.wait(timeout=wait_s) if wait_s > 0 else self.proc.poll()
        except subprocess.TimeoutExpired:
            code = None
        return describe_exit(code)

    def log_tail(self, limit: int = 1500) -> str:
        """The last `limit` bytes of the log as text ('' when empty or unreadable)."""
        return file_tail(self.log, limit)


def file_tail(path: str | Path, limit: int = 1500) -> str:
    """The last `limit` bytes of the file at `path` as text ('' when empty or unreadable)."""
    with contextlib.suppress(OSError), open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - limit))
        return f.read().decode(errors="replace").strip()
    return ""


def describe_exit(code: int | None) -> str:
    if code is None:
        return "is still running"
    signo = -code if code < 0 else code - 128  # sandboxes report signal N as 128 + N
    if code != 0 and signo in {s.value for s in signal.Signals}:
        return f"was killed by {signal.Signals(signo).name}"
    return f"exited with code {code}"

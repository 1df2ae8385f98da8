"""The harness's end of the workers' fork server (zygote.py, which says why it exists and what
keeps one candidate from another).

`ForkServer` is one sandboxed zygote: its shared work directory (each worker's private directory
is a fresh folder in it), the control socket, the exits it reported. `ForkedWorker` is one
worker forked from it, with the part of supervisor.Child's interface a WorkerChannel uses
(running, wait, stop, exit_text, log_tail), so the channel's protocol is the same for forked and
spawned workers.

A server serves one worker at a time (a fork kills the previous worker): one per harness
process and configuration (harness.Verifier keeps them), which verifies one candidate at a time.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from drtriton.errors import SandboxError
from drtriton.supervisor import Child, describe_exit, file_tail
from drtriton.verify import sandbox

# A server's imports (torch, triton, Python dispatch's first use): 4 s on the idle 2-core CPU
# machine, and a harness may start one while its neighbours compile kernels.
START_TIMEOUT_S = 180.0
# A fork or a kill is the server's own work (a /proc scan, emptying /tmp): milliseconds. A
# server that does not answer in this long was stopped or killed by its last candidate.
REPLY_TIMEOUT_S = 10.0
SERVER_LOG = "zygote.log"  # in the shared directory (zygote.py keeps it)


class ForkFailed(Exception):
    """A started server did not fork (its last candidate may have stopped it): start another."""


class ForkUnsupported(Exception):
    """A forked worker cannot use the GPU here (zygote.py's check): start one sandbox per
    worker instead."""


class ForkServer:
    """One sandboxed zygote. `env_for(inside)` is the environment of a process whose private
    directory is `inside` (as the sandbox shows it): the server's own and each worker's."""

    def __init__(self, level: str, env_for: Callable[[str], dict[str, str]],
                 gpu: str | None = None) -> None:  # fmt: skip
        self.dir = tempfile.mkdtemp(prefix="drtriton-zygote-")
        os.chmod(self.dir, 0o755)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fd = sandbox.high_fd(theirs.detach())
        argv, self.inside = sandbox.wrap(level, self.dir, [sys.executable, "-m",
                                                           "drtriton.verify.zygote"])  # fmt: skip
        env = {**env_for(self.inside), "DRT_ZYGOTE_FD": str(fd), "DRT_ZYGOTE_DIR": self.inside,
               "DRT_ZYGOTE_KEEP": json.dumps(sandbox.kept_paths())}  # fmt: skip
        try:
            self.process = Child(argv, os.path.join(self.dir, SERVER_LOG), env=env, cwd=self.dir,
                                 pass_fds=(fd,))  # fmt: skip
        finally:
            os.close(fd)
        self.ctl = ours
        self.started = time.monotonic()
        self.gpu = gpu  # the device whose lock the server's CUDA check holds shared
        self.ready = False
        self.loaded = False  # on a GPU: imports done, the CUDA check not yet asked for
        self.refusal: str | None = None  # why its check failed
        self.broken = False  # the socket closed or a reply never came
        self.exits: dict[int, int] = {}  # worker pid -> returncode, as the server reported them
        self.lock = threading.Lock()

    def alive(self) -> bool:
        return not self.broken and self.process.running()

    def inside_path(self, host_dir: str) -> str:
        """A folder of the shared directory, as the sandbox shows it."""
        return os.path.join(self.inside, os.path.basename(host_dir))

    def fork(self, workdir: str, env: dict[str, str], fds: tuple[int, int]) -> ForkedWorker:
        """A worker in `workdir` (a folder of self.dir) with `env` and its request and reply
        pipe ends `fds`. Raises SandboxError when the server never started, ForkFailed when a
        started one does not answer."""
        if not self.ready:
            self._start()
        message = json.dumps({"op": "fork", "dir": os.path.basename(workdir), "env": env})
        try:
            socket.send_fds(self.ctl, [message.encode()], list(fds))
        except OSError:
            self.broken = True
            raise ForkFailed("the fork server's socket is closed") from None
        forked: list[int] = []
        self._await(lambda: bool(forked), time.monotonic() + REPLY_TIMEOUT_S, forked)
        if not forked:
            self.broken = True
            raise ForkFailed("the fork server did not answer")
        self.exits.pop(forked[0], None)  # an earlier worker's pid, reused
        return ForkedWorker(self, forked[0], os.path.join(workdir, "worker.log"))

    def _start(self) -> None:
        """Waits for the server's imports and, on a GPU, has it check CUDA in a forked child
        under a shared hold of the GPU's lock (the check is GPU work). Raises SandboxError
        when it does not start, ForkUnsupported when the check fails."""
        deadline = self.started + START_TIMEOUT_S
        self._await(lambda: self.ready or self.loaded or self.refusal is not None, deadline)
        if self.loaded and not self.ready and self.refusal is None:
            from drtriton.verify import gpu_lock

            with gpu_lock.hold(self.gpu or "cuda", gpu_lock.SHARED):
                with contextlib.suppress(OSError):
                    self.ctl.send(b'{"op": "check"}')
                self._await(lambda: self.ready or self.refusal is not None, deadline)
        if self.refusal is not None:
            tail = _quoted(self.process.log_tail(800))  # the check's traceback, before stop()
            self.stop()
            raise ForkUnsupported(self.refusal + tail)
        if not self.ready:
            reason = self.process.exit_text() if not self.process.running() else "timed out"
            tail = _quoted(self.process.log_tail(800))  # before stop(), which removes the log
            self.stop()
            raise SandboxError(f"the verifier's fork server did not start ({reason}){tail}")

    def kill_worker(self, pid: int) -> None:
        """Kills worker `pid` and what it left; stops the whole server if it does not answer."""
        if pid in self.exits or not self.alive():
            return
        try:
            self.ctl.send(b'{"op": "kill"}')
        except OSError:
            self.broken = True
        self._await(lambda: pid in self.exits, time.monotonic() + REPLY_TIMEOUT_S)
        if pid not in self.exits:
            self.stop()

    def exit_code(self, pid: int, deadline: float) -> int | None:
        self._await(lambda: pid in self.exits, deadline)
        return self.exits.get(pid)

    def drain(self) -> None:
        """Takes the messages the server has sent already, without waiting."""
        with self.lock:
            while not self.broken and select.select([self.ctl], [], [], 0)[0]:
                self._take(self.ctl.recv(1 << 16), None)

    def _await(self, done: Callable[[], bool], deadline: float,
               forked: list[int] | None = None) -> None:  # fmt: skip
        """Reads the server's messages until `done()` or `deadline` or the server's end."""
        with self.lock:
            while not done() and not self.broken:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                ready, _, _ = select.select([self.ctl], [], [], min(left, 0.5))
                if not ready:
                    if not self.process.running():
                        self.broken = True
                    continue
                self._take(self.ctl.recv(1 << 16), forked)

    def _take(self, data: bytes, forked: list[int] | None) -> None:
        if not data:
            self.broken = True
            return
        message: dict[str, Any] = json.loads(data)
        if "ready" in message:
            self.ready = bool(message["ready"])
            if not self.ready:
                self.refusal = str(message.get("reason", "the fork server's check failed"))
        elif message.get("loaded"):
            self.loaded = True
        elif "exited" in message:
            self.exits[int(message["exited"])] = int(message["code"])
        elif "forked" in message and forked is not None:
            forked.append(int(message["forked"]))

    def stop(self) -> None:
        self.broken = True
        self.process.stop(grace=0)
        with contextlib.suppress(OSError):
            self.ctl.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class ForkedWorker:
    """A worker forked by a ForkServer, as a WorkerChannel sees its process."""

    def __init__(self, server: ForkServer, pid: int, log: str) -> None:
        self.server, self.pid, self.log = server, pid, log

    @property
    def returncode(self) -> int | None:
        return self.server.exits.get(self.pid)

    def running(self) -> bool:
        self.server.drain()
        return self.pid not in self.server.exits and self.server.alive()

    def wait(self, deadline: float | None = None, stop: threading.Event | None = None,
             poll_s: float = 0.5) -> str:  # fmt: skip
        """As supervisor.Child.wait: "exited", "deadline" or "stopped"."""
        while True:
            if not self.running():
                return "exited"
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return "deadline"
            if stop is not None and stop.is_set():
                return "stopped"
            end = now + poll_s if deadline is None else min(deadline, now + poll_s)
            self.server._await(lambda: self.pid in self.server.exits, end)

    def stop(self, grace: float = 0.0) -> None:
        """Kills the worker and what it started (no grace: a candidate gets no say)."""
        del grace
        self.server.kill_worker(self.pid)

    def exit_text(self, wait_s: float = 0.0) -> str:
        code = self.server.exit_code(self.pid, time.monotonic() + wait_s)
        if code is not None:
            return describe_exit(code)
        if not self.server.alive():
            return f"died with its fork server, which {self.server.process.exit_text()}"
        return describe_exit(None)

    def log_tail(self, limit: int = 1500) -> str:
        return file_tail(self.log, limit)


def _quoted(text: str) -> str:
    return f": {' '.join(text.split())}" if text else ""

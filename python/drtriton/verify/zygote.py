"""The workers' fork server: `python -m drtriton.verify.zygote`, started by the harness in a
sandbox (forking.py is the harness's end). It imports torch, triton and the worker's modules
once, then forks one worker (worker.main) per candidate.

Why: a worker's start-up is most of a verification's CPU time. On the 2-core CPU machine
(2026-12-06) importing torch took 2.1 s and Python dispatch's first use 2.0 s, against 0.1 s
inside the candidate's calls; a fork of this process costs milliseconds and keeps none of the
imports' work to do again.

Each worker is as alone as a freshly sandboxed one, to the candidate:
- one worker at a time: a fork request first kills whatever is left of the previous one;
- when a worker exits or is killed, everything it started dies with it before the harness hears
  of the exit: this process is a child subreaper (PR_SET_CHILD_SUBREAPER), so a daemon the
  candidate double-forked is still its descendant, and every descendant is killed until none is
  left; only then does the harness write the next candidate's files;
- the sandbox's private /tmp and /dev/shm and the shared work directory are emptied of
  everything but the bound directories (DRT_ZYGOTE_KEEP) and the next worker's directory, so no
  file (nor the memory of a tmpfs) outlives its candidate, and the System V shared memory
  segments, semaphores and message queues of the sandbox's IPC namespace are removed (a
  sandbox per worker had a fresh namespace each);
- a worker cannot read or write this process's memory: it is not dumpable (PR_SET_DUMPABLE 0),
  which refuses ptrace and /proc/PID/mem to processes of the same user;
- each worker gets its own environment, private directory, Triton cache and resource limits,
  set after the fork and before worker.main imports the candidate. CUDA is never initialized
  here (a forked child could not use it); each worker initializes its own.
A worker that kills or stops this process only ends its own verification (the harness starts
another server, forking.py). Not reset between workers: POSIX message queues of the IPC
namespace (their names are listed only where an mqueue file system is mounted, which the
sandbox cannot do; RLIMIT_MSGQUEUE bounds them, 800 KB per user by default) and the kernel's
keyrings (per user, shared with every sandbox before the server too).

On a GPU the server also builds Triton's CUDA utilities module (cuda_utils, a C extension
Triton compiles with the host compiler into its cache) once, keeps the files in memory and
writes them into each worker's private Triton cache before the candidate is imported: every
worker would otherwise compile it again, since a shared cache would let one candidate plant a
binary for another. A candidate's own writes cannot reach them (this process's memory).
Before its first fork there, it forks a check that uses CUDA and the prebuilt module from a
child as a worker would; if that fails, the server says so and the harness starts one sandbox
per worker instead (forking.ForkUnsupported).

Protocol: SOCK_SEQPACKET messages on the descriptor named by DRT_ZYGOTE_FD, one JSON object
each. To the harness: {"loaded": true} on a GPU once the imports are done, then, after the
harness's {"op": "check"} (sent while it holds the GPU's lock shared: the check's work is GPU
work), {"ready": true} or {"ready": false, "reason"}; on the CPU {"ready": true} once the
imports are done; {"forked": pid} per fork;
{"exited": pid, "code": returncode} when the worker has ended and its leftovers are gone
(code < 0: killed by that signal). From the harness: {"op": "fork", "env", "dir"} with the
worker's request and reply pipes attached (SCM_RIGHTS); {"op": "kill"}. The socket's end is
this process's: it kills what is left and exits.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import select
import shutil
import signal
import socket
import sys
import traceback
from typing import Any

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
MESSAGE_LIMIT = 1 << 20
# Rounds of "find every descendant, kill it" before giving up: a process that forks between a
# scan and its kill is found by the next round (its parent's death reparents it here).
KILL_ROUNDS = 100
POLL_S = 0.05  # how often a waiting server looks for a worker's exit


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    if _libc().prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}, {value}) failed")


# What every worker imports at its start (worker.Worker.__init__) or when it loads a candidate.
PRELOADED = ("numpy", "torch", "triton", "triton.language", "drtriton.verify.compile_pass",
             "drtriton.verify.poison", "drtriton.verify.precision", "drtriton.verify.task",
             "drtriton.verify.timing", "drtriton.verify.worker", "drtriton.verify.worker_timing")  # fmt: skip


def _preload() -> None:
    """Imports PRELOADED and primes Python dispatch, as worker.Worker.__init__ would, without
    initializing CUDA."""
    import importlib

    for name in PRELOADED:
        importlib.import_module(name)
    import torch

    from drtriton.verify.worker import prime_dispatch

    prime_dispatch()
    if torch.cuda.is_initialized():  # a forked worker could not use CUDA at all
        raise RuntimeError("the fork server initialized CUDA while preloading")


def _on_gpu() -> bool:
    return os.environ.get("TRITON_INTERPRET") != "1"


def _prebuilt_cuda_utils() -> dict[str, bytes]:
    """Triton's cuda_utils module built once into a scratch cache: {path in the cache: bytes}.
    Loading it binds the CUDA driver's library but does not initialize it (the check proves
    that a forked child can still use CUDA)."""
    import tempfile

    from triton.backends.nvidia.driver import CudaUtils

    files: dict[str, bytes] = {}
    before = os.environ.get("TRITON_CACHE_DIR")
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["TRITON_CACHE_DIR"] = scratch
        try:
            CudaUtils()
        finally:
            if before is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = before
        for folder, _dirs, names in os.walk(scratch):
            for name in names:
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    files[os.path.relpath(path, scratch)] = f.read()
    return files


def write_cache(files: dict[str, bytes], cache_dir: str) -> None:
    """Writes the prebuilt files into a worker's Triton cache (before its candidate runs)."""
    for relative, data in files.items():
        path = os.path.join(cache_dir, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def _cuda_check(files: dict[str, bytes]) -> str | None:
    """Why a forked worker could not use CUDA and Triton's driver here, or None if it can."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            import tempfile

            import torch
            from triton.runtime import driver

            cache = tempfile.mkdtemp(prefix="check-")
            os.environ["TRITON_CACHE_DIR"] = cache
            write_cache(files, cache)
            torch.zeros(1, device="cuda").add_(1)
            torch.cuda.synchronize()
            driver.active.utils.get_device_properties(torch.cuda.current_device())
            code = 0
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        return None
    how = f"exit code {code}" if code > 0 else f"signal {-code}"
    return f"a forked worker could not use CUDA ({how})"


def _descendants(root: int) -> list[int]:
    """Live processes under `root` (by /proc's parent links), zombies excluded."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # the name may hold spaces and brackets
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(name))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def _reap() -> list[tuple[int, int]]:
    """(pid, returncode) of every child that has ended, waited for."""
    ended = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended.append((pid, os.waitstatus_to_exitcode(status)))


def kill_descendants() -> list[tuple[int, int]]:
    """Kills everything this process started, until nothing is left; returns what was reaped.
    Exits the server when descendants keep appearing (the harness starts a new one)."""
    reaped = []
    for _ in range(KILL_ROUNDS):
        pids = _descendants(os.getpid())
        if not pids:
            return reaped + _reap()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        reaped += _reap()
    sys.stderr.write("zygote: descendants kept appearing; exiting\n")
    os._exit(3)


# /proc/sysvipc table -> the libc call that removes one of its objects by id (IPC_RMID = 0).
_SYSV_TABLES = {"shm": "shmctl", "sem": "semctl", "msg": "msgctl"}


def remove_sysv_ipc() -> int:
    """Removes every System V IPC object this process may remove (in its IPC namespace: the
    sandbox's); returns how many went."""
    libc = _libc()
    removed = 0
    for table, call in _SYSV_TABLES.items():
        try:
            with open(f"/proc/sysvipc/{table}") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            ident = int(row.split()[1])
            if getattr(libc, call)(ident, 0, None) == 0:  # semctl's semnum is the 0 here
                removed += 1
    return removed


def scrub(roots: list[str], keep: list[str]) -> None:
    """Removes everything under `roots` except the `keep` paths and the directories that lead
    to them (bind mounts inside the sandbox's private tmpfs)."""
    kept = [os.path.normpath(path) for path in keep]
    for root in roots:
        _scrub_dir(os.path.normpath(root), kept)


def _scrub_dir(folder: str, kept: list[str]) -> None:
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        if path in kept:
            continue
        if any(k.startswith(path + "/") for k in kept):
            _scrub_dir(path, kept)  # it leads to a kept path: empty it around that path
            continue
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass


class Server:
    def __init__(self, ctl: socket.socket, cache_files: dict[str, bytes]) -> None:
        self.ctl = ctl
        self.cache_files = cache_files  # written into each worker's Triton cache
        self.worker: int | None = None  # the forked worker's pid, until its exit is reported
        self.shared = os.environ["DRT_ZYGOTE_DIR"]  # the bound work directory, as seen here
        self.keep = json.loads(os.environ.get("DRT_ZYGOTE_KEEP", "[]"))

    def send(self, message: dict[str, Any]) -> None:
        try:
            self.ctl.send(json.dumps(message).encode())
        except OSError:  # the harness is gone
            self.finish()

    def start(self) -> None:
        """Says it is ready (on a GPU: after the harness's check request and the check)."""
        if not _on_gpu():
            self.send({"ready": True})
            return
        self.send({"loaded": True})
        data = self.ctl.recv(MESSAGE_LIMIT)
        if not data or json.loads(data).get("op") != "check":
            self.finish()
        failure = _cuda_check(self.cache_files)
        if failure is not None:
            self.send({"ready": False, "reason": failure})
            self.finish()
        self.send({"ready": True})

    def serve(self) -> None:
        self.start()
        while True:
            ready, _, _ = select.select([self.ctl], [], [], POLL_S)
            self.note_exits(_reap())
            if not ready:
                continue
            data, fds, _flags, _addr = socket.recv_fds(self.ctl, MESSAGE_LIMIT, 2)
            if not data:
                self.finish()
            message = json.loads(data)
            if message.get("op") == "fork" and len(fds) == 2:
                self.fork(message, fds)
            else:
                for fd in fds:
                    os.close(fd)
                if message.get("op") == "kill":
                    self.clear(kill=True)

    def note_exits(self, ended: list[tuple[int, int]]) -> None:
        """A worker that has exited: its leftovers are killed before the harness hears."""
        for pid, code in ended:
            if pid == self.worker:
                self.clear(kill=False, code=code)

    def clear(self, *, kill: bool, code: int | None = None) -> None:
        """Kills the worker (when `kill`) and everything it left, empties the shared
        directories, and reports the worker's exit."""
        for pid, returncode in kill_descendants():
            if pid == self.worker and code is None:
                code = returncode
        # Not the shared directory yet: the harness may still read the worker's log there.
        scrub(["/tmp", "/dev/shm"], [*self.keep, self.shared])
        remove_sysv_ipc()
        if self.worker is not None:
            pid, self.worker = self.worker, None
            if code is None:  # reaped in an earlier round (note_exits raced with the kill)
                code = -signal.SIGKILL if kill else 0
            self.send({"exited": pid, "code": code})

    def fork(self, message: dict[str, Any], fds: list[int]) -> None:
        if self.worker is not None:  # else the last clear() left nothing running, /tmp empty
            self.clear(kill=True)
        inside = os.path.join(self.shared, os.path.basename(message["dir"]))
        scrub([self.shared], [self.shared + "/zygote.log", inside])  # clear() keeps this one
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            self.ctl.close()
            _become_worker(message["env"], inside, fds, self.cache_files)
        for fd in fds:
            os.close(fd)
        self.worker = pid
        self.send({"forked": pid})

    def finish(self) -> None:
        kill_descendants()
        os._exit(0)


def _become_worker(env: dict[str, str], workdir: str, fds: list[int],
                   cache_files: dict[str, bytes]) -> None:  # fmt: skip
    """The forked child: the worker's environment, directory, Triton cache and log, then
    worker.main."""
    try:
        os.environ.clear()
        os.environ.update(env)
        os.environ["DRT_VERIFY_FDS"] = f"{fds[0]},{fds[1]}"
        os.environ["DRT_VERIFY_DIR"] = workdir
        os.chdir(workdir)
        if cache_files and "TRITON_CACHE_DIR" in env:
            write_cache(cache_files, env["TRITON_CACHE_DIR"])
        log = os.open("worker.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        from drtriton.verify import worker

        worker.main()  # ends in os._exit
    except BaseException:  # the harness reads the traceback in worker.log
        traceback.print_exc()
        sys.stderr.flush()
    os._exit(1)


def main() -> None:
    ctl = socket.socket(fileno=int(os.environ["DRT_ZYGOTE_FD"]))
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _preload()
    files: dict[str, bytes] = {}
    if _on_gpu():
        try:
            files = _prebuilt_cuda_utils()
        except Exception:  # each worker builds its own, as without a server
            traceback.print_exc()
    Server(ctl, files).serve()


if __name__ == "__main__":
    main()

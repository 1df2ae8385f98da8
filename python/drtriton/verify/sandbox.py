"""Isolation of the candidate's worker process.

Levels, strongest first; `auto` takes the first that works here (probed once per process) and the
verdict records it in its `sandbox` field:
- "bwrap": bubblewrap. Everything read-only (`--ro-bind / /`), devices passed through (the GPU
  needs /dev/nvidia*), fresh tmpfs on /tmp and /dev/shm, the private work directory bound
  writable, new network (no interfaces but lo, down), IPC, UTS and PID namespaces; the sandbox dies
  with its parent and with its PID 1.
- "unshare": util-linux unshare (the H200 machine has no bubblewrap; `unshare -Ur` works there).
  New network, mount, IPC, UTS and PID namespaces (a user namespace with root mapped when not
  root; no PID namespace where /proc cannot be mounted again); a small shell prelude mounts a tmpfs on /tmp and /dev/shm, binds the private directory
  to /tmp/work, and remounts every other mount read-only where the kernel allows it.
- "none": a plain child process (a new session so the whole group can be killed). Only the
  static checks and the resource limits stand between the candidate and the machine.

Both sandboxes hide the real /tmp and /dev/shm, where a Python environment may live (a venv in
/tmp): the interpreter's directories there (`kept_paths`) are bound back read-only, or every
worker would fail to start and every candidate come back `crashed`. `choose` also checks once
per process and level that the interpreter starts inside (`ensure_starts`); where it does not,
it raises drtriton.errors.SandboxError: the harness's failure, never the candidate's verdict.

Every level also gets resource limits, set by the worker itself before it imports the candidate:
RLIMIT_CPU, RLIMIT_NOFILE, RLIMIT_FSIZE, RLIMIT_CORE = 0, and on the CPU RLIMIT_DATA. Not
RLIMIT_AS: CUDA reserves terabytes of virtual address space at start-up and fails under it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys

from drtriton.errors import SandboxError

LEVELS = ("bwrap", "unshare", "none")
WORKDIR_INSIDE_UNSHARE = "/tmp/work"
# Directories both sandboxes replace by an empty tmpfs.
MASKED = ("/tmp", "/dev/shm")
# The directory holding the drtriton package (the worker's PYTHONPATH, channel.worker_env).
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The unshare prelude holds each kept directory open on fds 4-9 (dash allows single-digit fds).
_UNSHARE_KEEP_FDS = range(4, 10)
# File descriptors passed into a sandbox are moved to this number or above (high_fd): the
# unshare prelude opens the private directory as fd 3, which closed the worker's request pipe
# whenever a fresh harness process got fds 3 and 4 for its first pipe ("Bad file descriptor" at
# the worker's start), and holds the interpreter's directories under /tmp on fds 4-9.
FIRST_PASSED_FD = 10
# The levels whose workers are forked from a fork server (zygote.py) instead of started one by
# one: both give the server a private /tmp and /dev/shm to empty between candidates. Under
# "none" those are the machine's own.
FORKING_LEVELS = ("bwrap", "unshare")
# The start probe: the interpreter runs, finds drtriton and can find torch (without importing
# it: that would add seconds to every process's first verification).
_START_PROBE = (
    "import importlib.util, drtriton; raise SystemExit(importlib.util.find_spec('torch') is None)"
)

# Runs as `sh -c PRELUDE sh PRIVATE_DIR KEPT_DIR... -- CMD...` inside the new namespaces. The
# kept directories are opened before the tmpfs hides them and bound back, read-only, from
# their descriptors (as the private directory is, writable).
_UNSHARE_PRELUDE = r"""
set -e
exec 3<"$1"; shift
fd=4
while [ "$1" != "--" ]; do
  eval "exec $fd<\"\$1\""; eval "kept$fd=\$1"; fd=$((fd + 1)); shift
done
shift
mount --make-rprivate / 2>/dev/null || true
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p /tmp/work
mount --bind /proc/self/fd/3 /tmp/work
exec 3<&-
mount -t tmpfs tmpfs /dev/shm 2>/dev/null || true
i=4
while [ "$i" -lt "$fd" ]; do
  eval "p=\$kept$i"
  mkdir -p "$p"
  mount --no-canonicalize --bind "/proc/self/fd/$i" "$p"
  mount -o remount,bind,ro "$p"
  eval "exec $i<&-"
  i=$((i + 1))
done
for m in $(awk '{print $5}' /proc/self/mountinfo); do
  case "$m" in /tmp|/tmp/*|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue;; esac
  mount -o remount,bind,ro "$m" 2>/dev/null || true
done
cd /tmp/work
exec "$@"
"""


def high_fd(fd: int) -> int:
    """`fd` moved to a number >= FIRST_PASSED_FD (the old number is closed)."""
    import fcntl

    if fd >= FIRST_PASSED_FD:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, FIRST_PASSED_FD)
    os.close(fd)
    return moved


def kept_paths() -> list[str]:
    """The directories under MASKED that the worker's interpreter needs (its venv and the
    venv's base, sys.executable's directory before and after symlinks, drtriton's package
    root, PYTHONPATH and sys.path entries), outermost only.

    Never a masked directory itself (other workers' private directories are in /tmp), nor,
    from the search path, the current directory or sys.path[0] (the caller's script or working
    directory; the worker has its own): a candidate has no business reading the user's files.
    The search path is the worker interpreter's own (worker_search_path), not this process's."""
    needed = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
              os.path.dirname(os.path.abspath(sys.executable)),
              os.path.dirname(os.path.realpath(sys.executable)), PACKAGE_ROOT]  # fmt: skip
    search = [*os.environ.get("PYTHONPATH", "").split(os.pathsep),
              *worker_search_path(sys.executable, worker_pythonpath())]  # fmt: skip
    callers = {os.path.realpath(os.getcwd())}
    if sys.path and sys.path[0]:
        callers.add(os.path.realpath(sys.path[0]))
    found = _masked_dirs(needed) | (_masked_dirs(search) - callers)
    outermost: list[str] = []
    for path in sorted(found):  # a parent sorts before its children
        if not _under(path, tuple(outermost)):
            outermost.append(path)
    return outermost


def worker_pythonpath() -> str:
    """The worker's PYTHONPATH: drtriton's package root, then this process's PYTHONPATH."""
    return os.pathsep.join([PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)


def _probe_env(pythonpath: str) -> dict[str, str]:
    """The environment of a probe of the worker's interpreter (outside a worker's pipes)."""
    return {**os.environ, "PYTHONPATH": pythonpath, "PYTHONDONTWRITEBYTECODE": "1"}


@functools.cache  # once per process, interpreter and PYTHONPATH
def worker_search_path(executable: str, pythonpath: str) -> tuple[str, ...]:
    """sys.path[1:] of the worker's interpreter (its PYTHONPATH, site-packages and what .pth
    files add), asked of that interpreter. This process's own sys.path also holds what it
    inserted at run time, which the worker never reads: pytest puts each test directory there,
    and a checkout under /tmp then needed 9 directories bound into the unshare sandbox, which
    binds 6 (the CI run of 2026-12-07 at 2298a9a). Where the interpreter cannot answer, this
    process's sys.path stands in."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="drtriton-path-") as d:
        try:
            done = subprocess.run(
                [executable, "-c", "import sys; print('\\n'.join(sys.path[1:]))"],
                capture_output=True, text=True, timeout=60, cwd=d, env=_probe_env(pythonpath),
                check=False,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            return tuple(sys.path[1:])
    if done.returncode != 0:
        return tuple(sys.path[1:])
    return tuple(line for line in done.stdout.splitlines() if line)


def _masked_dirs(paths: list[str]) -> set[str]:
    """The existing directories among `paths` (as given and with symlinks resolved) that lie
    under a masked directory."""
    found: set[str] = set()
    for path in filter(None, paths):
        for form in (os.path.abspath(path), os.path.realpath(path)):
            if form not in MASKED and _under(form, MASKED) and os.path.isdir(form):
                found.add(form)
    return found


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _bwrap_prefix(private: str) -> list[str]:
    kept = [arg for path in kept_paths() for arg in ("--ro-bind", path, path)]
    return [
        "bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
        "--tmpfs", "/tmp", "--tmpfs", "/dev/shm", *kept, "--bind", private, private,
        "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-pid",
        "--die-with-parent", "--chdir", private, "--",
    ]  # fmt: skip


# A fresh PID namespace needs a fresh /proc, which a user namespace may not mount where the
# container masks parts of /proc (Docker does); then the PID namespace is dropped and the
# process group (setsid) is what the harness kills.
# Root in a container may lack CAP_SYS_ADMIN and still be allowed a user namespace, so root
# tries both too.
_UNSHARE_PID = ["--pid", "--fork", "--kill-child", "--mount-proc"]
_UNSHARE_USER = ["--user", "--map-root-user"]
_unshare_pid = [True]  # the variant that works here; set by works("unshare")
_unshare_user = [os.geteuid() != 0]


def _unshare_prefix(private: str) -> list[str]:
    user = _UNSHARE_USER if _unshare_user[0] else []
    pid = _UNSHARE_PID if _unshare_pid[0] else []
    kept = kept_paths()
    if len(kept) > len(_UNSHARE_KEEP_FDS):
        raise SandboxError(
            f"the Python environment spans {len(kept)} directories under {' and '.join(MASKED)}; "
            f"the unshare sandbox binds at most {len(_UNSHARE_KEEP_FDS)}: use --sandbox bwrap, "
            "or install it elsewhere"
        )
    return [
        "unshare", *user, "--net", "--mount", "--ipc", "--uts", *pid, "--propagation", "private",
        "sh", "-c", _UNSHARE_PRELUDE, "sh", private, *kept, "--",
    ]  # fmt: skip


def wrap(level: str, private: str, cmd: list[str]) -> tuple[list[str], str]:
    """(argv, the private directory's path as the worker sees it)."""
    if level == "bwrap":
        return [*_bwrap_prefix(private), *cmd], private
    if level == "unshare":
        return [*_unshare_prefix(private), *cmd], WORKDIR_INSIDE_UNSHARE
    assert level == "none", f"unknown sandbox level {level!r}"
    return list(cmd), private


@functools.cache
def works(level: str) -> bool:
    """Whether `level` can start a process here, and the sandbox is what it claims."""
    if level == "none":
        return True
    if shutil.which(level) is None:
        return False
    if level == "unshare":
        users = (False, True) if os.geteuid() == 0 else (True,)
        for with_user in users:
            for with_pid in (True, False):
                _unshare_user[0], _unshare_pid[0] = with_user, with_pid
                if _probe(level):
                    return True
        return False
    return _probe(level)


def _probe(level: str) -> bool:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="drtriton-probe-") as d:
        # Inside: the private dir is writable, / is not, and no non-loopback interface is up.
        probe = (
            'touch "$PWD/ok" && ! touch /drtriton-probe 2>/dev/null && '
            "! grep -qv ' lo:\\|Inter-\\|face' /proc/net/dev"
        )
        argv, _ = wrap(level, d, ["sh", "-c", probe])
        try:
            done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0 and os.path.exists(os.path.join(d, "ok"))


def choose(preference: str = "auto") -> str:
    """The sandbox level to use: `preference` if it works, else the strongest that does."""
    if preference != "auto":
        if preference not in LEVELS:
            raise ValueError(
                f"unknown sandbox {preference!r}; choose from auto, {', '.join(LEVELS)}"
            )
        if not works(preference):
            raise SandboxError(f"sandbox {preference!r} does not work on this machine")
        ensure_starts(preference)
        return preference
    # The strongest level that isolates; if the interpreter cannot start in it, that is an
    # error, not a reason to run candidates with less isolation than this machine offers.
    level = next((level for level in LEVELS if works(level)), "none")
    ensure_starts(level)
    return level


def ensure_starts(level: str) -> None:
    """Raises SandboxError when the worker's interpreter cannot start under `level`."""
    failure = _start_failure(level, sys.executable)
    if failure is not None:
        raise SandboxError(
            f"the verifier's sandbox ({level}) cannot start the worker's Python "
            f"{sys.executable}: {failure}"
        )


@functools.cache  # once per process, level and interpreter: a worker starts per candidate
def _start_failure(level: str, executable: str) -> str | None:
    """Why `executable` cannot run the start probe under `level`, or None when it can."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="drtriton-probe-") as d:
        argv, _ = wrap(level, d, [executable, "-c", _START_PROBE])
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=d,
                                  env=_probe_env(worker_pythonpath()), check=False)  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{type(exc).__name__}: {exc}"
    if done.returncode == 0:
        return None
    said = " ".join((done.stderr or done.stdout).split())[-500:]
    if done.returncode == 1 and not said:
        return "torch is not importable there"
    return f"exit status {done.returncode}" + (f": {said}" if said else "")

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

Every level also gets resource limits, set by the worker itself before it imports the candidate:
RLIMIT_CPU, RLIMIT_NOFILE, RLIMIT_FSIZE, RLIMIT_CORE = 0, and on the CPU RLIMIT_DATA. Not
RLIMIT_AS: CUDA reserves terabytes of virtual address space at start-up and fails under it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

LEVELS = ("bwrap", "unshare", "none")
WORKDIR_INSIDE_UNSHARE = "/tmp/work"

# Runs as `sh -c PRELUDE sh PRIVATE_DIR CMD...` inside the new namespaces.
_UNSHARE_PRELUDE = r"""
set -e
exec 3<"$1"; shift
mount --make-rprivate / 2>/dev/null || true
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p /tmp/work
mount --bind /proc/self/fd/3 /tmp/work
exec 3<&-
mount -t tmpfs tmpfs /dev/shm 2>/dev/null || true
for m in $(awk '{print $5}' /proc/self/mountinfo); do
  case "$m" in /tmp|/tmp/*|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue;; esac
  mount -o remount,bind,ro "$m" 2>/dev/null || true
done
cd /tmp/work
exec "$@"
"""


def _bwrap_prefix(private: str) -> list[str]:
    return [
        "bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
        "--tmpfs", "/tmp", "--tmpfs", "/dev/shm", "--bind", private, private,
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
    return [
        "unshare", *user, "--net", "--mount", "--ipc", "--uts", *pid, "--propagation", "private",
        "sh", "-c", _UNSHARE_PRELUDE, "sh", private,
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
            raise RuntimeError(f"sandbox {preference!r} does not work on this machine")
        return preference
    for level in LEVELS:
        if works(level):
            return level
    return "none"

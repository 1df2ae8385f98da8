"""The workers' fork server (verify/zygote.py, verify/forking.py): workers forked from one
server, one candidate's leftovers (processes, files) gone before the next candidate runs, and a
candidate that kills or stops its server ending only its own verification."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import HERE, task_source

from drtriton.errors import SandboxError
from drtriton.verify import Verifier, sandbox
from drtriton.verify.verdict import Verdict
from drtriton.verify.zygote import _descendants, scrub

HONEST = (HERE / "honest" / "add_relu.py").read_text()
MARK = "987.654"  # the daemon's sleep: no other process on the machine sleeps this long
PLANTED = (
    "import ctypes, os\n"
    "SHARED = os.path.dirname(os.getcwd())\n"
    "PLANTS = ('/tmp/planted', '/dev/shm/planted', os.path.join(SHARED, 'planted'))\n"
    "SEGMENT = 0x5EED  # a System V shared memory key\n"
)
# Leaves files in every writable place and a daemon (a grandchild in a session of its own).
LEAVE_BEHIND = (
    PLANTED
    + "import subprocess\n"
    + "for plant in PLANTS:\n"
    + "    open(plant, 'w').write('left')\n"
    + "assert ctypes.CDLL(None).shmget(SEGMENT, 4096, 0o1666) >= 0  # IPC_CREAT | 0666\n"
    + f"subprocess.Popen(['sh', '-c', 'sleep {MARK} & sleep {MARK}'], start_new_session=True)\n"
    + HONEST
)
# Fails at import if it sees any of it.
LOOK_AROUND = (
    PLANTED
    + "seen = [plant for plant in PLANTS if os.path.exists(plant)]\n"
    + "segments = open('/proc/sysvipc/shm').read().splitlines()[1:]\n"
    + "seen += ['shm segment' for row in segments if int(row.split()[0]) == SEGMENT]\n"
    + "for pid in filter(str.isdigit, os.listdir('/proc')):\n"
    + "    try:\n"
    + "        cmd = open(f'/proc/{pid}/cmdline', 'rb').read()\n"
    + "    except OSError:\n"
    + "        continue\n"
    + f"    if b'{MARK}' in cmd:\n"
    + "        seen.append(f'process {pid}')\n"
    + "if seen:\n"
    + "    raise RuntimeError(f'left behind: {seen}')\n"
    + HONEST
)
KILL_SERVER = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n" + HONEST
STOP_SERVER = "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\n" + HONEST


class Forking:
    """A Verifier whose workers fork from a server under one sandbox level."""

    def __init__(self, level: str) -> None:
        self.level, self.verifier = level, Verifier()

    def judge(self, candidate: str) -> Verdict:
        return self.verifier.verify(task_source("add_relu"), candidate, static_checks=False,
                                    prewarm=True, timeout=60, sandbox=self.level)  # fmt: skip

    def server(self) -> Any:
        (server,) = self.verifier.servers.values()
        return server


@pytest.fixture(params=sandbox.FORKING_LEVELS)
def forking(request: pytest.FixtureRequest) -> Iterator[Forking]:
    if not sandbox.works(request.param):
        pytest.skip(f"no {request.param} sandbox here")
    f = Forking(request.param)
    yield f
    f.verifier.close()


def test_workers_fork_from_one_server(forking: Forking) -> None:
    first = forking.judge(HONEST)
    server = forking.server()
    second = forking.judge(HONEST)
    assert first.correct and second.correct
    assert forking.server() is server and server.alive()


def test_leftovers_are_gone_before_the_next_candidate(forking: Forking) -> None:
    planted = forking.judge(LEAVE_BEHIND)
    server = forking.server()
    assert planted.correct, planted.to_json()
    seen = forking.judge(LOOK_AROUND)
    assert forking.server() is server  # the same server: what the test is about
    assert seen.correct, seen.to_json()
    assert not os.path.exists(os.path.join(server.dir, "planted"))


def test_a_candidate_that_kills_its_server_ends_only_its_own_verification(
    forking: Forking,
) -> None:
    forking.judge(HONEST)
    server = forking.server()
    killed = forking.judge(KILL_SERVER)
    if forking.level == "bwrap":  # under unshare the server is PID 1: immune to the kill
        assert killed.status == "crashed", killed.to_json()
        assert "fork server" in killed.reason
    after = forking.judge(HONEST)
    assert after.correct, after.to_json()
    if killed.status == "crashed":
        assert forking.server() is not server


def test_a_candidate_that_stops_its_server_ends_only_its_own_verification(
    forking: Forking,
) -> None:
    forking.judge(HONEST)
    server = forking.server()
    forking.judge(STOP_SERVER)  # its own verdict may be anything
    after = forking.judge(HONEST)
    assert after.correct, after.to_json()
    if forking.level == "bwrap":  # under unshare the server is PID 1: immune to the stop
        assert forking.server() is not server


def test_workers_start_alone_where_a_forked_one_could_not_use_the_gpu() -> None:
    # TRITON_INTERPRET=0 makes the server take itself for a GPU one; on a machine without
    # CUDA its check (a forked child that allocates on the GPU) fails, as it would where a
    # driver did not survive the fork.
    if not any(sandbox.works(level) for level in sandbox.FORKING_LEVELS):
        pytest.skip("no sandbox with a fork server here")
    import torch

    if torch.cuda.is_available():
        pytest.skip("the check passes on a GPU machine")
    with Verifier() as v:
        verdict = v.verify(task_source("add_relu"), HONEST, extra_env={"TRITON_INTERPRET": "0"},
                           timeout=60)  # fmt: skip
        assert verdict.extra["forked"] is False
        (why,) = v.unforkable.values()
        assert "could not use CUDA" in why and not v.servers
        again = v.verify(task_source("add_relu"), HONEST, timeout=60)
        assert again.correct and again.extra["forked"] is True  # other configurations fork


def test_a_server_that_cannot_start_is_the_harness_error_with_its_log(forking: Forking) -> None:
    # No standard library: the interpreter dies at start-up, wherever drtriton is installed.
    with pytest.raises(SandboxError, match=r"fork server did not start.*encodings"):
        forking.verifier.verify(task_source("add_relu"), HONEST, sandbox=forking.level,
                                extra_env={"PYTHONHOME": "/nonexistent"})  # fmt: skip


def test_scrub_keeps_the_kept_paths_and_the_way_to_them(tmp_path: pathlib.Path) -> None:
    kept = tmp_path / "a" / "venv"
    kept.mkdir(parents=True)
    (kept / "lib.py").write_text("kept")
    (tmp_path / "a" / "planted").write_text("x")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "deep").write_text("x")
    (tmp_path / "file").write_text("x")
    os.symlink("/", tmp_path / "root-link")
    scrub([str(tmp_path)], [str(kept)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["venv"]
    assert (kept / "lib.py").read_text() == "kept"


def test_descendants_finds_a_grandchild_in_another_session() -> None:
    child = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time\n"
        "subprocess.Popen(['sleep', '30'], start_new_session=True)\n"
        "time.sleep(30)\n"
    )])  # fmt: skip
    try:
        end = time.monotonic() + 20
        found: list[int] = []
        while not found and time.monotonic() < end:
            time.sleep(0.05)
            found = _descendants(child.pid)
        (grandchild,) = found
        assert b"sleep" in pathlib.Path(f"/proc/{grandchild}/cmdline").read_bytes()
    finally:
        for pid in [*_descendants(child.pid), child.pid]:
            os.kill(pid, 9)
        child.wait()

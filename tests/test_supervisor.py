"""supervisor.Child: the one child-process supervisor of the verifier's workers and the
evaluation's problem processes."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

from drtriton.supervisor import Child, describe_exit


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_child_that_exits_is_waited_for_and_its_output_is_in_the_log(tmp_path: Path) -> None:
    child = Child(_python("print('hello'); raise SystemExit(3)"), tmp_path / "log")
    assert child.wait(deadline=time.monotonic() + 30) == "exited"
    assert child.returncode == 3 and child.exit_text() == "exited with code 3"
    assert child.log_tail() == "hello"


def test_a_deadline_or_a_stop_leaves_the_child_to_the_caller(tmp_path: Path) -> None:
    child = Child(_python("import time; time.sleep(60)"), tmp_path / "log")
    assert child.wait(deadline=time.monotonic() + 0.3, poll_s=0.05) == "deadline"
    assert child.running()
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    assert child.wait(stop=stop, poll_s=0.05) == "stopped"
    child.stop(grace=0)
    assert not child.running() and child.exit_text() == "was killed by SIGKILL"


def test_stop_reaches_what_the_child_started_and_lets_it_clean_up(tmp_path: Path) -> None:
    pid_file, cleaned = tmp_path / "grandchild.pid", tmp_path / "cleaned"
    code = (
        "import os, signal, subprocess, sys, time\n"
        "def bye(*a):\n"
        f"    open({str(cleaned)!r}, 'w').write('yes'); sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, bye)\n"
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        # Written whole, then renamed: the test polls for the file and must never read it
        # empty (the clean-clone CI once did, on a busy 2-core machine).
        f"open({str(pid_file)!r} + '.tmp', 'w').write(str(p.pid))\n"
        f"os.replace({str(pid_file)!r} + '.tmp', {str(pid_file)!r})\n"
        "time.sleep(60)\n"
    )
    child = Child(_python(code), tmp_path / "log")
    end = time.monotonic() + 30
    while not pid_file.exists() and time.monotonic() < end:
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    child.stop(grace=5)
    assert cleaned.read_text() == "yes"  # SIGTERM first: its finally blocks ran
    time.sleep(0.2)
    try:
        os.kill(grandchild, 0)
        alive = Path(f"/proc/{grandchild}/stat").read_text().split()[2] != "Z"
    except ProcessLookupError:
        alive = False
    assert not alive  # the whole session's group was killed


def test_exits_read_as_words() -> None:
    assert describe_exit(None) == "is still running"
    assert describe_exit(0) == "exited with code 0"
    assert describe_exit(-signal.SIGSEGV) == "was killed by SIGSEGV"
    assert describe_exit(128 + signal.SIGKILL) == "was killed by SIGKILL"  # a sandbox's report

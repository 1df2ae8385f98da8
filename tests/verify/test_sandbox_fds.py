"""The worker's pipes survive the sandbox's own file descriptors (unshare's prelude uses fd 3)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import HERE

from drtriton.verify import sandbox

# A fresh interpreter whose first verification is the first pipe it opens: without the fix its
# pipe got fds 3 and 4, and the unshare prelude closed fd 3 (the request pipe) in the worker.
FIRST_VERIFICATION = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from conftest import HERE, task_source
from drtriton.verify import verify
v = verify(task_source("add_relu"), (HERE / "honest" / "add_relu.py").read_text(),
           sandbox="unshare")
print(v.status)
"""


@pytest.mark.skipif(not sandbox.works("unshare"), reason="unshare does not work here")
def test_first_verification_of_a_process_under_unshare() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FIRST_VERIFICATION], capture_output=True, text=True, timeout=300
    )
    assert done.stdout.strip().splitlines()[-1:] == ["correct"], done.stdout + done.stderr[-2000:]

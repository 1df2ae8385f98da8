"""Files that survive interruption: atomic text writes and torn-append detection.

Every long job (synth, teach, verify-batch, eval) appends one JSON line per finished item and
resumes from what is there; a job killed mid-write leaves a last line without its newline,
which `ends_torn` reports so the reader can drop and redo it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def ends_torn(path: str | Path) -> bool:
    """True when the file's last line lacks its newline (an append cut short)."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return False
        f.seek(-1, os.SEEK_END)
        return f.read(1) != b"\n"


def write_text_atomic(path: str | Path, text: str) -> None:
    """Writes `text` to `path` through a temporary file beside it: readers see the old file or
    the new one, never a half-written one."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide results from other users
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def removed_if_left_empty(path: str | Path) -> Iterator[None]:
    """Removes `path` when the block fails and leaves it empty, having created it: a run that
    fails before its first record leaves nothing behind. A file that was there, or that holds
    records (an interrupted run's, to resume from), is kept."""
    path = Path(path)
    existed = path.exists()
    try:
        yield
    except BaseException:
        with contextlib.suppress(OSError):
            if not existed and path.is_file() and path.stat().st_size == 0:
                path.unlink()
        raise

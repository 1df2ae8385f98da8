"""results.jsonl: append-only, resumable result records keyed by `id`.

Each record is appended with one `os.write` on an O_APPEND descriptor, so a killed run leaves
whole lines only; a torn last line (the machine died mid-write) is ignored when reading and
closed with a newline before the next append, and its problem is run again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from drtriton.files import ends_torn


def read_results(path: Path) -> list[dict[str, Any]]:
    """The whole records of `path` (none if it does not exist); later duplicates win."""
    by_id: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return []
    with path.open() as f:
        for line in f:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn line: that problem is run again
            if isinstance(record, dict) and "id" in record:
                by_id[str(record["id"])] = record
    return list(by_id.values())


class ResultStore:
    """Appends records to a JSONL file, one atomic write per record."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.done = {str(r["id"]) for r in read_results(path)}
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if ends_torn(path):
            os.write(self._fd, b"\n")  # the next record starts a line of its own

    def append(self, record: dict[str, Any]) -> None:
        os.write(self._fd, (json.dumps(record) + "\n").encode())
        self.done.add(str(record["id"]))

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

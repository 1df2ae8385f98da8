"""JSONL datasets (DESIGN.md "Datasets"): one reader for programs, pairs and results, so that
every command reports a bad file the same way (path:line, no traceback)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from drtriton.errors import UserError


def read_jsonl(
    path: str | Path, required: tuple[str, ...] = (), what: str = "record"
) -> Iterator[dict[str, Any]]:
    """Yields the JSON objects of a JSONL file, skipping blank lines.

    Raises UserError naming the file and line for a missing file, a line that is not a JSON
    object, or an object without one of the `required` keys.
    """
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    with path.open() as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{n}: not JSON: {exc.msg}") from None
            missing = [key for key in required if not isinstance(record, dict) or key not in record]
            if not isinstance(record, dict) or missing:
                keys = " and ".join(f"`{k}`" for k in required) or "a JSON object"
                raise UserError(f"{path}:{n}: a {what} needs {keys}")
            yield record

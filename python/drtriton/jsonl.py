"""JSONL datasets (DESIGN.md "Datasets"): one reader for programs, pairs and results, so that
every command reports a bad file the same way (path:line, no traceback)."""

from __future__ import annotations

import json
import lzma
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from drtriton.errors import UserError


def read_jsonl(
    path: str | Path, required: tuple[str, ...] = (), what: str = "record"
) -> Iterator[dict[str, Any]]:
    """Yields the JSON objects of a JSONL file, skipping blank lines.

    A file named `*.xz` is read through lzma: the committed SFT data is stored so (teacher
    pairs compress about 45x: 4.6 MB of level-1 pairs to 103 KB).

    Raises UserError naming the file and line for a missing file, a line that is not a JSON
    object, a damaged .xz file, or an object without one of the `required` keys.
    """
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        yield from _records(path, required, what)
    except lzma.LZMAError as exc:
        raise UserError(f"{path}: not a readable .xz file: {exc}") from None


def _records(path: Path, required: tuple[str, ...], what: str) -> Iterator[dict[str, Any]]:
    opened = lzma.open(path, "rt") if path.suffix == ".xz" else path.open()
    with opened as f:
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


# Precision modes of records (DESIGN.md "Datasets"): a program record says the mode it is to be
# judged in, a pair or a verdict the mode it was judged in. Files written before the field
# existed hold fp32 records (the only mode there was), so a missing field reads as fp32.
DEFAULT_PRECISION = "fp32"


def record_precision(record: dict[str, Any], default: str = DEFAULT_PRECISION) -> str:
    """The precision mode `record` states, or `default` when it states none."""
    return str(record.get("precision") or default)


def run_precision(records: list[dict[str, Any]], path: str | Path,
                  requested: str | None = None) -> str:  # fmt: skip
    """The one precision mode of the program records of `path`, which a run verifies them in.

    `requested` (a command's explicit --precision) is the mode of records that state none
    (their files predate the field; a program's text is the same in every mode) and must agree
    with the records that state one. Records of two modes are refused: the run's pairs and
    verdicts would mix them silently.
    """
    from drtriton.verify.precision import mode

    found = sorted({record_precision(r, requested or DEFAULT_PRECISION) for r in records})
    other = [name for name in found if name != requested]
    if requested and other:
        raise UserError(f"{path} holds programs in precision {', '.join(other)}, not "
                        f"{requested}: drop --precision or pass --precision {other[0]}")  # fmt: skip
    if len(found) > 1:
        raise UserError(f"{path} holds programs in several precisions ({', '.join(found)}; a "
                        "record without the field is fp32): give each precision its own run")  # fmt: skip
    name = found[0] if found else requested or DEFAULT_PRECISION
    try:
        mode(name)
    except UserError as exc:
        raise UserError(f"{path}: {exc}") from None
    return name


def stored_precisions(path: str | Path, unstated: str | None = DEFAULT_PRECISION) -> set[str]:
    """The precision modes of the whole-line records of an output file (none: no file).

    A torn last line (an interrupted append) is skipped, as the commands that resume do.
    `unstated`: the mode of a record without the field; None skips such records (a batch
    verifier's `error` records, which no mode judged).
    """
    path = Path(path)
    if not path.is_file():
        return set()
    found: set[str] = set()
    with path.open("rb") as f:
        for line in f:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # torn or blank: the resuming command skips it too
            if isinstance(record, dict) and (unstated or record.get("precision")):
                found.add(record_precision(record, unstated or DEFAULT_PRECISION))
    return found


def require_precision(path: str | Path, precision: str, what: str = "records",
                      unstated: str | None = DEFAULT_PRECISION) -> None:  # fmt: skip
    """A UserError when the existing output `path`, which a run appends to or resumes, holds
    records of a precision other than `precision`: one file of pairs or verdicts must not mix
    kernels judged in two modes."""
    other = sorted(stored_precisions(path, unstated) - {precision})
    if other:
        raise UserError(f"{path} holds {what} in precision {', '.join(other)}, not "
                        f"{precision}: one file holds one precision, use another --out")  # fmt: skip

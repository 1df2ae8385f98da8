"""The shared JSONL reader: records through, user mistakes as UserError with path:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from drtriton.errors import UserError
from drtriton.jsonl import read_jsonl


def test_reads_objects_and_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": 1, "source": "x"}\n\n{"id": 2, "source": "y"}\n')
    assert [r["id"] for r in read_jsonl(path, required=("id", "source"))] == [1, 2]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"id": 1}\nnot json\n', "a.jsonl:2: not JSON"),
        ('{"source": "x"}\n', "a.jsonl:1: a pair needs `id`"),
        ("[1, 2]\n", "a.jsonl:1: a pair needs `id`"),
    ],
)
def test_bad_lines_name_the_line(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(text)
    with pytest.raises(UserError, match=fragment):
        list(read_jsonl(path, required=("id",), what="pair"))


def test_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        list(read_jsonl(tmp_path / "missing.jsonl"))

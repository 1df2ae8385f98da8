"""The shared JSONL reader: records through, user mistakes as UserError with path:line; the
records' precision modes (a missing field reads as fp32)."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from drtriton.errors import UserError
from drtriton.jsonl import read_jsonl, require_precision, run_precision, stored_precisions


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


def test_xz_files_read_as_their_text(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.xz"
    path.write_bytes(lzma.compress(b'{"id": 1, "source": "x"}\n{"id": 2, "source": "y"}\n'))
    assert [r["id"] for r in read_jsonl(path, required=("id", "source"))] == [1, 2]
    path.write_bytes(lzma.compress(b'{"id": 1}\nnot json\n'))
    with pytest.raises(UserError, match=r"a\.jsonl\.xz:2: not JSON"):
        list(read_jsonl(path))
    path.write_bytes(b"not xz at all")
    with pytest.raises(UserError, match=r"not a readable \.xz file"):
        list(read_jsonl(path))


def test_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        list(read_jsonl(tmp_path / "missing.jsonl"))


OLD = {"id": "a", "source": "x"}  # written before records named their precision
FP16 = {"id": "b", "source": "y", "precision": "fp16"}


def test_a_record_without_the_field_is_fp32() -> None:
    assert run_precision([OLD], "p.jsonl") == "fp32"
    assert run_precision([FP16, FP16], "p.jsonl") == "fp16"
    assert run_precision([], "p.jsonl") == "fp32"


def test_an_explicit_mode_names_old_records_and_must_match_the_others() -> None:
    assert run_precision([OLD], "p.jsonl", "bf16") == "bf16"
    assert run_precision([FP16], "p.jsonl", "fp16") == "fp16"
    with pytest.raises(UserError, match=r"p\.jsonl holds programs in precision fp16, not bf16"):
        run_precision([FP16], "p.jsonl", "bf16")


def test_programs_of_two_modes_are_refused() -> None:
    with pytest.raises(UserError, match=r"several precisions \(fp16, fp32;"):
        run_precision([OLD, FP16], "p.jsonl")
    with pytest.raises(UserError, match=r"p\.jsonl: unknown precision 'fp8'"):
        run_precision([{**OLD, "precision": "fp8"}], "p.jsonl")


def test_an_output_of_another_mode_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "pairs.jsonl"
    require_precision(out, "fp16")  # no file yet
    out.write_text('{"id": "a"}\n{"id": "b", "precision": "fp16"}\n{"id": "c", "prec')
    assert stored_precisions(out) == {"fp32", "fp16"}  # the torn last line is skipped
    assert stored_precisions(out, unstated=None) == {"fp16"}
    require_precision(out, "fp16", unstated=None)
    with pytest.raises(UserError, match=r"pairs\.jsonl holds pairs in precision fp32, not fp16"):
        require_precision(out, "fp16", "pairs")

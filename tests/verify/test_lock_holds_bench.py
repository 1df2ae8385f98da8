"""benchmarks/lock_holds.py: a lock log summed by mode and site; bad input exits 2."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable
from types import ModuleType

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tool(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("lock_holds.py")


def _record(mode: str, site: str, held: float, wait: float, t: float = 100.0) -> dict:
    return {"t": t, "pid": 1, "mode": mode, "held_s": held, "wait_s": wait, "site": site}


def test_holds_are_summed_by_mode_and_site_to_the_given_depth(tool) -> None:
    records = [
        _record("shared", "a.py:f:1 < b.py:g:2 < c.py:h:3", 2.0, 1.0),
        _record("shared", "a.py:f:1 < b.py:g:2 < d.py:k:4", 3.0, 0.5),
        _record("exclusive", "a.py:f:1 < b.py:g:2", 1.0, 4.0),
    ]
    rows = tool.summarize(records, depth=2)
    assert rows[0] == ("shared", "a.py:f:1 < b.py:g:2", 2, 5.0, 3.0, 1.5)
    assert rows[1] == ("exclusive", "a.py:f:1 < b.py:g:2", 1, 1.0, 1.0, 4.0)
    assert len(tool.summarize(records, depth=3)) == 3


def test_the_table_and_bad_input(tool, tmp_path, capsys) -> None:
    log = tmp_path / "holds.jsonl"
    log.write_text("\n".join(json.dumps(_record("shared", "x.py:f:1", 1.0, 0.0, t))
                             for t in (10.0, 20.0)) + "\n")  # fmt: skip
    assert tool.main([str(log)]) == 0
    out = capsys.readouterr().out
    assert "2 holds over 11 s, 1 processes" in out and "| shared | x.py:f:1 | 2 | 2.0 |" in out
    assert tool.main([str(tmp_path / "missing.jsonl")]) == 2
    (tmp_path / "empty.jsonl").write_text("")
    assert tool.main([str(tmp_path / "empty.jsonl")]) == 2
    assert "holds no records" in capsys.readouterr().err


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: pathlib.Path) -> None:
    import subprocess
    import sys

    log = tmp_path / "holds.jsonl"
    rows = [_record("shared", f"a.py:f:{i}", 1.0, 0.5) for i in range(5000)]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    script = ROOT / "benchmarks" / "lock_holds.py"
    pipe = f"{sys.executable} {script} {log} | head -1"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", pipe], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.stdout.startswith("5000 holds") and "Traceback" not in done.stderr
    assert done.returncode == 141

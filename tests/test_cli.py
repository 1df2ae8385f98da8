"""The command line: exit codes, JSON shape, no tracebacks for user mistakes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "programs" / "conv_relu_add.py"


def drtriton(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "drtriton", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
    )


def test_ops_json_lists_the_catalog() -> None:
    result = drtriton("ops", "--json")
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)
    assert len(entries) >= 61
    for entry in entries:
        assert {"name", "kind", "arity", "torch"} <= entry.keys()
        assert entry["kind"] in ("compute", "create")
        assert entry["torch"].startswith("torch.")
    torch_names = {e["torch"] for e in entries}
    assert "torch.nn.functional.conv2d" in torch_names
    assert any(e["kind"] == "create" for e in entries)


def test_ops_table_is_readable() -> None:
    result = drtriton("ops")
    assert result.returncode == 0
    assert "conv2d" in result.stdout and "operators" in result.stdout


def test_parse_prints_shapes() -> None:
    result = drtriton("parse", str(EXAMPLE))
    assert result.returncode == 0, result.stderr
    assert "(16, 8, 32, 32)" in result.stdout


def test_parse_reads_stdin_and_prints_canonical_text() -> None:
    result = drtriton("parse", "-", "--print", stdin=EXAMPLE.read_text())
    assert result.returncode == 0
    assert result.stdout == EXAMPLE.read_text()


def test_user_mistakes_exit_2_without_traceback() -> None:
    missing = drtriton("parse", "/nonexistent/program.py")
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr and "cannot read" in missing.stderr
    bad = drtriton("parse", "-", stdin="def fused_operator(x0):\n    return x1\n")
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr and "line" in bad.stderr


def test_no_command_prints_help() -> None:
    result = drtriton()
    assert result.returncode == 2
    assert "usage" in result.stdout

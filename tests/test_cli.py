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


def test_version_prints_the_package_version() -> None:
    from importlib import metadata

    import drtriton as package  # not `drtriton`: that is this file's runner

    try:
        expected = metadata.version("drtriton")
    except metadata.PackageNotFoundError:
        expected = package.__version__
    result = drtriton("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"drtriton {expected}"


def test_a_reader_that_closes_the_pipe_gets_no_traceback() -> None:
    # `drtriton ops --json | head -1`: the JSON (about 80 KB) outgrows the pipe's buffer, so
    # the command is still writing when the reader goes away.
    child = subprocess.Popen(
        [sys.executable, "-m", "drtriton", "ops", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stderr is not None
    assert child.stdout.readline().strip() == "["
    child.stdout.close()
    stderr = child.stderr.read()
    assert child.wait(timeout=120) == 141  # 128 + SIGPIPE, as `yes | head` reports
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr


# Runs the CLI as if drtriton._core were not built (absent) or did not load (broken).
WITHOUT_CORE = """
import importlib.abc, sys
mode = sys.argv.pop(1)
class NoCore(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "drtriton._core":
            return None
        if mode == "broken":
            raise ImportError("_core.so: undefined symbol: simulated", name=name)
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoCore())
from drtriton.cli import main
sys.exit(main())
"""


def without_core(mode: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_CORE, mode, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_without_the_core_help_lists_every_command() -> None:
    for mode in ("absent", "broken"):
        result = without_core(mode, "--help")
        assert result.returncode == 0, result.stderr
        for command in ("optimize", "ops", "synth", "verify", "verify-batch", "teach", "eval"):
            assert f"\n    {command}" in result.stdout, (command, result.stdout)


def test_without_the_core_a_command_that_needs_it_says_how_to_build_it() -> None:
    model = str(EXAMPLE.parents[1] / "models" / "linear_gelu_norm.py")
    for mode, args in (("absent", ["ops"]), ("broken", ["ops"]), ("absent", ["optimize", model])):
        result = without_core(mode, *args)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
        assert lines[0].startswith(f"drtriton {args[0]}: error: ")
        assert "drtriton._core" in lines[0] and "scripts/install.sh" in lines[0]

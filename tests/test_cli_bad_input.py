"""Every command refuses a user's mistake before any work: exit 2, one line on stderr, no
traceback, and nothing left at the output path (issue 22, items 4 and 5): outputs that cannot be
written, numbers out of range, devices that do not exist, inputs that are not there.

Most cases run in process (drtriton.cli.main, which returns argparse's exit code too); every
command that writes also runs as `python -m drtriton` to see exactly what a user sees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from drtriton.cli import main
from drtriton.files import removed_if_left_empty

PYTHON_DIR = Path(__file__).resolve().parents[1] / "python"
OUT = "{out}"  # where each command's output path goes

RELU = (
    "import torch\n\ndef fused_operator(x0):\n    t0 = torch.relu(x0)\n    return t0\n\n"
    "def get_inputs():\n    return [torch.randn(8, 8)]\n"
)

# Commands whose output is a file, and those whose output is a directory: the argv of a run
# that would start work, OUT marking the output path under test.
FILE_OUT = {
    "optimize --out": ["optimize", "{model}", "--out", OUT],
    "optimize --report": ["optimize", "{model}", "--report", OUT],
    "synth": ["synth", "--n", "3", "--preset", "tiny", "--no-progress", "--out", OUT],
    "verify-batch": ["verify-batch", "{pairs}", "--quiet", "--out", OUT],
    "teach": ["teach", "{programs}", "--no-progress", "--out", OUT],
    "sft-data": ["sft-data", "--per-op", "1", "--preset", "tiny", "--out", OUT],
    "sft --metrics": [
        "sft",
        "--model",
        "{ckpt}",
        "--data",
        "{pairs}",
        "--out",
        "{tmp}/sft",
        "--metrics",
        OUT,
    ],
    "rl --metrics": [
        "rl",
        "--model",
        "{ckpt}",
        "--programs",
        "{programs}",
        "--out",
        "{tmp}/rl",
        "--metrics",
        OUT,
    ],
}
RECIPE = [
    "train-recipe",
    "--pairs",
    "{pairs}",
    "--programs",
    "{programs}",
    "--heldout",
    "{programs}",
]
DIR_OUT = {
    "tiny-model": ["tiny-model", "{programs}", "--out", OUT],
    "sft": ["sft", "--model", "{ckpt}", "--data", "{pairs}", "--out", OUT],
    "rl": ["rl", "--model", "{ckpt}", "--programs", "{programs}", "--out", OUT],
    "train-recipe": [*RECIPE, "--out", OUT],
    "train-recipe --work": [*RECIPE, "--out", "{tmp}/recipe", "--work", OUT],
    "eval kernelbench": ["eval", "kernelbench", "{problems}", "--out", OUT],
    "eval synthetic": ["eval", "synthetic", "{programs}", "--out", OUT],
}
COMMANDS = {**FILE_OUT, **DIR_OUT}

# (command, bad flags): numbers out of range, devices that do not exist, words for numbers.
BAD_VALUES = [
    ("teach", ["--device", "tpu"]),
    ("sft-data", ["--device", "tpu"]),
    ("rl", ["--verify-device", "tpu"]),
    ("train-recipe", ["--device", "tpu"]),
    ("optimize --out", ["--device", "tpu"]),
    ("verify-batch", ["--device", "cuda:x"]),
    ("eval synthetic", ["--device", "tpu"]),
    ("eval kernelbench", ["--device", "gpu"]),
    ("rl", ["--steps", "-1"]),
    ("rl", ["--eval-every", "0"]),
    ("rl", ["--top-p", "1.5"]),
    ("sft", ["--batch-size", "0"]),
    ("sft", ["--log-every", "0"]),
    ("sft", ["--lr", "-0.5"]),
    ("tiny-model", ["--vocab-size", "-5"]),
    ("tiny-model", ["--layers", "0"]),
    ("optimize --out", ["--time-budget", "-5"]),
    ("optimize --out", ["--max-ops", "0"]),
    ("optimize --out", ["--k", "-1"]),
    ("eval kernelbench", ["--time-budget", "-5"]),
    ("eval kernelbench", ["--memory-share", "1.5"]),
    ("eval kernelbench", ["--limit", "0"]),
    ("verify-batch", ["--workers", "-3"]),
    ("teach", ["--workers", "-3"]),
    ("eval synthetic", ["--workers", "-3"]),
    ("sft-data", ["--workers", "-3"]),
    ("verify-batch", ["--timeout", "0"]),
    ("teach", ["--timeout", "0"]),
    ("eval synthetic", ["--timeout", "0"]),
    ("sft-data", ["--timeout", "-1"]),
    ("verify-batch", ["--trials", "0"]),
    ("verify-batch", ["--atol", "-1"]),
    ("synth", ["--n", "-5"]),
    ("synth", ["--n", "many"]),
    ("synth", ["--threads", "0"]),
    ("teach", ["--variants", "0"]),
    ("sft-data", ["--per-op", "0"]),
    ("train-recipe", ["--minutes", "-1"]),
    ("train-recipe", ["--sft-share", "2"]),
    # Words that accelerate, transformers or the loop would refuse only after the model loads.
    ("sft", ["--mixed-precision", "fp8"]),
    ("sft", ["--dtype", "float99"]),
    ("rl", ["--mixed-precision", "int8"]),
    ("rl", ["--loss", "ppo"]),
    ("train-recipe", ["--rl-loss", "ppo"]),
    ("eval synthetic", ["--policy", "gpt"]),
    # Precision modes (issue 21): every command that verifies takes --precision.
    ("optimize --out", ["--precision", "fp8"]),
    ("verify-batch", ["--precision", "float32"]),
    ("teach", ["--precision", "bf8"]),
    ("eval kernelbench", ["--precision", "half"]),
    ("eval synthetic", ["--precision", "FP16"]),
]


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, str]:
    """Valid inputs, so that the only fault in a command line is the one under test."""
    record = {"id": "relu", "level": 1, "ops": ["relu"], "source": RELU}
    programs = tmp_path / "programs.jsonl"
    programs.write_text(json.dumps(record) + "\n")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({**record, "completion": "x = 1\n"}) + "\n")
    problems = tmp_path / "problems.jsonl"
    problems.write_text(json.dumps({"level": 1, "problem_id": 1, "name": "relu", "code": ""}))
    model = tmp_path / "model.py"
    model.write_text("x = 1\n")
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "config.json").write_text("{}")
    paths = {"programs": programs, "pairs": pairs, "problems": problems, "model": model}
    return {**{k: str(v) for k, v in paths.items()}, "ckpt": str(ckpt), "tmp": str(tmp_path)}


def argv_for(command: str, inputs: dict[str, str], out: Path, extra: tuple[str, ...] = ()):
    return [a.format(out=out, **inputs) for a in COMMANDS[command]] + list(extra)


def assert_one_line_usage_error(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].strip(), err
    assert lines[0].startswith("drtriton ") and ": error: " in lines[0], err
    for word in words:
        assert word in lines[0], err


def run_in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


def out_flag(command: str) -> str:
    argv = COMMANDS[command]
    return argv[argv.index(OUT) - 1]


@pytest.fixture
def blocked_parent(tmp_path: Path):
    """A directory this user cannot create files in: mode 0o500, or, where that does not stop
    the user (root), a regular file, under which nobody can create anything."""
    parent = tmp_path / "read-only"
    parent.mkdir()
    parent.chmod(0o500)
    if os.access(parent, os.W_OK):
        parent.chmod(0o700)
        parent = tmp_path / "a-file"
        parent.write_text("")
    yield parent
    if parent.is_dir():
        parent.chmod(0o700)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_unwritable_output_is_refused_before_the_work(command, inputs, blocked_parent, capsys):
    out = blocked_parent / "sub" / "out"
    code, err = run_in_process(argv_for(command, inputs, out), capsys)
    assert_one_line_usage_error(code, err, out_flag(command))
    assert not out.exists() and not out.parent.exists()


@pytest.mark.parametrize("command", list(FILE_OUT))
def test_a_directory_as_output_file_is_refused(command, inputs, tmp_path, capsys):
    out = tmp_path / "a-directory"
    out.mkdir()
    code, err = run_in_process(argv_for(command, inputs, out), capsys)
    assert_one_line_usage_error(code, err, out_flag(command), "is a directory")
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("command", list(DIR_OUT))
def test_a_file_as_output_directory_is_refused(command, inputs, tmp_path, capsys):
    out = tmp_path / "a-file.txt"
    out.write_text("kept\n")
    code, err = run_in_process(argv_for(command, inputs, out), capsys)
    assert_one_line_usage_error(code, err, out_flag(command), "not a directory")
    assert out.read_text() == "kept\n"


@pytest.mark.parametrize(("command", "flags"), BAD_VALUES, ids=lambda v: " ".join(v))
def test_bad_values_are_refused_before_the_work(command, flags, inputs, tmp_path, capsys):
    out = tmp_path / "out"
    code, err = run_in_process(argv_for(command, inputs, out, tuple(flags)), capsys)
    assert_one_line_usage_error(code, err, f"argument {flags[0]}", repr(flags[1]))
    assert not out.exists()


@pytest.mark.parametrize(
    ("command", "flags", "where"),
    [
        ("teach", ["--device", "tpu"], "out"),
        ("rl", ["--steps", "-1"], "out"),
        ("synth", [], "dir"),
        ("optimize --out", [], "under a file"),
        ("verify-batch", ["--precision", "fp8"], "out"),
    ],
)
def test_what_a_user_sees(command, flags, where, inputs, tmp_path):
    """The real process: exit status and stderr exactly as a terminal shows them."""
    out = tmp_path / "out"
    if where == "dir":
        out.mkdir()
    elif where == "under a file":
        (tmp_path / "f").write_text("")
        out = tmp_path / "f" / "out.py"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    result = subprocess.run([sys.executable, "-m", "drtriton", *argv_for(command, inputs, out, tuple(flags))],
                            capture_output=True, text=True, timeout=120, env=env)  # fmt: skip
    assert_one_line_usage_error(result.returncode, result.stderr)
    assert result.stdout == ""
    assert where == "dir" or not out.exists()


def test_a_run_failing_on_user_input_leaves_no_output_file(tmp_path, capsys):
    """sft-data opens its output, then finds --source api without --api-model."""
    out = tmp_path / "pairs.jsonl"
    argv = ["sft-data", "--out", str(out), "--per-op", "1", "--ops", "relu", "--preset",
            "tiny", "--source", "api"]  # fmt: skip
    code, err = run_in_process(argv, capsys)
    assert_one_line_usage_error(code, err, "--api-model")
    assert not out.exists()


def test_teach_on_an_invisible_gpu_is_a_usage_error(inputs, tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is visible")
    out = tmp_path / "taught.jsonl"
    argv = ["teach", inputs["programs"], "--out", str(out), "--verify", "--device", "cuda"]
    code, err = run_in_process(argv, capsys)
    assert_one_line_usage_error(code, err, "no CUDA device")
    assert not out.exists()


def test_removed_if_left_empty_keeps_what_is_worth_keeping(tmp_path):
    created = tmp_path / "new.jsonl"
    with pytest.raises(KeyError), removed_if_left_empty(created):
        created.touch()
        raise KeyError
    assert not created.exists()  # this run made it and wrote nothing: gone
    started = tmp_path / "started.jsonl"
    with pytest.raises(KeyError), removed_if_left_empty(started):
        started.write_text('{"id": 1}\n')
        raise KeyError
    assert started.exists()  # records to resume from
    existing = tmp_path / "existing.jsonl"
    existing.touch()
    with pytest.raises(KeyError), removed_if_left_empty(existing):
        raise KeyError
    assert existing.exists()  # not this run's to remove
    with removed_if_left_empty(created):
        created.touch()
    assert created.exists()  # a good run's empty file stays


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_a_directory_no_one_can_create_files_in_is_refused_even_for_root() -> None:
    # Root passes every permission check, yet /proc takes no new files: the check probes.
    import argparse

    from drtriton.cli_checks import output_file

    with pytest.raises(argparse.ArgumentTypeError, match="not writable"):
        output_file("/proc/drtriton-out.jsonl")
    assert not [p for p in os.listdir("/proc") if p.startswith(".drtriton-probe-")]


def _user_env() -> dict[str, str]:
    paths = [str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_as_a_user_runs_it(command, inputs, tmp_path):
    """`python -m drtriton CMD` for every command that writes, its output under a regular
    file: exit 2, one line on stderr, nothing on stdout, nothing created."""
    (tmp_path / "f").write_text("")
    out = tmp_path / "f" / "out"
    argv = argv_for(command, inputs, out)
    result = subprocess.run([sys.executable, "-m", "drtriton", *argv], capture_output=True,
                            text=True, timeout=120, env=_user_env())  # fmt: skip
    assert_one_line_usage_error(result.returncode, result.stderr, out_flag(command))
    assert result.stdout == ""
    assert (tmp_path / "f").read_text() == ""


# (argv, words of the one line): inputs that are not there or are not what the command reads.
# Each is found before a model loads or a candidate runs.
MISSING = "{tmp}/missing.jsonl"
BAD_INPUTS = [
    (["sft", "--model", "{ckpt}", "--data", MISSING, "--out", "{tmp}/o"], ["--data", "no such file"]),
    (["sft", "--model", "{tmp}", "--data", "{pairs}", "--out", "{tmp}/o"], ["--model", "no config.json"]),
    (["sft", "--model", "{pairs}", "--data", "{pairs}", "--out", "{tmp}/o"], ["--model", "not a directory"]),
    (["sft", "--model", "{ckpt}", "--data", "{tmp}", "--out", "{tmp}/o"], ["--data", "is a directory"]),
    (["rl", "--model", "{ckpt}", "--programs", MISSING, "--out", "{tmp}/o"], ["--programs", "no such file"]),
    (["rl", "--model", "{ckpt}", "--programs", "{programs}", "--heldout", MISSING, "--out", "{tmp}/o"],
     ["--heldout", "no such file"]),
    (["rl", "--model", "{tmp}", "--programs", "{programs}", "--out", "{tmp}/o"], ["--model", "no config.json"]),
    (["verify", MISSING, "{model}"], ["cannot read task"]),
    (["verify", "{model}", MISSING], ["cannot read candidate"]),
    (["verify", "{model}", "{model}", "--timeout", "0"], ["--timeout"]),
    (["verify", "{model}", "{model}", "--device", "tpu"], ["--device"]),
    (["verify-batch", MISSING, "--out", "{tmp}/o"], ["cannot read pairs"]),
    (["optimize", MISSING], ["cannot read model"]),
    (["teach", MISSING, "--out", "{tmp}/o"], ["no such file"]),
    (["tiny-model", MISSING, "--out", "{tmp}/o"], ["no such file"]),
    (["eval", "synthetic", MISSING, "--out", "{tmp}/o"], ["no such file"]),
    (["eval", "kernelbench", MISSING, "--out", "{tmp}/o"], ["no such file"]),
    (["eval", "synthetic", "{programs}", "--policy", "hf:{tmp}", "--out", "{tmp}/o"],
     ["--policy", "no config.json"]),
    (["train-recipe", "--pairs", "{programs}", "--programs", "{programs}", "--heldout",
      "{programs}", "--out", "{tmp}/o"], ["no verified pairs"]),
    (["eval", "summarize", "{tmp}/o"], ["not a directory"]),
    (["eval", "summarize", "{pairs}"], ["not a directory"]),
    (["synth", "--n", "3", "--preset", "tiny", "--seed", "-1", "--out", "{tmp}/o"], ["seed"]),
    (["synth", "--n", "3", "--preset", "tiny", "--dim-min", "-5", "--out", "{tmp}/o"], ["dim_min"]),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "words"), BAD_INPUTS, ids=lambda v: " ".join(v)[:60])
def test_inputs_that_are_not_there_are_refused_before_the_work(argv, words, inputs, tmp_path,
                                                               capsys):  # fmt: skip
    before = sorted(tmp_path.iterdir())
    code, err = run_in_process([a.format(**inputs) for a in argv], capsys)
    assert_one_line_usage_error(code, err, *words)
    assert sorted(tmp_path.iterdir()) == before  # no output file or directory


def test_a_directory_that_is_not_a_whole_checkpoint_is_a_usage_error(inputs, tmp_path, capsys):
    """config.json alone (no tokenizer, no weights): transformers' own error, in one line."""
    pytest.importorskip("transformers")
    out = tmp_path / "sft"
    argv = ["sft", "--model", inputs["ckpt"], "--data", inputs["pairs"], "--out", str(out)]
    code, err = run_in_process(argv, capsys)
    assert_one_line_usage_error(code, err, "cannot be loaded")
    assert not out.exists()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_summarize_refuses_a_directory_it_cannot_write(capsys):
    code, err = run_in_process(["eval", "summarize", "/proc/self"], capsys)
    assert_one_line_usage_error(code, err, "not writable")


def _options(parser, name: str = "drtriton"):
    """(command, option) for every option of every command, sub-commands included."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, subparser in action.choices.items():
                yield from _options(subparser, f"{name} {sub}")
        elif action.option_strings:
            yield name, action


def test_every_number_option_of_every_command_says_its_range():
    """A new int or float option without a range check would accept -1 or 0 again (issue 22
    item 5: `rl --steps -1` was a traceback, `--workers -3` accepted). Seeds take any integer
    (torch and the synthesizer check their own range); synth's bounds are checked together
    by the synthesizer (tests/synth: impossible bounds are a clean error)."""
    from drtriton.cli import build_parser

    unchecked = [f"{command} {action.option_strings[-1]}"
                 for command, action in _options(build_parser())
                 if action.type in (int, float) and action.dest != "seed"
                 and not action.dest.startswith("bound_")]  # fmt: skip
    assert unchecked == []

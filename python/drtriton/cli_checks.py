"""Checks of command-line values, made while the arguments are parsed: before any work.

Every validator is an argparse `type=`: a bad value ends the command with exit 2 and one line,
`drtriton CMD: error: argument --flag: ...` (`Parser` prints no usage block), and nothing has
been read, computed or written yet. `output_file` and `output_dir` refuse a path the command
could not write, which would otherwise surface only after the whole run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from drtriton.errors import UserError


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr, exit 2.

    Subparsers inherit the class (argparse builds them with the parent's type), so one parser
    at the top makes every command's errors look alike: the shape `drtriton CMD: error: ...`
    that the CLI prints for a UserError too.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _checked(kind: Callable[[str], float], text: str, ok: Callable[[float], bool],
             what: str) -> float:  # fmt: skip
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, not {text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"must be {what}, not {text!r}")
    return value


def positive_int(text: str) -> int:
    return int(_checked(int, text, lambda v: v >= 1, "an integer >= 1"))


def non_negative_int(text: str) -> int:
    return int(_checked(int, text, lambda v: v >= 0, "an integer >= 0"))


def positive_float(text: str) -> float:
    return _checked(float, text, lambda v: v > 0, "a number > 0")  # NaN fails too


def non_negative_float(text: str) -> float:
    return _checked(float, text, lambda v: v >= 0, "a number >= 0")


def unit_interval(text: str) -> float:
    return _checked(float, text, lambda v: 0 <= v <= 1, "a number in [0, 1]")


# The range each validator admits, for help texts that say it (train/args.py appends them).
RANGES: dict[Callable[[str], object], str] = {
    positive_int: ">= 1",
    non_negative_int: ">= 0",
    positive_float: "> 0",
    non_negative_float: ">= 0",
    unit_interval: "0..1",
}

_DEVICE = re.compile(r"cpu|cuda(:\d+)?")


def device(text: str) -> str:
    """cpu, cuda or cuda:N. Whether a GPU is visible is the command's check: it needs torch,
    which parsing should not import."""
    if not _DEVICE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be cpu, cuda or cuda:N, not {text!r}")
    return text


def precision(text: str) -> str:
    """A precision mode of the verifier (drtriton/verify/precision.py: fp32, tf32, bf16, fp16)."""
    from drtriton.verify.precision import MODES

    if text not in MODES:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(MODES)}, not {text!r}")
    return text


PRECISION_HELP = (
    "precision mode: fp32 (strict, default; atol = rtol = 1e-4), tf32 (float32 tensors, TF32 "
    "allowed), bf16 or fp16 (inputs, parameters and buffers cast); 1e-2 for the last three. "
    "Eager and torch.compile run in the same mode"
)


def add_precision(p: argparse.ArgumentParser, *, from_records: bool = False) -> None:
    """--precision, as every command that verifies takes it. `from_records`: the command reads
    program records, which say their own mode (DESIGN.md "Datasets"), so the default is theirs
    and an explicit mode must agree with them (drtriton/jsonl.py, run_precision)."""
    if not from_records:
        p.add_argument("--precision", type=precision, default="fp32", help=PRECISION_HELP)
        return
    p.add_argument("--precision", type=precision, default=None,
                   help=PRECISION_HELP.replace("fp32 (strict, default;", "fp32 (strict;") +
                   ". Default: the records' own `precision` field (fp32 where they have none); "
                   "given, it is the mode of records without the field and must match the "
                   "others")  # fmt: skip


def level_list(text: str) -> str:
    """Synthesis levels as `drtriton.synth.parse_levels` reads them (1-3, 2,3 or 4), kept as
    text (the train configs' type); an empty list, a level outside [1, 64] or a word fails."""
    from drtriton.synth import parse_levels

    try:
        parse_levels(text)
    except UserError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def device_or_auto(text: str) -> str:
    """`device`, or auto (the GPU when one is visible)."""
    if text == "auto":
        return text
    if not _DEVICE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be auto, cpu, cuda or cuda:N, not {text!r}")
    return text


def require_visible(name: str) -> None:
    """A UserError when `name` (a checked --device) is a GPU that torch cannot see: called by
    the command before its work, as it imports torch."""
    if name.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise UserError(f"--device {name}: no CUDA device is visible")


def _writable_dir(path: Path) -> bool:
    """Whether a file can be created in `path`: permission bits, then a real probe (root passes
    every os.access check, yet cannot create files in /proc or on a read-only mount). The probe
    file is removed at once: the check leaves nothing behind."""
    if not os.access(path, os.W_OK | os.X_OK):  # X: entries can be created in it
        return False
    try:
        fd, probe = tempfile.mkstemp(dir=path, prefix=".drtriton-probe-")
    except OSError:
        return False
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return True


def _is_dir(path: Path) -> bool | None:
    """True for a directory, False for anything else, None when nothing is there; a path we may
    not even look at (a parent without search permission) is a usage error of its own."""
    try:
        return stat.S_ISDIR(path.stat().st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{str(path)!r}: {exc.strerror or exc}") from None


def _check_creatable(path: Path) -> None:
    """Nothing is at `path`: its nearest existing ancestor must be a directory we may write
    (the command creates the directories in between)."""
    parent = path.parent
    while (kind := _is_dir(parent)) is None and parent != parent.parent:
        parent = parent.parent
    if not kind:
        raise argparse.ArgumentTypeError(f"{str(path)!r}: {str(parent)!r} is not a directory")
    if not _writable_dir(parent):
        raise argparse.ArgumentTypeError(f"{str(path)!r}: directory {str(parent)!r} is not "
                                         "writable")  # fmt: skip


def output_file(text: str) -> Path:
    """A file the command will write or append to: not a directory, and writable (or
    creatable). Nothing is left behind (the directory probe removes its file at once)."""
    if not text:
        raise argparse.ArgumentTypeError("expected a file path, not ''")
    path = Path(text)
    kind = _is_dir(path)
    if kind is None:
        _check_creatable(path)
    elif kind:
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, not a file")
    elif not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text!r} is not writable")
    elif not _writable_dir(path.parent):  # atomic writes replace the file from beside it
        raise argparse.ArgumentTypeError(f"{text!r}: directory {str(path.parent)!r} is not "
                                         "writable")  # fmt: skip
    return path


def output_dir(text: str) -> Path:
    """A directory the command will write into: an existing writable directory, or a path
    that can be created."""
    if not text:
        raise argparse.ArgumentTypeError("expected a directory path, not ''")
    path = Path(text)
    kind = _is_dir(path)
    if kind is None:
        _check_creatable(path)
    elif not kind:
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a directory")
    elif not _writable_dir(path):
        raise argparse.ArgumentTypeError(f"directory {text!r} is not writable")
    return path


def input_file(text: str) -> Path:
    """A file the command reads: it exists, is a regular file and is readable (sft found a
    missing --data only after loading its model)."""
    path = Path(text)
    kind = _is_dir(path)
    if kind is None:
        raise argparse.ArgumentTypeError(f"{text!r}: no such file")
    if kind:
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, not a file")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"{text!r} is not readable")
    return path


def checkpoint_dir(text: str) -> Path:
    """A local model checkpoint (Hugging Face layout): a directory holding config.json."""
    path = Path(text)
    if not _is_dir(path):
        raise argparse.ArgumentTypeError(f"{text!r}: not a model checkpoint (not a directory)")
    if not (path / "config.json").is_file():
        raise argparse.ArgumentTypeError(f"{text!r}: not a model checkpoint (no config.json)")
    return path


def one_of(*words: str) -> Callable[[str], str]:
    """A word from a fixed list (a config field typed str, as train/args.py makes them)."""

    def word(text: str) -> str:
        if text not in words:
            raise argparse.ArgumentTypeError(f"must be one of {', '.join(words)}, not {text!r}")
        return text

    word.__name__ = "one_of"
    return word


def policy_spec(text: str) -> str:
    """`template` or `hf:PATH`, PATH a checkpoint directory."""
    if text == "template":
        return text
    if not text.startswith("hf:") or len(text) == 3:
        raise argparse.ArgumentTypeError(f"must be template or hf:PATH, not {text!r}")
    checkpoint_dir(text[3:])
    return text


def as_str(check: Callable[[str], Path], *, empty_ok: bool = False) -> Callable[[str], str]:
    """`check` for a path option kept as a str, as the train configs' fields are; with
    `empty_ok`, '' (their "unset" default) passes unchecked."""

    def checked(text: str) -> str:
        if text or not empty_ok:
            check(text)
        return text

    checked.__name__ = check.__name__
    return checked


def set_types(parser: argparse.ArgumentParser, checks: Mapping[str, Callable[[str], Any]]) -> None:
    """Gives the options of `parser` named by dest their check, for parsers built from
    dataclass configs (train/args.py), and says each range in the help text."""
    actions = {a.dest: a for a in parser._actions}
    for dest, check in checks.items():
        action = actions[dest]  # a KeyError here: a config field was renamed, follow it
        action.type = check
        limit = RANGES.get(check)
        if limit and action.help is not None:
            if " (default: " in action.help:
                action.help = action.help.replace(" (default: ", f" ({limit}; default: ", 1)
            else:
                action.help += f" ({limit})"

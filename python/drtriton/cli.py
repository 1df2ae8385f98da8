"""The `drtriton` command line.

Each command lives beside the code it drives and registers itself through a
`register(subparsers)` function; this module only assembles them and turns user
errors into a message and exit code 2 (exit 1 is reserved for "ran, and the answer is no",
e.g. a rejected kernel).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from drtriton import cli_support
from drtriton.cli_checks import Parser
from drtriton.errors import ResourceError, SandboxError, UserError

# Modules that add subcommands, in the order `--help` lists them.
COMMAND_MODULES = (
    "drtriton.optimize.cli",
    "drtriton.catalog_cli",
    "drtriton.synth.cli",
    "drtriton.verify.cli",
    "drtriton.teach.cli",
    "drtriton.train.cli",
    "drtriton.evaluate.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(  # its usage errors, and every subcommand's, are one line
        prog="drtriton",
        description="Turn PyTorch programs into fast, verified Triton kernels.",
    )
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {cli_support.package_version()}")  # fmt: skip
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Without the C++ core every command is still listed (the command modules do not load it
    # at import); a command that uses it says how to build it (cli_support's stand-in).
    core_reason = cli_support.core_failure()
    if core_reason is not None:
        cli_support.install_core_stub(core_reason)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            # A command whose package is not part of this build is skipped; a failing import
            # inside an existing module is a bug and is raised.
            if exc.name is None or not name.startswith(exc.name):
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2, printed): an exit code here too
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except BrokenPipeError:  # `drtriton ops --json | head`: the reader had what it wanted
        return cli_support.quiet_broken_pipe()
    except (UserError, SandboxError) as exc:  # SandboxError: the machine's setup, not an item's
        print(f"drtriton {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except ResourceError as exc:  # nothing was judged: neither accepted (0) nor rejected (1)
        print(f"drtriton {args.command}: not judged: {exc} (retry with fewer processes on the "
              "GPU)", file=sys.stderr)  # fmt: skip
        return 2
    except KeyboardInterrupt:
        print(f"drtriton {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

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

from drtriton.errors import ResourceError, UserError

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
    parser = argparse.ArgumentParser(
        prog="drtriton",
        description="Turn PyTorch programs into fast, verified Triton kernels.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
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
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
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

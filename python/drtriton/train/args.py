"""Typed dataclass configs <-> argparse: each field becomes `--field-name` with its help text.

A nested dataclass field `lora: LoRAConfig` becomes `--lora-r`, `--lora-alpha`, ...; its
`enabled` field becomes the bare flag `--lora`. Booleans are flags (`--resume`) whose default is
False, or `--no-<name>` switches when the default is True.
"""

from __future__ import annotations

import argparse
import dataclasses
import typing
from typing import Any


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def add_arguments(parser: argparse.ArgumentParser, cls: type, prefix: str = "",
                  positional: tuple[str, ...] = ()) -> None:  # fmt: skip
    hints = _hints(cls)
    for f in dataclasses.fields(cls):
        kind = hints[f.name]
        name = f"{prefix}{f.name}"
        helptext = f.metadata.get("help", "")
        if dataclasses.is_dataclass(kind):
            add_arguments(parser, kind, prefix=f"{name}_")
            continue
        flag = "--" + (prefix[:-1] if f.name == "enabled" and prefix else name).replace("_", "-")
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        default = None if required else (f.default if f.default is not dataclasses.MISSING
                                         else f.default_factory())  # fmt: skip
        if name in positional:
            parser.add_argument(name, type=kind, help=helptext)
        elif kind is bool:
            if default:
                no = "--no-" + flag[2:]
                parser.add_argument(no, dest=name, action="store_false", help=f"not: {helptext}")
            else:
                parser.add_argument(flag, dest=name, action="store_true", help=helptext)
        else:
            suffix = "" if required else f" (default: {default})"
            parser.add_argument(flag, dest=name, type=kind, default=default, required=required,
                                help=helptext + suffix)  # fmt: skip


def from_namespace(cls: type, args: argparse.Namespace, prefix: str = "") -> Any:
    hints = _hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        kind = hints[f.name]
        name = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(kind):
            values[f.name] = from_namespace(kind, args, prefix=f"{name}_")
        else:
            values[f.name] = getattr(args, name)
    return cls(**values)

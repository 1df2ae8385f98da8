"""`drtriton ops` and `drtriton parse`: look at the catalog and at programs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from drtriton.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "ops",
        help="list the operator catalog",
        description="Print the operator catalog: every operator the synthesizer, the code "
        "generator and the frontend know, with its PyTorch spelling, arity, shape rule and traits.",
    )
    p.add_argument("--json", action="store_true", help="one JSON array of full entries")
    p.add_argument("--kind", choices=["compute", "create"], help="only operators of this kind")
    p.set_defaults(func=run_ops)

    p = subparsers.add_parser(
        "parse",
        help="check a functional program and print its shapes, FLOPs and bytes",
        description="Parse a functional task (DESIGN.md format: fused_operator + get_inputs), "
        "infer every shape and report FLOPs and bytes. Exits 2 with the offending line on error.",
    )
    p.add_argument("program", help="path to the program file, or - for standard input")
    p.add_argument("--json", action="store_true", help="print the parsed program as JSON")
    p.add_argument("--print", action="store_true", help="print the canonical program text")
    p.set_defaults(func=run_parse)


def run_ops(args: argparse.Namespace) -> int:
    from drtriton.catalog import ops

    entries = ops(args.kind)
    if args.json:
        json.dump(entries, sys.stdout, indent=1)
        print()
        return 0
    print(f"{'name':<22} {'kind':<8} {'arity':<5} {'rule':<15} {'torch':<45} traits")
    for op in entries:
        arity = str(op["arity"]) + ("+" if op["max_arity"] > op["arity"] else "")
        print(
            f"{op['name']:<22} {op['kind']:<8} {arity:<5} {op['rule']:<15} "
            f"{op['torch']:<45} {','.join(op['traits'])}"
        )
    print(f"{len(entries)} operators")
    return 0


def _read_program(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None


def _summary(program: Any) -> str:
    lines = [f"level {program.level}: {' '.join(program.ops)}"]
    for name in program.inputs:
        lines.append(f"  input  {name:<8} {tuple(program.shapes[name])}")
    for node in program.nodes:
        name = node["result"]
        lines.append(f"  {node['op']:<14} {name:<8} {tuple(program.shapes[name])}")
    lines.append(f"  returns {', '.join(program.outputs)}")
    lines.append(
        f"flops {program.flops:.4g}  bytes {program.bytes:.4g}  "
        f"unfused bytes {program.unfused_bytes:.4g}"
    )
    return "\n".join(lines)


def run_parse(args: argparse.Namespace) -> int:
    from drtriton.program import parse

    program = parse(_read_program(args.program))
    if args.json:
        fields = {k: v for k, v in vars(program).items() if k != "canonical_key"}
        print(json.dumps(fields, indent=1))
    elif args.print:
        print(program.source, end="")
    else:
        print(_summary(program))
    return 0

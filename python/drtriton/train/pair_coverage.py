"""Operator coverage of a pairs file: per level, how many kept pairs contain each operator.

`drtriton sft-data` writes it beside its output (OUT's stem + ".coverage.json") and prints it
as a table, so that an operator the data never shows a model is visible before training: every
compute operator of the catalog is listed, with 0 where no pair holds it (the synthesizer
never draws 17 of the 77: comparisons, logical_not, where, tril/triu, reshape and other shape
operators). A pair counts once per operator, however often its chain repeats it. The file is
counted whole (an appended run adds to the earlier runs' pairs), incorrect pairs left out.

    {"pairs_file": "pairs.jsonl",
     "levels": {"2": {"pairs": 40, "covered": 31, "operators": {"abs": 2, "add": 0, ...}}}}
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from drtriton.files import write_text_atomic


def coverage_path(out: str | Path) -> Path:
    """Where the coverage of pairs file `out` goes: `data/pairs.jsonl` -> `data/pairs.coverage.json`."""
    out = Path(out)
    return out.with_name(out.stem + ".coverage.json")


def catalog_operators() -> list[str]:
    """Every compute operator of the catalog (creation operators such as randn make inputs,
    never a pair's subject)."""
    from drtriton.catalog import ops

    return sorted(op["name"] for op in ops("compute"))


def count(records: Iterable[dict[str, Any]], levels: Iterable[int],
          operators: Iterable[str]) -> dict[str, Any]:  # fmt: skip
    """Coverage of the correct records among `records`: every level of `levels` and of the
    records, every operator of `operators` and of the records, zeros included."""
    pairs: Counter = Counter()
    per_level: dict[int, Counter] = {level: Counter() for level in levels}
    names = set(operators)
    for r in records:
        if not r.get("correct"):
            continue
        ops = set(r.get("ops") or ())
        level = int(r.get("level") or len(r.get("ops") or ()))
        pairs[level] += 1
        per_level.setdefault(level, Counter()).update(ops)
        names |= ops
    return {
        str(level): {
            "pairs": pairs[level],
            "covered": sum(1 for name in names if seen[name]),
            "operators": {name: seen[name] for name in sorted(names)},
        }
        for level, seen in sorted(per_level.items())
    }


def write(out: str | Path, levels: Iterable[int]) -> dict[str, Any]:
    """Counts the pairs file `out` and writes its coverage beside it (atomically); returns it."""
    from drtriton.jsonl import read_jsonl

    report = {
        "pairs_file": Path(out).name,
        "levels": count(read_jsonl(out, ("source",), "pair"), levels, catalog_operators()),
    }
    write_text_atomic(coverage_path(out), json.dumps(report, indent=1) + "\n")
    return report


def table(report: dict[str, Any]) -> str:
    """The coverage as text: one row per operator some pair holds (a column per level), then
    the operators no pair holds, on one line."""
    levels = report["levels"]
    names = next(iter(levels.values()))["operators"] if levels else {}
    width = max([len(n) for n in names] + [len("operators")])
    head = [f"{'level':<{width}}" + "".join(f"{lv:>8}" for lv in levels)]
    head.append(f"{'pairs':<{width}}" + "".join(f"{v['pairs']:>8}" for v in levels.values()))
    head.append(f"{'operators':<{width}}" + "".join(
        f"{v['covered']:>4}/{len(v['operators']):<3}" for v in levels.values()))  # fmt: skip
    rows, absent = [], []
    for name in names:
        counts = [v["operators"][name] for v in levels.values()]
        if any(counts):
            rows.append(f"{name:<{width}}" + "".join(f"{n:>8}" for n in counts))
        else:
            absent.append(name)
    tail = [f"no pair holds ({len(absent)}): {', '.join(absent)}"] if absent else []
    return "\n".join(head + rows + tail)

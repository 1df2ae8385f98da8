"""CSP-DAG program synthesis (paper §3): random PyTorch programs of a chosen difficulty.

The work happens in C++ (core/synth/: DAG sampling, a Gecode shape model, threads); this
package gives it a Python face::

    from drtriton.synth import synthesize
    records = synthesize(1000, levels=range(1, 6), preset="paper", seed=0, threads=2)

Each record is a dict with `id`, `level`, `ops`, `source` (the functional task text),
`flops`, `bytes`, `seed` (regenerates that program alone), `index` and `preset`.  The same
arguments give the same records whatever the thread count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from drtriton.errors import UserError

__all__ = [
    "PRESETS",
    "Synthesizer",
    "bound_names",
    "bounds",
    "parse_levels",
    "regenerate",
    "synthesize",
]

PRESETS = ("paper", "tiny")
MAX_LEVEL = 64


def _core() -> Any:
    from drtriton import _core

    if not _core.synth_available():
        raise UserError("this build of drtriton has no constraint solver (built without Gecode)")
    return _core


def bound_names() -> list[str]:
    """Names of the bounds that `synthesize(**overrides)` and `--BOUND` accept."""
    from drtriton import _core

    return list(_core.synth_bound_names())


def bounds(preset: str = "paper", **overrides: float) -> dict[str, float]:
    """The bounds a run would use; UserError when they are unknown or impossible."""
    from drtriton import _core

    try:
        return dict(_core.synth_bounds(preset, overrides))
    except ValueError as exc:
        raise UserError(str(exc)) from None


def parse_levels(text: str | int | Iterable[int]) -> list[int]:
    """'1-5' -> [1, 2, 3, 4, 5]; '1,3,10' -> [1, 3, 10]; 7 -> [7]."""
    if isinstance(text, int):
        levels = [text]
    elif isinstance(text, str):
        levels = []
        for part in text.replace(" ", "").split(","):
            lo, sep, hi = part.partition("-")
            try:
                if sep:
                    levels.extend(range(int(lo), int(hi) + 1))
                else:
                    levels.append(int(lo))
            except ValueError:
                raise UserError(f"bad level list {text!r} (expected e.g. 1-5 or 1,3,10)") from None
    else:
        levels = [int(v) for v in text]
    if not levels:
        raise UserError(f"no levels in {text!r}")
    for level in levels:
        if not 1 <= level <= MAX_LEVEL:
            raise UserError(f"level {level} outside [1, {MAX_LEVEL}]")
    return levels


def regenerate(record: dict[str, Any], **overrides: float) -> str:
    """The source of `record` recomputed from its level, seed and preset alone."""
    try:
        return str(
            _core().synth_sample(
                record["level"], record["seed"], record.get("preset", "paper"), overrides
            )
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None


class Synthesizer:
    """A resumable stream of distinct programs (index order, thread-count independent)."""

    def __init__(
        self,
        levels: str | int | Iterable[int] = "1-5",
        preset: str = "paper",
        seed: int = 0,
        threads: int = 1,
        **overrides: float,
    ) -> None:
        if preset not in PRESETS:
            raise UserError(f"unknown preset {preset!r} (known: {', '.join(PRESETS)})")
        if threads < 1:
            raise UserError("threads must be >= 1")
        if seed < 0 or seed >= 2**64:
            raise UserError("seed must be in [0, 2^64)")
        self.levels = parse_levels(levels)
        self.preset = preset
        self.seed = seed
        try:
            self._impl = _core().Synthesizer(self.levels, seed, threads, preset, overrides)
        except ValueError as exc:
            raise UserError(str(exc)) from None

    @property
    def bounds(self) -> dict[str, float]:
        return dict(self._impl.bounds)

    @property
    def next_index(self) -> int:
        return int(self._impl.next_index)

    def resume(self, records: Iterable[dict[str, Any]]) -> None:
        """Continue after `records` (an earlier prefix of this same run)."""
        records = list(records)
        if not records:
            return
        try:
            self._impl.mark_seen([r["source"] for r in records])
        except ValueError as exc:
            raise UserError(f"cannot resume: {exc}") from None
        self._impl.resume_at(max(int(r["index"]) for r in records) + 1)

    def next(self, count: int) -> list[dict[str, Any]]:
        """The next `count` distinct programs."""
        try:
            raw = self._impl.next(count)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        return [self._record(r) for r in raw]

    def stream(self, n: int, chunk: int = 256) -> Iterator[list[dict[str, Any]]]:
        """`n` programs in chunks (so that a progress bar can move)."""
        done = 0
        while done < n:
            batch = self.next(min(chunk, n - done))
            done += len(batch)
            yield batch

    def stats(self) -> dict[str, Any]:
        """Sampling statistics: per-operator tries, rejections by reason, emitted counts."""
        return dict(self._impl.stats())

    def _record(self, raw: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": f"synth-{self.preset}-{self.seed}-{raw['index']}",
            "level": raw["level"],
            "ops": list(raw["ops"]),
            "source": raw["source"],
            "flops": raw["flops"],
            "bytes": raw["bytes"],
            "seed": raw["seed"],
            "index": raw["index"],
            "preset": self.preset,
        }


def synthesize(
    n: int,
    levels: str | int | Iterable[int] = "1-5",
    preset: str = "paper",
    seed: int = 0,
    threads: int = 1,
    *,
    on_chunk: Callable[[list[dict[str, Any]]], None] | None = None,
    **overrides: float,
) -> list[dict[str, Any]]:
    """`n` distinct programs; `overrides` set bounds by name (see `bound_names()`)."""
    if n < 0:
        raise UserError("n must be >= 0")
    synth = Synthesizer(levels, preset, seed, threads, **overrides)
    records: list[dict[str, Any]] = []
    for batch in synth.stream(n, chunk=max(256, 64 * threads)):
        records.extend(batch)
        if on_chunk:
            on_chunk(batch)
    return records

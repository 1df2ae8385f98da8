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


# Multi-process runs: each worker samples blocks of consecutive indices; the parent merges
# them in index order, so the records equal a single-threaded run's.  Gecode serializes
# space allocation (every clone) behind one process-wide lock, so threads stop scaling
# past a few cores; processes do not share it.
BLOCK = 128
_WORKER: Any = None


def _worker_init(args: tuple[Any, ...]) -> None:
    global _WORKER
    levels, seed, preset, overrides = args
    _WORKER = _core().Synthesizer(levels, seed, 1, preset, overrides)


def _worker_block(first: int) -> tuple[list[dict[str, Any]] | None, dict[str, Any] | None, str]:
    try:
        records, stats = _WORKER.sample_block(first, BLOCK)
        return list(records), dict(stats), ""
    except ValueError as exc:
        return None, None, str(exc)


def _empty_stats(op_names: Iterable[str]) -> dict[str, Any]:
    return {
        "samples": 0,
        "kept": 0,
        "duplicates": 0,
        "dead_ends": 0,
        "solve_failures": 0,
        "check_failures": 0,
        "check_errors": {},
        "kept_per_level": {},
        "ops": {name: {"tried": 0, "emitted": 0, "rejected": {}} for name in op_names},
    }


def _merge_sample_stats(into: dict[str, Any], block: dict[str, Any]) -> None:
    for key in ("samples", "dead_ends", "solve_failures", "check_failures"):
        into[key] += block[key]
    for msg, n in block["check_errors"].items():
        into["check_errors"][msg] = into["check_errors"].get(msg, 0) + n
    for name, op in block["ops"].items():
        mine = into["ops"].setdefault(name, {"tried": 0, "emitted": 0, "rejected": {}})
        mine["tried"] += op["tried"]
        for why, n in op["rejected"].items():
            mine["rejected"][why] = mine["rejected"].get(why, 0) + n


class Synthesizer:
    """A resumable stream of distinct programs (index order; the same records whatever
    `threads` and `processes` are)."""

    MAX_DUPLICATE_RUN = 20_000

    def __init__(
        self,
        levels: str | int | Iterable[int] = "1-5",
        preset: str = "paper",
        seed: int = 0,
        threads: int = 1,
        processes: int = 1,
        **overrides: float,
    ) -> None:
        if preset not in PRESETS:
            raise UserError(f"unknown preset {preset!r} (known: {', '.join(PRESETS)})")
        if threads < 1 or processes < 1:
            raise UserError("threads and processes must be >= 1")
        if seed < 0 or seed >= 2**64:
            raise UserError("seed must be in [0, 2^64)")
        self.levels = parse_levels(levels)
        self.preset = preset
        self.seed = seed
        try:
            self._impl = _core().Synthesizer(self.levels, seed, threads, preset, overrides)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        self._processes = processes
        self._worker_args = (self.levels, seed, preset, dict(overrides))
        self._pool: Any = None
        self._seen: set[str] = set()
        self._buffer: list[dict[str, Any]] = []  # sampled, not yet consumed (processes)
        self._next_block = 0
        self._next_index = 0
        self._duplicate_run = 0
        self._stats: dict[str, Any] | None = None

    @property
    def bounds(self) -> dict[str, float]:
        return dict(self._impl.bounds)

    @property
    def next_index(self) -> int:
        if self._processes > 1:
            return self._next_index
        return int(self._impl.next_index)

    def resume(self, records: Iterable[dict[str, Any]]) -> None:
        """Continue after `records` (an earlier prefix of this same run)."""
        records = list(records)
        if not records:
            return
        start = max(int(r["index"]) for r in records) + 1
        if self._processes > 1:
            from drtriton.program import parse

            try:
                self._seen.update(parse(r["source"]).canonical_key for r in records)
            except UserError as exc:
                raise UserError(f"cannot resume: {exc}") from None
            self._next_index = self._next_block = start
            self._buffer = []
            return
        try:
            self._impl.mark_seen([r["source"] for r in records])
        except ValueError as exc:
            raise UserError(f"cannot resume: {exc}") from None
        self._impl.resume_at(start)

    def next(self, count: int) -> list[dict[str, Any]]:
        """The next `count` distinct programs."""
        if self._processes > 1:
            return [self._record(r) for r in self._next_parallel(count)]
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
        if self._processes > 1:
            return self._stats or _empty_stats(())
        return dict(self._impl.stats())

    def close(self) -> None:
        """Stops the worker processes (if any)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def __enter__(self) -> Synthesizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _next_parallel(self, count: int) -> list[dict[str, Any]]:
        import multiprocessing

        if self._pool is None:
            context = multiprocessing.get_context("fork")
            self._pool = context.Pool(self._processes, _worker_init, (self._worker_args,))
        if self._stats is None:
            self._stats = _empty_stats(dict(self._impl.stats())["ops"])
        out: list[dict[str, Any]] = []
        while len(out) < count:
            if not self._buffer:
                missing = count - len(out)
                blocks = max(self._processes, -(-(missing + missing // 16) // BLOCK))
                firsts = [self._next_block + k * BLOCK for k in range(blocks)]
                self._next_block += blocks * BLOCK
                for records, stats, error in self._pool.imap(_worker_block, firsts):
                    if error:
                        raise UserError(error)
                    _merge_sample_stats(self._stats, stats)
                    self._buffer.extend(records)
                self._buffer.reverse()  # pop() from the end in index order
            raw = self._buffer.pop()
            self._next_index = raw["index"] + 1
            if raw["key"] in self._seen:
                self._stats["duplicates"] += 1
                self._duplicate_run += 1
                if self._duplicate_run > self.MAX_DUPLICATE_RUN:
                    raise UserError(
                        f"only {len(self._seen)} distinct programs after "
                        f"{self._duplicate_run} duplicates in a row: these bounds and levels "
                        "admit few programs; widen the bounds, add levels or ask for fewer"
                    )
                continue
            self._duplicate_run = 0
            self._seen.add(raw["key"])
            self._stats["kept"] += 1
            levels = self._stats["kept_per_level"]
            levels[raw["level"]] = levels.get(raw["level"], 0) + 1
            for name in raw["ops"]:
                self._stats["ops"][name]["emitted"] += 1
            out.append(raw)
        return out

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
    processes: int = 1,
    *,
    on_chunk: Callable[[list[dict[str, Any]]], None] | None = None,
    **overrides: float,
) -> list[dict[str, Any]]:
    """`n` distinct programs; `overrides` set bounds by name (see `bound_names()`)."""
    if n < 0:
        raise UserError("n must be >= 0")
    records: list[dict[str, Any]] = []
    with Synthesizer(levels, preset, seed, threads, processes, **overrides) as synth:
        for batch in synth.stream(n, chunk=max(256, 64 * threads * processes)):
            records.extend(batch)
            if on_chunk:
                on_chunk(batch)
    return records

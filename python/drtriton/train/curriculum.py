"""The curriculum (DRTriton 4): levels 1 -> 5 by number of compute operators; advance when the
held-out pass@1 at the current level exceeds 50%; stop when it plateaus.

"Plateau" is not defined by the paper; here it is `patience` evaluations in a row without a
gain of at least `min_delta` over the best pass@1 seen at the current level. Reaching the last
level's threshold also stops (there is nothing harder to train on).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class CurriculumState:
    level: int
    best: float = -1.0  # best held-out pass@1 at this level
    stale: int = 0  # evaluations since `best` improved
    done: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def update(state: CurriculumState, pass_at_1: float, levels: list[int], advance_at: float,
           patience: int, min_delta: float) -> CurriculumState:  # fmt: skip
    """The state after one held-out evaluation at `state.level`."""
    if pass_at_1 > advance_at:
        later = [lv for lv in levels if lv > state.level]
        if not later:
            return CurriculumState(state.level, pass_at_1, 0, done=True)
        return CurriculumState(later[0])
    if pass_at_1 >= state.best + min_delta:
        return CurriculumState(state.level, pass_at_1, 0)
    stale = state.stale + 1
    return CurriculumState(state.level, state.best, stale, done=stale >= patience)


def by_level(records: list[dict[str, Any]]) -> dict[int, list]:
    out: dict[int, list] = {}
    for r in records:
        out.setdefault(int(r["level"]), []).append(r)
    return out


def split_by_level(records: list[dict[str, Any]], heldout_per_level: int,
                   seed: int) -> tuple[dict[int, list], dict[int, list]]:  # fmt: skip
    """(train, held-out) records per level; held-out are a seeded sample of each level."""
    train, heldout = {}, {}
    for level, rs in by_level(records).items():
        rs = sorted(rs, key=lambda r: str(r["id"]))
        random.Random(seed + level).shuffle(rs)
        k = min(heldout_per_level, len(rs) // 2)
        heldout[level], train[level] = rs[:k], rs[k:]
    return train, heldout

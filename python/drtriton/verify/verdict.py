"""The verdict: the one result every verification returns (DESIGN.md, "Verdict").

The JSON keys of DESIGN.md are the contract; `sandbox` is an extra key that records how strongly
the candidate was isolated ("bwrap", "unshare" or "none"), so a verdict produced without namespaces
can be told apart from one produced inside them, and `precision` the mode it was judged and timed
in (fp32, tf32, bf16 or fp16: precision.py).
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

STATUSES = (
    "correct",
    "compile_error",
    "runtime_error",
    "wrong_answer",
    "not_genuine",
    "forbidden",
    "timeout",
    "crashed",
)


@dataclasses.dataclass
class Verdict:
    status: str
    reason: str = ""
    trials: int = 0
    time_ms: float | None = None
    eager_ms: float | None = None
    compile_ms: float | None = None
    speedup: float | None = None
    sandbox: str | None = None
    # The precision mode it was judged and timed in (precision.py): every verdict names it.
    precision: str = "fp32"
    line: int | None = None  # candidate line of a static, compile or runtime error, when known
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        assert self.status in STATUSES, f"unknown verdict status {self.status!r}"

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    @property
    def exit_code(self) -> int:
        """0 when accepted, 1 when rejected (2 is reserved for usage errors, raised elsewhere)."""
        return 0 if self.correct else 1

    @property
    def log_speedup(self) -> float | None:
        """ln(speedup): the speed term of the DRPO reward (paper: log reward works best)."""
        if self.speedup is None or self.speedup <= 0:
            return None
        return math.log(self.speedup)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status,
            "correct": self.correct,
            "reason": self.reason,
            "trials": self.trials,
            "time_ms": self.time_ms,
            "eager_ms": self.eager_ms,
            "compile_ms": self.compile_ms,
            "speedup": self.speedup,
            "log_speedup": self.log_speedup,
            "sandbox": self.sandbox,
            "precision": self.precision,
        }
        if self.line is not None:
            out["line"] = self.line
        out.update(self.extra)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

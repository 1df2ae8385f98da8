"""The line after which a ModelNew file holds drtriton's drop-in wrapper, not verified code.

`drtriton optimize` writes the verified ModelNew (kernels and a forward that calls them, under
every static rule), then this marker, then a wrapper (optimize/serving.py) that runs Model's
own forward for calls the kernels were not built for. The wrapper needs what the static rules
forbid a candidate (os, warnings), so the verifier judges the text before the marker only: it
checks, loads and runs nothing after it. Whatever a candidate writes after the marker is
therefore never executed by the verifier, and the verdict speaks of the text before it.
"""

from __future__ import annotations

DROP_IN_MARK = "# ---- drtriton drop-in wrapper: not part of the verified text above ----"


def verified_part(source: str) -> str:
    """`source` up to (not including) the marker's line; all of it when there is none."""
    at = source.find("\n" + DROP_IN_MARK)
    if source.startswith(DROP_IN_MARK):
        at = 0
    return source if at < 0 else source[: at + 1 if at else 0]

"""The line after which a ModelNew file holds drtriton's drop-in wrapper, not verified code.

`drtriton optimize` writes the verified ModelNew (kernels and a forward that calls them, under
every static rule), then this marker, then a wrapper (optimize/serving.py) that runs Model's
own forward for calls the kernels were not built for. The wrapper needs what the static rules
forbid a candidate (os, warnings), so the verifier judges the text before the marker only: it
checks, loads and runs nothing after it. Whatever a candidate writes after the marker is
therefore never executed by the verifier, and the verdict speaks of the text before it.
"""

from __future__ import annotations

import re

DROP_IN_MARK = "# ---- drtriton drop-in wrapper: not part of the verified text above ----"


_MARK_LINE = re.compile("^" + re.escape(DROP_IN_MARK), re.MULTILINE)


def verified_part(source: str) -> str:
    """`source` up to (not including) the first line that starts with the marker; all of it
    when there is none."""
    found = _MARK_LINE.search(source)
    return source if found is None else source[: found.start()]

"""Skip the synthesizer tests when the extension was built without Gecode."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    try:
        from drtriton import _core

        available = _core.synth_available()
    except ImportError:
        available = False
    if available:
        return
    skip = pytest.mark.skip(reason="drtriton._core built without the synthesizer (no Gecode)")
    for item in items:
        if "tests/synth" in str(item.fspath):
            item.add_marker(skip)

"""A pytest plugin (pyproject's addopts load it): `benchmark_script`, which loads a script
under benchmarks/ (not a package) as a module, for every test folder that exercises one."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from collections.abc import Callable
from types import ModuleType

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def benchmark_script() -> Callable[[str], ModuleType]:
    """Loads a script under benchmarks/ as a module, by its path relative to benchmarks/."""

    def load(relative: str) -> ModuleType:
        path = ROOT / "benchmarks" / relative
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None, path
        module = importlib.util.module_from_spec(spec)
        # Registered before it runs, as importlib's recipe does: a dataclass in the script looks
        # its module up there to resolve string annotations (`from __future__ import annotations`).
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module

    return load

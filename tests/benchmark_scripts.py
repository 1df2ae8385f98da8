"""A pytest plugin (pyproject's addopts load it): `benchmark_script`, which loads a script
under benchmarks/ (not a package) as a module, for every test folder that exercises one, and
`child_python_path`, the PYTHONPATH of a child process that imports drtriton, and
`interpreted_probe` and `interpreted_model_new`, which run a probe script or a generated
ModelNew in such a child under Triton's interpreter."""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import textwrap
from collections.abc import Callable
from types import ModuleType
from typing import Any

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


@pytest.fixture(scope="session")
def child_python_path() -> str:
    """PYTHONPATH for a child process that must import the drtriton this test process imported.

    CI installs drtriton into site-packages (with its compiled _core) and runs pytest from a clean
    checkout, whose python/drtriton has no _core: a child given the checkout's python/ folder
    would import the package without its core. The folder that holds the imported package comes
    first, then whatever PYTHONPATH the tests run under.
    """
    import drtriton

    package_parent = str(pathlib.Path(drtriton.__file__).resolve().parents[1])
    inherited = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join(p for p in (package_parent, inherited) if p)


# Run first in every probe: fresh floating-point buffers hold NaN, as uninitialized GPU memory
# may, so that a kernel reading an element no kernel wrote (a rows copy's padding, a
# workspace) turns its output NaN instead of passing on the CPU allocator's zeros.
POISONED_ALLOCATIONS = """
import torch as _torch


def _poisoned(allocate):
    def allocate_nan(*args, **kwargs):
        out = allocate(*args, **kwargs)
        return out.fill_(float("nan")) if out.is_floating_point() else out

    return allocate_nan


_torch.empty = _poisoned(_torch.empty)
_torch.empty_strided = _poisoned(_torch.empty_strided)
"""


@pytest.fixture(scope="session")
def interpreted_probe(
    child_python_path: str, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str, pathlib.Path], Any]:
    """Runs `probe` (a script reading the folder in sys.argv[1]) in a child whose Triton runs
    kernels in its interpreter (TRITON_INTERPRET=1 before Triton's first import, which this
    test process made long ago), torch's empty allocations filled with NaN
    (POISONED_ALLOCATIONS), and returns the JSON of its last printed line.

    Once per test run: under pytest-xdist a module's tests may go to both workers, and each
    would set up the module's probe fixture (test_interpreter_dot's takes 190 s of one core,
    430 s beside the other worker; a module fixture that is not a probe, test_dot_split's
    `rows`, was set up in both workers in two runs out of two). The first
    worker to ask runs the child and keeps its output, keyed by the probe and the folder's
    files (names and text); a worker asking for the same meanwhile waits for it and reads it."""

    def run(probe: str, folder: pathlib.Path) -> Any:
        script = POISONED_ALLOCATIONS + probe

        def child() -> str:
            done = _interpreted_child([script, str(folder)], child_python_path, timeout=900)
            return done.stdout.splitlines()[-1]

        return json.loads(once_per_run(tmp_path_factory, _probe_key(script, folder), child))

    return run


def _probe_key(script: str, folder: pathlib.Path) -> str:
    """A digest of the probe and of every file in its folder (name and contents)."""
    digest = hashlib.sha256(script.encode())
    for path in sorted(folder.iterdir()):
        digest.update(b"\0" + path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:32]


def once_per_run(tmp_path_factory: pytest.TempPathFactory, key: str,
                  compute: Callable[[], str]) -> str:  # fmt: skip
    """compute(), run once in a pytest-xdist run: its text is kept in the folder the run's
    workers share (the parent of each worker's base temp, xdist's documented recipe), under an
    exclusive lock held while it computes. Without xdist, compute() itself."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return compute()
    shared = tmp_path_factory.getbasetemp().parent / "interpreted_probes"
    shared.mkdir(exist_ok=True)
    kept = shared / f"{key}.txt"
    with open(shared / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if kept.is_file():
            return kept.read_text()
        text = compute()  # a failure keeps nothing: the other worker runs it too, and fails
        kept.write_text(text)
        return text


@pytest.fixture(scope="session")
def interpreted_model_new(child_python_path: str) -> Callable[[str, pathlib.Path, str], None]:
    """Runs `script` (dedented; `module` is the ModelNew file `text`, and torch and warnings are
    imported) in a child whose Triton runs kernels in its interpreter, as a CPU user would run
    the file, and fails the test with the child's stderr if the script does."""

    def run(text: str, folder: pathlib.Path, script: str) -> None:
        path = folder / "model_new_file.py"
        path.write_text(text)
        head = (
            "import importlib.util, torch, warnings\n"
            f"spec = importlib.util.spec_from_file_location('model_new_file', {str(path)!r})\n"
            "module = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(module)\n"
        )
        _interpreted_child([head + textwrap.dedent(script)], child_python_path, timeout=300)

    return run


def _interpreted_child(args: list[str], python_path: str, timeout: int) -> Any:
    """`python -c args[0] args[1:]` with TRITON_INTERPRET=1 and `python_path`; fails the test
    with the child's stderr unless it exits 0."""
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": python_path}
    done = subprocess.run(
        [sys.executable, "-c", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done

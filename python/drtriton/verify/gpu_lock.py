"""A readers-writer lock per physical GPU, across processes: timings do not overlap other work.

CUDA events time the GPU, not a process: when several processes share a GPU (six KernelBench
problems per H200), a timed loop also measures whatever kernels the others launch meanwhile,
and a speed-up becomes a draw (on 2026-11-30 a ResNet-101 hybrid whose convolutions run in
PyTorch timed 1.8x faster than the same convolutions in eager).  So:

- timed sections (the candidate's timed calls, the eager and torch.compile baselines, the
  search's eager operator costs) hold the lock exclusively;
- the GPU work around them (references, input sets, correctness calls) holds it shared, so
  that any number of those run together, but never during a timing.

Not held: what is mostly CPU work, since a hold through it would stall every timing on the
GPU: a candidate's first correctness call (it compiles the kernels), torch.compile's first call
of the baseline, and the search's hybrid check (a child process that imports and compiles).

The lock lives in the trusted processes only (the harness, the search); the sandboxed worker
times while its harness holds the lock for it.  It is two `flock`s on files named after the
GPU as CUDA_VISIBLE_DEVICES names it: `main` (shared or exclusive) and a `turnstile` that a
writer holds while it waits, so that a stream of readers cannot starve it.  Locks die with
their process.  Within one process the lock is re-entrant: a nested request for a mode already
held does nothing, and a nested exclusive request inside a shared one trades the shared hold
for an exclusive one for its duration.  Off on the CPU, and with DRTRITON_GPU_LOCK=0.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

SHARED, EXCLUSIVE = "shared", "exclusive"


def physical_gpu(device: str) -> str | None:
    """The GPU `device` ("cuda", "cuda:1") is, as CUDA_VISIBLE_DEVICES names it; None for others."""
    if not device.startswith("cuda"):
        return None
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    visible = [
        v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()
    ]
    if visible and index < len(visible):
        return visible[index]
    return str(index)


class GpuLock:
    def __init__(self, gpu: str, folder: Path | None = None) -> None:
        folder = folder or Path(tempfile.gettempdir()) / "drtriton-gpu-locks"
        folder.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in gpu)
        self._main_path = folder / f"gpu-{safe}.lock"
        self._turnstile_path = folder / f"gpu-{safe}.turnstile"
        self._held: list[str] = []  # this process's holds, outermost first
        self._fd = -1
        self._mutex = threading.RLock()  # threads of one process share the holds

    @contextlib.contextmanager
    def hold(self, mode: str) -> Iterator[None]:
        with self._mutex:
            outer = self._held[-1] if self._held else None
            if outer == EXCLUSIVE or outer == mode:
                self._held.append(outer)
                try:
                    yield
                finally:
                    self._held.pop()
                return
            if outer == SHARED:  # trade the shared hold for an exclusive one, then back
                self._release()
            self._acquire(mode)
            self._held.append(mode)
            try:
                yield
            finally:
                self._held.pop()
                self._release()
                if outer == SHARED:
                    self._acquire(SHARED)

    def _acquire(self, mode: str) -> None:
        turnstile = os.open(self._turnstile_path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(turnstile, fcntl.LOCK_EX)  # waits behind a writer that waits
            self._fd = os.open(self._main_path, os.O_RDWR | os.O_CREAT, 0o666)
            fcntl.flock(self._fd, fcntl.LOCK_EX if mode == EXCLUSIVE else fcntl.LOCK_SH)
        finally:
            os.close(turnstile)  # a writer got `main` while holding it: readers may queue again

    def _release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing the descriptor drops its flock
            self._fd = -1


_LOCKS: dict[str, GpuLock] = {}


def hold(device: str, mode: str) -> contextlib.AbstractContextManager[None]:
    """`with hold(device, EXCLUSIVE):` around a timing, SHARED around other GPU work."""
    gpu = physical_gpu(str(device))
    if gpu is None or os.environ.get("DRTRITON_GPU_LOCK", "1") == "0":
        return contextlib.nullcontext()
    if gpu not in _LOCKS:
        _LOCKS[gpu] = GpuLock(gpu)
    return _LOCKS[gpu].hold(mode)

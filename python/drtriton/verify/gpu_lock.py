"""A readers-writer lock per physical GPU, across processes: timings do not overlap other work.

CUDA events time the GPU, not a process: when several processes share a GPU (six KernelBench
problems per H200), a timed loop also measures whatever kernels the others launch meanwhile,
and a speed-up becomes a draw (on 2026-11-30 a ResNet-101 hybrid whose convolutions run in
PyTorch timed 1.8x faster than the same convolutions in eager).  So:

- timed sections (the candidate's, eager's and torch.compile's timed calls, interleaved in
  one hold; the search's eager operator costs; the autotuners' timings: a `@triton.autotune`
  candidate's first correctness call and torch.compile's first call) hold the lock
  exclusively;
- all other GPU work of a verification holds it shared, so that any number of those run
  together, but never during a timing: references and input sets, loading the candidate,
  every other correctness call, the outputs' comparison, and the search's probes;
- CPU work is not held, since a hold through it would stall every timing on the GPU: the
  candidate's kernels compile in a compile pass that does no GPU work (compile_pass.py), and
  torch.compile's Dynamo/Inductor compilation releases the shared hold while it runs
  (`paused_while`, from torch's compile callbacks: baselines.py).

The lock lives in the trusted processes only (the harness, the search); the sandboxed worker
times while its harness holds the lock for it.  It is two `flock`s on files named after the
GPU as CUDA_VISIBLE_DEVICES names it: `main` (shared or exclusive) and a `turnstile` that a
writer holds while it waits, so that a stream of readers cannot starve it.  Locks die with
their process.  With DRTRITON_LOCK_LOG=FILE every hold that waited or was held long is appended to
FILE as one JSON line (where it was taken, mode, seconds waiting and held): what the GPU's
other processes waited for.  Within one process the lock is re-entrant: a nested request for a mode already
held does nothing, and a nested exclusive request inside a shared one trades the shared hold
for an exclusive one for its duration.  Off on the CPU, and with DRTRITON_GPU_LOCK=0.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
        self._paused = False  # pause(): held on the stack, released on the file
        self._mutex = threading.RLock()  # threads of one process share the holds
        # This process's seconds waiting for the lock and holding it exclusively (totals()).
        self.wait_s = self.exclusive_s = 0.0
        self._traded_s = 0.0  # seconds inside exclusive holds traded for shared ones
        self._paused_s = 0.0  # seconds paused (released for torch.compile's compilation)
        self._paused_at = 0.0

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
            traded = time.monotonic()
            if outer == SHARED:  # trade the shared hold for an exclusive one, then back
                self._release()
            waited, nested, paused = self.wait_s, self._traded_s, self._paused_s
            self._acquire(mode)
            waited = self.wait_s - waited
            self._held.append(mode)
            began = time.monotonic()
            try:
                yield
            finally:
                self._held.pop()
                self._release()
                # An outer hold's own time leaves out the exclusive holds traded inside it
                # and the time it was paused (not held: a compilation ran meanwhile).
                held = time.monotonic() - began - (self._traded_s - nested)
                held -= self._paused_s - paused
                if mode == EXCLUSIVE:
                    self.exclusive_s += held
                _log_hold(mode, waited, held)
                if outer == SHARED:
                    self._acquire(SHARED)
                    self._traded_s += time.monotonic() - traded

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def holding(self) -> bool:
        return bool(self._held)

    def pause(self) -> None:
        """Releases this process's hold until `resume()` (the holds stay on the stack); does
        nothing when nothing is held or it is paused already."""
        with self._mutex:
            if self._held and self._fd >= 0 and not self._paused:
                self._release()
                self._paused = True
                self._paused_at = time.monotonic()

    def resume(self) -> None:
        with self._mutex:
            if self._paused:
                self._paused = False
                self._paused_s += time.monotonic() - self._paused_at
                self._acquire(self._held[-1])

    def _acquire(self, mode: str) -> None:
        began = time.monotonic()
        turnstile = os.open(self._turnstile_path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(turnstile, fcntl.LOCK_EX)  # waits behind a writer that waits
            self._fd = os.open(self._main_path, os.O_RDWR | os.O_CREAT, 0o666)
            fcntl.flock(self._fd, fcntl.LOCK_EX if mode == EXCLUSIVE else fcntl.LOCK_SH)
        finally:
            os.close(turnstile)  # a writer got `main` while holding it: readers may queue again
            self.wait_s += time.monotonic() - began

    def _release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing the descriptor drops its flock
            self._fd = -1


_LOCKS: dict[str, GpuLock] = {}
# Holds logged under DRTRITON_LOCK_LOG: those held or waited for at least this long (the
# H200 level-2 run of 2026-12-01 waited 65-160 s per problem while holding 2-33 s exclusively).
LOG_MIN_S = 0.25
_SKIPPED_FILES = ("gpu_lock.py", "contextlib.py", "channel.py")


def _log_hold(mode: str, waited: float, held: float) -> None:
    path = os.environ.get("DRTRITON_LOCK_LOG")
    if not path or max(waited, held) < LOG_MIN_S:
        return
    record = {"t": round(time.time(), 3), "pid": os.getpid(), "mode": mode,
              "wait_s": round(waited, 3), "held_s": round(held, 3), "site": _site()}  # fmt: skip
    line = (json.dumps(record) + "\n").encode()
    with contextlib.suppress(OSError):  # a diagnostic: never the verification's failure
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            os.write(fd, line)  # one write under O_APPEND: lines of processes do not interleave
        finally:
            os.close(fd)


def _site(depth: int = 3) -> str:
    """The innermost `depth` callers outside the lock's own plumbing, innermost first."""
    frame, names = sys._getframe(2), []
    while frame is not None and len(names) < depth:
        name = os.path.basename(frame.f_code.co_filename)
        if name not in _SKIPPED_FILES:
            names.append(f"{name}:{frame.f_code.co_name}:{frame.f_lineno}")
        frame = frame.f_back
    return " < ".join(names)


def _lock_for(device: str) -> GpuLock | None:
    """This process's lock of `device`'s GPU; None on the CPU and with DRTRITON_GPU_LOCK=0."""
    gpu = physical_gpu(str(device))
    if gpu is None or os.environ.get("DRTRITON_GPU_LOCK", "1") == "0":
        return None
    if gpu not in _LOCKS:
        _LOCKS[gpu] = GpuLock(gpu)
    return _LOCKS[gpu]


def hold(device: str, mode: str) -> contextlib.AbstractContextManager[None]:
    """`with hold(device, EXCLUSIVE):` around a timing, SHARED around other GPU work."""
    lock = _lock_for(device)
    return contextlib.nullcontext() if lock is None else lock.hold(mode)


def totals() -> dict[str, float]:
    """This process's seconds waiting for GPU locks and holding them exclusively, over all
    GPUs: what sharing a GPU costs a process (the evaluation records it per problem)."""
    return {"wait_s": round(sum(lock.wait_s for lock in _LOCKS.values()), 3),
            "exclusive_s": round(sum(lock.exclusive_s for lock in _LOCKS.values()), 3)}  # fmt: skip


@contextlib.contextmanager
def released(device: str) -> Iterator[None]:
    """Within: this process's hold on `device`'s lock is let go, and taken back after: for
    CPU-only work that falls inside a hold (a float64 evaluation on the host), which would
    otherwise stall every timing queued on the GPU. Nothing when nothing is held or the hold is
    paused already (torch.compile's compilation)."""
    lock = _lock_for(device)
    if lock is None or lock.paused or not lock.holding:
        yield
        return
    lock.pause()
    try:
        yield
    finally:
        lock.resume()


@contextlib.contextmanager
def paused_while(device: str, register: Any) -> Iterator[None]:
    """Within: `register(pause, resume)` installs callbacks that release this process's hold
    on `device`'s lock and take it back (torch.compile's compile start and end)."""
    lock = _lock_for(device)
    if lock is None:
        yield
        return
    with register(lock.pause, lock.resume):
        try:
            yield
        finally:
            lock.resume()

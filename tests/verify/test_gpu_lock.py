"""gpu_lock: the readers-writer lock that keeps timings apart from other GPU work.

flock locks belong to open file descriptions, so separate GpuLock objects (each opens its own
descriptors) in threads of one process contend as separate processes would."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from drtriton.verify import gpu_lock
from drtriton.verify.gpu_lock import EXCLUSIVE, SHARED, GpuLock


def _in_thread(lock: GpuLock, mode: str, log: list[str], name: str,
               release: threading.Event) -> threading.Thread:  # fmt: skip
    def body() -> None:
        with lock.hold(mode):
            log.append(f"{name} in")
            release.wait(10)
            log.append(f"{name} out")

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread


def _wait_for(log: list[str], entry: str, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while entry not in log and time.monotonic() < end:
        time.sleep(0.01)
    return entry in log


def test_readers_share_and_a_writer_waits_for_them(tmp_path: Path) -> None:
    log: list[str] = []
    go = threading.Event()
    readers = [_in_thread(GpuLock("0", tmp_path), SHARED, log, f"r{i}", go) for i in range(2)]
    assert _wait_for(log, "r0 in") and _wait_for(log, "r1 in")  # both at once
    writer = _in_thread(GpuLock("0", tmp_path), EXCLUSIVE, log, "w", threading.Event())
    time.sleep(0.2)
    assert "w in" not in log
    go.set()
    assert _wait_for(log, "w in")
    assert log.index("w in") > max(log.index("r0 out"), log.index("r1 out"))
    for t in readers:
        t.join(5)
    del writer


def test_a_waiting_writer_goes_before_later_readers(tmp_path: Path) -> None:
    log: list[str] = []
    first, writer_done, late = threading.Event(), threading.Event(), threading.Event()
    _in_thread(GpuLock("0", tmp_path), SHARED, log, "r0", first)
    assert _wait_for(log, "r0 in")
    _in_thread(GpuLock("0", tmp_path), EXCLUSIVE, log, "w", writer_done)
    time.sleep(0.2)  # the writer now waits on r0, holding the turnstile
    _in_thread(GpuLock("0", tmp_path), SHARED, log, "r1", late)
    time.sleep(0.2)
    assert "r1 in" not in log  # a stream of readers cannot starve the writer
    first.set()
    assert _wait_for(log, "w in")
    writer_done.set()
    assert _wait_for(log, "r1 in")
    late.set()
    assert log.index("w out") < log.index("r1 in")


def test_other_gpus_do_not_contend(tmp_path: Path) -> None:
    log: list[str] = []
    hold = threading.Event()
    _in_thread(GpuLock("0", tmp_path), EXCLUSIVE, log, "gpu0", hold)
    _in_thread(GpuLock("1", tmp_path), EXCLUSIVE, log, "gpu1", hold)
    assert _wait_for(log, "gpu0 in") and _wait_for(log, "gpu1 in")
    hold.set()


def test_nested_holds_are_reentrant_and_an_exclusive_inside_shared_trades(tmp_path: Path) -> None:
    lock = GpuLock("0", tmp_path)
    other = GpuLock("0", tmp_path)
    log: list[str] = []
    with lock.hold(SHARED):
        with lock.hold(SHARED):
            pass
        with lock.hold(EXCLUSIVE):
            # exclusive now: another reader must wait
            done = threading.Event()
            _in_thread(other, SHARED, log, "reader", done)
            time.sleep(0.2)
            assert "reader in" not in log
        assert _wait_for(log, "reader in")  # back to shared: readers share again
        done.set()


@pytest.mark.parametrize(
    ("device", "visible", "expected"),
    [("cuda", "", "0"), ("cuda:1", "", "1"), ("cuda:0", "3,1", "3"), ("cuda:1", "3,1", "1"),
     ("cpu", "", None)],
)  # fmt: skip
def test_physical_gpu_follows_cuda_visible_devices(
    device: str, visible: str, expected: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert gpu_lock.physical_gpu(device) == expected


def test_hold_is_a_no_op_on_the_cpu_and_when_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    with gpu_lock.hold("cpu", EXCLUSIVE):
        pass
    monkeypatch.setenv("DRTRITON_GPU_LOCK", "0")
    before = dict(gpu_lock._LOCKS)
    with gpu_lock.hold("cuda:0", EXCLUSIVE):
        assert gpu_lock._LOCKS == before  # no lock file opened


def test_the_harness_holds_the_lock_around_trials_but_not_the_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Where the harness takes the lock (the GPU-only timing holds are exercised by
    # tests/verify/test_gpu.py): set 0's reference shared, trial 0 (it compiles) unheld,
    # trials 1-4 shared one at a time.
    from conftest import HERE, task_source

    from drtriton.verify import harness, verify

    taken: list[tuple[str, str]] = []
    real = gpu_lock.hold

    def recording(device: str, mode: str):  # type: ignore[no-untyped-def]
        taken.append((device, mode))
        return real(device, mode)

    monkeypatch.setattr(harness.gpu_lock, "hold", recording)
    candidate = (HERE / "honest" / "add_relu.py").read_text()
    verdict = verify(task_source("add_relu"), candidate, sandbox="none")
    assert verdict.status == "correct"
    assert taken == [("cpu", SHARED)] * 5  # set 0's reference, then trials 1..4

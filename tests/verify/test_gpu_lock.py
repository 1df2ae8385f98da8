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
    done = threading.Event()
    writer = _in_thread(GpuLock("0", tmp_path), EXCLUSIVE, log, "w", done)
    time.sleep(0.2)
    assert "w in" not in log
    go.set()
    assert _wait_for(log, "w in")
    assert log.index("w in") > max(log.index("r0 out"), log.index("r1 out"))
    # Let the writer go now: a holder left to time out 10 s later would log its hold into
    # whichever test sets DRTRITON_LOCK_LOG then.
    done.set()
    for t in [*readers, writer]:
        t.join(5)


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


def _verify_recording_holds(monkeypatch: pytest.MonkeyPatch, candidate_path: str):  # type: ignore[no-untyped-def]
    """verify() of the add_relu task with `candidate_path` (under tests/verify), the harness's
    lock recorded: (verdict, every hold's mode in order, each worker request with the mode
    held around it)."""
    import contextlib

    from conftest import HERE, task_source

    from drtriton.verify import harness, verify
    from drtriton.verify.channel import WorkerChannel

    modes: list[str] = []
    seen: list[tuple[str, str | None]] = []
    taken: list[str] = []

    @contextlib.contextmanager
    def recording(device: str, mode: str):  # type: ignore[no-untyped-def]
        taken.append(mode)
        modes.append(mode)
        try:
            yield
        finally:
            modes.pop()

    real_request = WorkerChannel.request

    def request(self, msg):  # type: ignore[no-untyped-def]
        seen.append(("ready" if msg is None else msg["op"], modes[-1] if modes else None))
        return real_request(self, msg)

    monkeypatch.setattr(harness.gpu_lock, "hold", recording)
    monkeypatch.setattr(WorkerChannel, "request", request)
    candidate = (HERE / candidate_path).read_text()
    return verify(task_source("add_relu"), candidate, sandbox="none"), taken, seen


def test_the_harness_holds_the_lock_around_all_gpu_work_but_the_compile_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Where the harness takes the lock (the timing's exclusive hold is exercised with fakes in
    # test_timing_rounds.py and for real in test_gpu.py): the reference, the candidate's load
    # and every correctness call shared; the compile pass and the output files, which do no
    # GPU work, unheld.
    verdict, taken, seen = _verify_recording_holds(monkeypatch, "honest/add_relu.py")
    assert verdict.status == "correct"
    assert verdict.extra["compile_pass_s"] is not None and "compile_pass" not in verdict.extra
    # Each output's file is written (and read) between holds: file work stalls no timing.
    runs = [("run", SHARED), ("save", None)] * 5
    assert seen == [("ready", None), ("load", SHARED), ("warm", None), *runs]
    # Holds: the reference, the load, one per trial (which also compares the trial before)
    # and one comparing the last: each is a wait behind a queued timing, so as few as can be.
    assert taken == [SHARED] * (2 + 5 + 1)
    # Where the verification's time went: each request's seconds, and the lock's share.
    assert set(verdict.extra["request_s"]) == {"start", "load", "warm", "run", "save"}
    assert verdict.extra["lock_wait_s"] == 0.0 and verdict.extra["exclusive_s"] == 0.0


def test_an_autotuned_candidates_first_call_holds_the_gpu_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Triton's autotuner times its configs at the first call and keeps the fastest: beside
    # other processes' kernels that choice is a draw, so trial 0 holds the lock exclusively;
    # the other trials, as for any candidate, shared.
    verdict, _, seen = _verify_recording_holds(monkeypatch, "autotuned/add_relu.py")
    assert verdict.status == "correct", verdict.reason
    assert [mode for op, mode in seen if op == "run"] == [EXCLUSIVE] + [SHARED] * 4


def test_a_paused_reader_lets_a_writer_in_and_then_holds_again(tmp_path: Path) -> None:
    reader, other = GpuLock("0", tmp_path), GpuLock("0", tmp_path)
    log: list[str] = []
    with reader.hold(SHARED):
        done = threading.Event()
        _in_thread(other, EXCLUSIVE, log, "writer", done)
        time.sleep(0.2)
        assert "writer in" not in log  # the shared hold keeps the timing out
        reader.pause()  # e.g. Dynamo compiling: CPU work only
        assert _wait_for(log, "writer in")
        done.set()
        assert _wait_for(log, "writer out")
        reader.resume()
        late = threading.Event()
        _in_thread(GpuLock("0", tmp_path), EXCLUSIVE, log, "late", late)
        time.sleep(0.2)
        assert "late in" not in log  # held again after resume
    assert _wait_for(log, "late in")
    late.set()


# A process of a GPU's users, as a verification uses the lock: GPU work under shared holds (one
# of them with a paused stretch of "compilation"), timed sections exclusive. Each section's
# interval (system-wide monotonic clock) goes to a file; nothing else touches the lock.
_USER = r"""
import json, random, sys, time
from pathlib import Path
from drtriton.verify.gpu_lock import EXCLUSIVE, SHARED, GpuLock
folder, name, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
lock, rng, spans = GpuLock("0", folder), random.Random(name), []
def section(kind):
    start = time.monotonic(); time.sleep(rng.uniform(0.001, 0.012))
    spans.append([kind, start, time.monotonic()])
for _ in range(rounds):
    with lock.hold(SHARED):
        section("gpu")
        lock.pause(); time.sleep(rng.uniform(0, 0.01)); lock.resume()  # compiling: no GPU work
        section("gpu")
        with lock.hold(EXCLUSIVE):
            section("timed")
        section("gpu")
(folder / f"{name}.json").write_text(json.dumps(spans))
"""


def test_no_timed_section_overlaps_any_other_processes_gpu_work(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-c", _USER, str(tmp_path), f"p{i}", "12"])
             for i in range(4)]  # fmt: skip
    assert all(p.wait(timeout=120) == 0 for p in procs)
    spans = {f"p{i}": json.loads((tmp_path / f"p{i}.json").read_text()) for i in range(4)}
    timed = gpu = 0
    for name, own in spans.items():
        for kind, start, end in own:
            if kind != "timed":
                continue
            timed += 1
            for other, theirs in spans.items():
                if other == name:
                    continue
                for _, s, e in theirs:
                    gpu += 1
                    assert e <= start or s >= end, f"{name}'s timing overlaps {other}'s GPU work"
    assert timed == 4 * 12 and gpu > 0


def _held_exclusively_for(seconds: float, folder: Path) -> tuple[GpuLock, list[str]]:
    """A lock held exclusively by another thread from now for `seconds`, and that thread's log
    ("holder in", "holder out")."""
    holder, log, release = GpuLock("0", folder), [], threading.Event()
    _in_thread(holder, EXCLUSIVE, log, "holder", release)
    assert _wait_for(log, "holder in")
    threading.Timer(seconds, release.set).start()
    return holder, log


def test_a_lock_counts_the_time_waited_for_it_and_held_exclusively(tmp_path: Path) -> None:
    waiter = GpuLock("0", tmp_path)
    holder, log = _held_exclusively_for(0.3, tmp_path)
    with waiter.hold(SHARED):  # blocked until the holder lets go
        pass
    assert waiter.wait_s >= 0.25 and waiter.exclusive_s == 0.0
    assert _wait_for(log, "holder out")
    time.sleep(0.05)  # the holder's thread adds its figure after leaving
    assert holder.exclusive_s >= 0.25


def _lock_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, min_s: float) -> Path:
    """DRTRITON_LOCK_LOG pointed at a fresh file, logging holds of `min_s` or more."""
    log_file = tmp_path / "holds.jsonl"
    monkeypatch.setenv("DRTRITON_LOCK_LOG", str(log_file))
    monkeypatch.setattr(gpu_lock, "LOG_MIN_S", min_s)
    return log_file


def _logged(log_file: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in log_file.read_text().splitlines()]


def test_long_holds_and_waits_are_logged_with_their_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_file = _lock_log(tmp_path, monkeypatch, 0.2)
    waiter = GpuLock("0", tmp_path)
    _, log = _held_exclusively_for(0.3, tmp_path)

    def short_reader() -> None:
        with waiter.hold(SHARED):  # waits ~0.3 s, holds no time
            pass

    short_reader()
    with waiter.hold(SHARED):  # neither waited nor held long: not logged
        pass
    assert _wait_for(log, "holder out")
    time.sleep(0.05)
    records = _logged(log_file)
    modes = sorted(r["mode"] for r in records)
    assert modes == [EXCLUSIVE, SHARED], records
    reader = next(r for r in records if r["mode"] == SHARED)
    assert reader["wait_s"] >= 0.25 and reader["held_s"] < 0.2
    assert reader["site"].startswith("test_gpu_lock.py:short_reader:")
    writer = next(r for r in records if r["mode"] == EXCLUSIVE)
    assert writer["held_s"] >= 0.25 and "body" in writer["site"]


def test_a_logged_hold_leaves_out_the_time_it_was_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # torch.compile's compilation pauses the hold (baselines.py): that time was not held.
    log_file = _lock_log(tmp_path, monkeypatch, 0.0)
    lock = GpuLock("0", tmp_path)
    with lock.hold(SHARED):
        lock.pause()
        time.sleep(0.4)  # "compiling"
        lock.resume()
        time.sleep(0.05)
    (record,) = _logged(log_file)
    assert 0.04 <= record["held_s"] < 0.3, record


def test_released_lets_a_writer_in_during_cpu_work_and_holds_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = GpuLock("0", tmp_path)
    monkeypatch.setattr(gpu_lock, "_lock_for", lambda device: reader)
    log: list[str] = []
    with reader.hold(SHARED):
        done = threading.Event()
        with gpu_lock.released("cuda"):  # a float64 evaluation on the host
            _in_thread(GpuLock("0", tmp_path), EXCLUSIVE, log, "writer", done)
            assert _wait_for(log, "writer in")
            done.set()
            assert _wait_for(log, "writer out")
        assert not reader.paused
        late = threading.Event()
        _in_thread(GpuLock("0", tmp_path), EXCLUSIVE, log, "late", late)
        time.sleep(0.2)
        assert "late in" not in log  # held again after the release
    assert _wait_for(log, "late in")
    late.set()


def test_released_leaves_a_paused_hold_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = GpuLock("0", tmp_path)
    monkeypatch.setattr(gpu_lock, "_lock_for", lambda device: lock)
    with gpu_lock.released("cuda"):  # nothing held: nothing to let go
        assert not lock.paused
    with lock.hold(SHARED):
        lock.pause()  # torch.compile compiling
        with gpu_lock.released("cuda"):
            assert lock.paused
        assert lock.paused  # its own resume takes the hold back, not released's
        lock.resume()

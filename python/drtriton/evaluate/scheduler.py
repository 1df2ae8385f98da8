"""One loop that runs work on shared GPUs under memory admission, for every caller that does:
`verify-batch` (pairs on pools of harness processes), `eval kernelbench` (problems in child
processes) and `benchmarks/memory_bound_speed.py` (problems in a process pool).

Each device has a number of slots (processes); an item starts on a device only while a slot
is free and `memory.Admission` lets it (its estimated footprint fits beside the items running
there, or the device is idle). Results come back as they finish.

An item whose result says it ran out of GPU memory beside others (`retry_alone` decides) is
queued again once, first in line, to run alone on its device: the estimates are judgments, not
measured peaks, and on the H200 of 2026-12-03 two of twelve kernels in timing_noise (a) lost
four of ten verifications to out-of-memory errors under them. Run alone, such an item gets the
whole GPU; one that fails alone too is reported as it is.

An item whose result stands but might be better alone (`rerun_alone_later`: eval kernelbench's
correct record whose search lost a candidate to memory) is yielded as it is and queued once
more at the end of the line, to run alone after everything else has started. First in line it
held the whole GPU while the others waited: on an H100 (2026-12-07, tf32 level 2) two such
reruns took 240 s of a 551 s call, with five of six slots idle.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from drtriton.evaluate.memory import Admission

Item = TypeVar("Item")
# submit(device, item) starts `item` on `device` and returns the future of its result.
Submit = Callable[[str, Item], "cf.Future[Any]"]


class AdmittedRun(Generic[Item]):
    """Iterating yields (item, finished future) until every item ran or `keep_starting()`
    turned false and what was in flight finished. `in_flight` lists the futures still
    running (a caller that stops early waits on them or cancels their work)."""

    def __init__(
        self,
        items: Sequence[Item],
        slots: dict[str, int],
        admission: Admission,
        submit: Submit[Item],
        *,
        keep_starting: Callable[[], bool] = lambda: True,
        retry_alone: Callable[[Item, cf.Future[Any]], bool] | None = None,
        rerun_alone_later: Callable[[Item, cf.Future[Any]], bool] | None = None,
    ) -> None:
        self.queue = list(items)
        self.slots = slots
        self.free = dict(slots)
        self.admission = admission
        self.submit = submit
        self.keep_starting = keep_starting
        self.retry_alone = retry_alone
        self.rerun_alone_later = rerun_alone_later
        self.running: dict[cf.Future[Any], tuple[Item, str, int]] = {}
        self.retried: set[int] = set()  # id() of items queued again to run alone

    @property
    def in_flight(self) -> list[cf.Future[Any]]:
        return list(self.running)

    def __iter__(self) -> Iterator[tuple[Item, cf.Future[Any]]]:
        while True:
            if self.keep_starting():
                self._start_what_fits()
            if not self.running:
                return
            done, _ = cf.wait(self.running, return_when=cf.FIRST_COMPLETED)
            for future in done:
                item, device, estimate = self.running.pop(future)
                self.admission.finish(device, estimate)
                self.free[device] += 1
                if self._again_alone(item, device, future, self.retry_alone):
                    self.queue.insert(0, item)  # its result is dropped: first in line
                    continue
                if self._again_alone(item, device, future, self.rerun_alone_later):
                    self.queue.append(item)  # its result stands: after all the others
                yield item, future

    def _start_what_fits(self) -> None:
        for device in self.slots:
            while self.free[device] and self.queue:
                index = self.admission.pick(self.queue, device)
                if index is None:  # nothing fits on this device until an item ends
                    break
                item = self.queue.pop(index)
                estimate = self.admission.start(item, device)
                self.free[device] -= 1
                self.running[self.submit(device, item)] = (item, device, estimate)

    def _again_alone(self, item: Item, device: str, future: cf.Future[Any],
                     decide: Callable[[Item, cf.Future[Any]], bool] | None) -> bool:  # fmt: skip
        """Whether `item` runs once more, alone (`decide` says so, and it has not yet)."""
        if decide is None or id(item) in self.retried:
            return False
        if device not in self.admission.budgets:  # no admission there (the CPU): not alone
            return False
        if future.exception() is not None or not decide(item, future):
            return False
        self.retried.add(id(item))
        self.admission.alone(item)
        return True


def pool_future(pool: Any, fn: Callable[..., Any], *args: Any) -> cf.Future[Any]:
    """The future of `pool.apply_async(fn, args)` for a multiprocessing pool (its AsyncResult
    cannot be waited on with others)."""
    future: cf.Future[Any] = cf.Future()
    pool.apply_async(fn, args, callback=future.set_result, error_callback=future.set_exception)
    return future

"""The admitted loop shared by verify-batch, eval kernelbench and memory_bound_speed
(evaluate/scheduler.py): slots, memory admission, and the one retry alone."""

from __future__ import annotations

import concurrent.futures as cf
import json
from typing import Any

import pytest

from drtriton.evaluate import memory
from drtriton.evaluate.scheduler import AdmittedRun, pool_future


class Recorder:
    """A submit that finishes each item at once and notes what was held on its device."""

    def __init__(self, admission: memory.Admission, fail_beside_others: set[str] = frozenset()):
        self.admission = admission
        self.held_at_start: list[int] = []  # bytes held on the device, the item's own included
        self.count_at_start: list[int] = []  # items running there, the item included
        self.order: list[str] = []
        self.fail_beside_others = fail_beside_others  # ids that "run out of memory" unless alone

    def __call__(self, device: str, item: dict[str, Any]) -> cf.Future[Any]:
        held = self.admission.held[device]
        self.held_at_start.append(sum(held))
        self.count_at_start.append(len(held))
        self.order.append(item["id"])
        future: cf.Future[Any] = cf.Future()
        if "raise" in item:
            future.set_exception(item["raise"])
        else:
            crowded = item["id"] in self.fail_beside_others and len(held) > 1
            future.set_result({"id": item["id"], "oom": crowded})
        return future


def items(*needs: int) -> list[dict[str, Any]]:
    return [{"id": f"p{i}", "need": need} for i, need in enumerate(needs)]


def admission(budget: int | None = 100) -> memory.Admission:
    budgets = {} if budget is None else {"cuda:0": budget}
    return memory.Admission(budgets, lambda r: r["need"])


def ids(run: AdmittedRun) -> list[str]:
    return [future.result()["id"] for _item, future in run]


def test_items_start_only_while_their_estimates_fit():
    adm = admission()
    submit = Recorder(adm)
    assert sorted(ids(AdmittedRun(items(60, 60, 30, 30), {"cuda:0": 4}, adm, submit))) == [
        "p0", "p1", "p2", "p3"
    ]  # fmt: skip
    # p0 alone (60), then p2 beside it (90); p1 and p3 wait although slots are free
    assert submit.order[:2] == ["p0", "p2"]
    assert max(submit.held_at_start) <= 100
    assert adm.held["cuda:0"] == []  # every estimate released


def test_an_idle_gpu_takes_an_item_over_its_budget():
    adm = admission()
    run = AdmittedRun(items(500, 10), {"cuda:0": 2}, adm, Recorder(adm))
    assert ids(run) == ["p0", "p1"]


def test_slots_bound_concurrency_without_a_budget():
    adm = admission(None)  # the CPU: no memory constraint
    in_flight: list[int] = []
    pending: list[cf.Future[Any]] = []

    def submit(device: str, item: dict[str, Any]) -> cf.Future[Any]:
        future: cf.Future[Any] = cf.Future()
        pending.append(future)
        in_flight.append(sum(not f.done() for f in pending))
        # finish the oldest unfinished item only when the slots are full, like a slow pool
        if in_flight[-1] == 2 or len(pending) == 5:
            for f in pending:
                if not f.done():
                    f.set_result({"id": item["id"]})
        return future

    run = AdmittedRun(items(1, 1, 1, 1, 1), {"cpu": 2}, adm, submit)
    assert len(list(run)) == 5
    assert max(in_flight) == 2


def test_a_submitted_exception_reaches_the_caller():
    adm = admission(None)
    run = AdmittedRun([{"id": "a", "raise": RuntimeError("sandbox cannot start")}], {"cpu": 1},
                      adm, Recorder(adm))  # fmt: skip
    with pytest.raises(RuntimeError, match="sandbox"):
        for _item, future in run:
            future.result()


def test_keep_starting_false_starts_nothing_more():
    adm = admission(None)
    submit = Recorder(adm)
    run = AdmittedRun(items(1, 1, 1), {"cpu": 1}, adm, submit,
                      keep_starting=lambda: len(submit.order) < 2)  # fmt: skip
    assert ids(run) == ["p0", "p1"]  # p2 never started: the budget ended


def test_an_item_out_of_memory_beside_others_runs_again_alone():
    adm = admission(100)
    submit = Recorder(adm, fail_beside_others={"p1"})
    retried = AdmittedRun(items(10, 10, 10, 10), {"cuda:0": 4}, adm, submit,
                          retry_alone=lambda _i, f: f.result()["oom"])  # fmt: skip
    results = {f.result()["id"]: f.result()["oom"] for _i, f in retried}
    assert results == {"p0": False, "p1": False, "p2": False, "p3": False}
    assert submit.order.count("p1") == 2  # once beside p0, once alone
    # when p1 started again nothing else ran on the GPU
    second = [i for i, name in enumerate(submit.order) if name == "p1"][1]
    assert submit.count_at_start[second] == 1
    assert adm.held["cuda:0"] == []


def test_an_item_failing_alone_too_is_reported_once_retried():
    adm = admission(100)
    calls: list[str] = []

    def always_oom(device: str, item: dict[str, Any]) -> cf.Future[Any]:
        calls.append(item["id"])
        future: cf.Future[Any] = cf.Future()
        future.set_result({"id": item["id"], "oom": True})
        return future

    run = AdmittedRun(items(10), {"cuda:0": 2}, adm, always_oom,
                      retry_alone=lambda _i, f: f.result()["oom"])  # fmt: skip
    assert [f.result()["oom"] for _i, f in run] == [True]
    assert calls == ["p0", "p0"]


def test_an_alone_item_first_in_line_is_not_overtaken():
    adm = admission(100)
    queue = items(10, 10)
    adm.start({"id": "running", "need": 10}, "cuda:0")
    adm.alone(queue[0])
    assert adm.pick(queue, "cuda:0") is None  # p1 would fit, but p0 waits first
    adm.held["cuda:0"].clear()
    assert adm.pick(queue, "cuda:0") == 0  # the GPU is idle: p0 runs, by itself
    adm.start(queue.pop(0), "cuda:0")
    assert adm.pick(queue, "cuda:0") is None


def test_pool_future_carries_results_and_errors():
    class Pool:
        def apply_async(self, fn, args, callback, error_callback):
            try:
                callback(fn(*args))
            except Exception as exc:  # the pool hands errors over
                error_callback(exc)

    assert pool_future(Pool(), json.dumps, [1]).result() == "[1]"
    with pytest.raises(TypeError):
        pool_future(Pool(), json.dumps, object()).result()


def test_without_a_budget_nothing_is_retried():
    adm = admission(None)  # admission off (the CPU, or --memory-share 0): it could not be alone
    submit = Recorder(adm, fail_beside_others={"p1"})
    run = AdmittedRun(items(10, 10), {"cpu": 2}, adm, submit,
                      retry_alone=lambda _i, f: f.result()["oom"])  # fmt: skip
    results = {f.result()["id"]: f.result()["oom"] for _i, f in run}
    assert results == {"p0": False, "p1": True}  # p1 ran beside p0 and is reported as it is
    assert submit.order.count("p1") == 1


def test_an_item_that_may_do_better_alone_reruns_after_the_rest():
    """Its first result is handed on at once; its second run waits until every other item has
    started, then has the GPU to itself (first in line, it would have held up the others)."""
    adm = admission(100)
    submit = Recorder(adm)
    run = AdmittedRun(items(10, 10, 10, 10), {"cuda:0": 2}, adm, submit,
                      rerun_alone_later=lambda item, _f: item["id"] == "p0")  # fmt: skip
    got = ids(run)
    assert sorted(got[:4]) == ["p0", "p1", "p2", "p3"] and got[4] == "p0"
    assert submit.order == ["p0", "p1", "p2", "p3", "p0"]
    assert submit.count_at_start[-1] == 1  # alone
    assert adm.held["cuda:0"] == []


def test_a_rerun_later_happens_once_and_not_without_a_budget():
    adm = admission(100)
    submit = Recorder(adm)
    run = AdmittedRun(items(10), {"cuda:0": 1}, adm, submit,
                      rerun_alone_later=lambda _i, _f: True)  # fmt: skip
    assert ids(run) == ["p0", "p0"]
    cpu = admission(None)
    run = AdmittedRun(items(10), {"cpu": 1}, cpu, Recorder(cpu),
                      rerun_alone_later=lambda _i, _f: True)  # fmt: skip
    assert ids(run) == ["p0"]

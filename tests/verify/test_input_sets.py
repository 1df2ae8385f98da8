"""Input sets drawn in the worker from a per-verification seed (inputs.InputSets)."""

from __future__ import annotations

import json

import torch
from conftest import HERE, task_source

from drtriton.verify import verify
from drtriton.verify.task import fingerprint, load_task

HONEST_ADD_RELU = (HERE / "honest" / "add_relu.py").read_text()

# get_inputs() draws from Python's generator, which make_inputs does not seed: the harness and
# the worker draw different values, and the harness must notice and send the sets as files.
UNREPRODUCIBLE = """
import random
import torch

def fused_operator(x0, x1):
    return torch.relu(torch.add(x0, x1))

def get_inputs():
    return [torch.randn(4, 300) + random.random(), torch.randn(4, 300)]
"""


def test_fingerprint_tells_sets_apart_and_repeats() -> None:
    task = load_task(task_source("add_relu"))
    a = fingerprint(task.make_inputs(0, 11))
    assert a == fingerprint(task.make_inputs(0, 11))
    assert a != fingerprint(task.make_inputs(0, 12))
    assert a != fingerprint(task.make_inputs(1, 11))


def test_fresh_seed_per_verification_and_pinned_seed_reported() -> None:
    first = verify(task_source("add_relu"), HONEST_ADD_RELU)
    second = verify(task_source("add_relu"), HONEST_ADD_RELU)
    assert first.correct and second.correct
    assert first.extra["input_seed"] != second.extra["input_seed"]
    pinned = verify(task_source("add_relu"), HONEST_ADD_RELU, input_seed=5)
    assert pinned.correct and pinned.extra["input_seed"] == 5
    assert "inputs_shipped" not in pinned.extra  # the worker drew the same sets itself


def test_precomputing_cheat_works_only_when_the_seed_is_known() -> None:
    cheat = (HERE / "adversarial" / "precomputed_at_import.py").read_text()
    # With the seed it replays, the cheat is a working one ...
    assert verify(task_source("add_relu"), cheat, input_seed=0).correct
    # ... and a fresh seed, sent only after its import, defeats it.
    assert verify(task_source("add_relu"), cheat).status == "wrong_answer"


def test_a_wrong_answer_names_the_seed_that_draws_its_sets_again() -> None:
    cheat = (HERE / "adversarial" / "precomputed_at_import.py").read_text()
    failed = verify(task_source("add_relu"), cheat)
    assert failed.status == "wrong_answer"
    seed = failed.extra["input_seed"]
    assert seed != 0 and json.loads(failed.to_json())["input_seed"] == seed
    again = verify(task_source("add_relu"), cheat, input_seed=seed)
    assert again.status == "wrong_answer" and again.reason == failed.reason
    # Every verdict past the static rules names its seed, a crash's too.
    broken = (HERE / "adversarial" / "kernel_compile_error.py").read_text()
    crashed = verify(task_source("add_relu"), broken, input_seed=11)
    assert (
        crashed.status in ("runtime_error", "compile_error") and crashed.extra["input_seed"] == 11
    )


def test_unreproducible_inputs_are_sent_as_files() -> None:
    verdict = verify(UNREPRODUCIBLE, HONEST_ADD_RELU, input_seed=3)
    assert verdict.correct, verdict.to_json()
    # Set 2 redraws every float uniformly, which erases the unseeded offset: drawn alike.
    assert verdict.extra["inputs_shipped"] == [0, 1, 3, 4]


def test_make_inputs_on_the_default_device_keeps_cpu_values() -> None:
    task = load_task(task_source("add_relu"))
    plain = task.make_inputs(2, 9)
    explicit = task.make_inputs(2, 9, torch.device("cpu"))
    assert all(torch.equal(x, y) for x, y in zip(plain, explicit, strict=True))

"""The verification's input sets: drawn on the device from one seed, in the harness and in
the worker alike (task.make_inputs), so that large sets never travel as files."""

from __future__ import annotations

import os
import random
from typing import Any

import torch

from drtriton.verify.channel import WorkerChannel
from drtriton.verify.options import Options
from drtriton.verify.precision import mode
from drtriton.verify.references import guard_task, tensor_bytes
from drtriton.verify.task import DISTRIBUTIONS, Task, fingerprint


def fresh_seed() -> int:
    """A verification's input seed when none is pinned (Options.input_seed)."""
    return random.SystemRandom().randrange(1 << 31)


class InputSets:
    """The verification's input sets: drawn on the device from one seed, in both processes.

    The seed is fresh per verification (Options.input_seed pins it): it reaches the worker only
    with each run request, after the candidate's import, so nothing the candidate does at import
    time can precompute its answers. A set whose fingerprint the worker reports differently (a
    task whose get_inputs() draws from another generator) is sent to it as a file instead.
    """

    # Input bytes that the timed sets may occupy together (each process holds its own).
    TIMING_BYTES = 8 << 30

    def __init__(self, task: Task, opts: Options, device: torch.device) -> None:
        self.task, self.device = task, device
        self.mode = mode(opts.precision)  # sets are drawn in its dtype (task.make_inputs)
        self.seed = opts.input_seed if opts.input_seed is not None else fresh_seed()
        self.files: dict[int, str] = {}  # sets sent as files, by index
        self.set_bytes = 0  # tensor bytes of one input set (all sets have the same shapes)

    def make(self, index: int) -> list[Any]:
        values = guard_task(
            lambda: self.task.make_inputs(index, self.seed, self.device, self.mode), self.mode
        )
        self.set_bytes = tensor_bytes(values)
        return values

    def run(self, worker: WorkerChannel, index: int, inputs: list[Any]) -> dict[str, Any]:
        """One poisoned call of the candidate on set `index` (`inputs`: the harness's copy)."""
        output = f"out{index}.pt"
        mine = fingerprint(inputs)
        reply = worker.request({"op": "run", "set": self.spec(index), "output": output})
        if reply.get("fingerprint") == mine:
            return reply
        self.ship(worker, index, inputs)
        return worker.request({"op": "run", "set": self.spec(index), "output": output})

    def spec(self, index: int) -> dict[str, Any]:
        if index in self.files:
            return {"file": self.files[index]}
        return {"index": index, "seed": self.seed}

    def ship(self, worker: WorkerChannel, index: int, inputs: list[Any]) -> None:
        name = f"in{index}.pt"
        torch.save([x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs],
                   os.path.join(worker.workdir, name))  # fmt: skip
        self.files[index] = name

    def timing_count(self, trials: int) -> int:
        """How many sets the timed calls rotate through: all, unless they do not fit."""
        return max(1, min(trials, self.TIMING_BYTES // max(self.set_bytes, 1)))


def distribution(i: int) -> str:
    return DISTRIBUTIONS[i % len(DISTRIBUTIONS)]

"""Rollout rewards from the verifier: correctness and log speed-up, decoupled (DRTriton 4).

The reward never comes from anywhere but the verifier (DESIGN.md "Verification rules"): a
completion without extractable code is judged incorrect without a verifier call, every other one
goes through `drtriton.verify.batch.run_batch` (sandboxed children, several at once).
"""

from __future__ import annotations

import json
import tempfile
import weakref
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol


@dataclass
class Reward:
    correct: bool
    log_speedup: float | None = None  # log(t_torch / t_triton); None without timing (CPU)
    status: str = ""
    reason: str = ""  # the verifier's why, for reading failures (eval samples)


class Verifier(Protocol):
    def judge(self, tasks: list[str], codes: list[str]) -> list[Reward]: ...


class BatchVerifier:
    """Judges (task, candidate) pairs with the sandboxed batch verifier."""

    def __init__(self, device: str = "cpu", timeout: float | None = None,
                 workers: int | None = None, compile_baseline: bool = True,
                 runs: int | None = None, precision: str = "fp32") -> None:  # fmt: skip
        """`runs`: timing rounds per candidate on a GPU at least (None: the verifier's 30).
        The speed reward of a rollout needs less precision than a reported figure, and no
        CUDA-graph times (they are reported, never rewarded: verify/measure.py).
        `precision`: the verifier's mode, the programs' own (drtriton/jsonl.py, run_precision)."""
        from drtriton.verify import Options

        self.opts = Options(device=device, timeout=timeout, compile_baseline=compile_baseline,
                            graph=False, precision=precision)  # fmt: skip
        if runs:
            self.opts.runs = runs
        self.workers = workers
        self.last_distinct = 0  # distinct (task, code) pairs the last judge() verified
        # The batch verifier's harness processes, kept from one judge() to the next (an RL
        # step, an sft-data batch): verify.batch.Pools says what a batch of its own costs.
        self._pools: Any = None
        self._closer: weakref.finalize | None = None

    def close(self) -> None:
        """Stops the harness processes (the next judge() starts them again)."""
        if self._closer is not None:
            self._closer()
        self._pools = self._closer = None

    def _batch_pools(self) -> Any:
        from drtriton.verify.batch import Pools

        if self._pools is None:
            self._pools = Pools(self.opts, self.workers)
            self._closer = weakref.finalize(self, self._pools.close)
        return self._pools

    def judge(self, tasks: list[str], codes: list[str]) -> list[Reward]:
        """One reward per (task, code). Identical pairs (a sharpened policy often samples the
        same answer several times in a group) are verified once and share that verdict: a
        second verification would say the same about correctness, and a second timing would
        only add noise between rollouts that DRPO's speed weights should treat alike."""
        from drtriton.verify.batch import run_batch

        rewards = [Reward(False, None, "no_code") for _ in codes]
        first: dict[tuple[str, str], int] = {}  # (task, code) -> the rollout verified for it
        for i, code in enumerate(codes):
            if code.strip():
                first.setdefault((tasks[i], code), i)
        self.last_distinct = len(first)
        if not first:
            return rewards
        with tempfile.TemporaryDirectory(prefix="drtriton-rl-") as tmp:
            pairs, out = Path(tmp) / "pairs.jsonl", Path(tmp) / "verdicts.jsonl"
            with pairs.open("w") as f:
                for i in first.values():
                    f.write(json.dumps({"id": str(i), "source": tasks[i], "completion": codes[i]}))
                    f.write("\n")
            run_batch(str(pairs), str(out), self.opts, progress=False, pools=self._batch_pools())
            for line in out.read_text().splitlines():
                v = json.loads(line)
                rewards[int(v["id"])] = _reward(v)
        for i, code in enumerate(codes):
            if code.strip():
                rewards[i] = replace(rewards[first[(tasks[i], code)]])
        return rewards


def _reward(verdict: dict) -> Reward:
    import math

    if "error" in verdict:
        return Reward(False, None, "error", str(verdict["error"])[:500])
    speedup = verdict.get("speedup")
    log_speedup = math.log(speedup) if speedup and speedup > 0 else None
    return Reward(
        bool(verdict.get("correct")),
        log_speedup,
        str(verdict.get("status", "")),
        str(verdict.get("reason", ""))[:500],
    )

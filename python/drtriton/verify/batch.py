"""Batch verification for RL and evaluation: `drtriton verify-batch PAIRS.jsonl --out RESULTS.jsonl`.

Input records (DESIGN.md pair records): `id`, the task as `source` (program record) or `task`
(text, or a path to a file), and the candidate as `completion` or `candidate`. Output: one line per
pair, `{"id": ..., **verdict}`; a pair whose task is unusable gets `{"id", "error"}` instead, and
one the harness could not judge for want of GPU memory `{"id", "error", "retry": true}` (redone
on resume).

A task path (one line, no newline) is read relative to the pairs file's folder, so a pairs file
works from any directory; a one-line `.py` name that does not exist there stops the batch before
anything runs (UserError naming the pair), instead of being judged as a task's source text.
A sandbox that cannot start (drtriton.errors.SandboxError) stops it too: it is no pair's fault.

Precision (DESIGN.md "Datasets"): pairs from `teach` and `sft-data` carry the `precision` their
verdict was judged in. The batch verifies in `Options.precision`, which is also the mode of
pairs without the field; a pair stating another mode, or an output holding verdicts of another
mode, stops the batch before anything runs (UserError): one results file must not mix kernels
judged in two modes. `verify-batch` takes the mode from the pairs (pairs_precision) unless
--precision is given.

Resumable: ids already in the output are skipped; each result is appended with a single
`os.write` on an O_APPEND descriptor, so a killed run leaves whole lines only (a torn last line,
possible only if the machine dies mid-write, is ignored on resume and redone).
Parallel: N harness processes (spawned, not forked: CUDA does not survive fork). On a GPU machine
they are split evenly over the visible GPUs, one pool per GPU, so N = number of GPUs gives one
candidate per GPU at a time and timings that do not contend; on the CPU each harness runs one
sandboxed worker at a time. On a GPU a pair starts only while the estimated footprints of the
pairs running there fit in its memory (evaluate/memory.py, as `eval kernelbench` admits
problems; module and functional tasks are read on the meta device): six verifications of one
1.75 GB KernelBench problem at once ran four of five out of GPU memory (h200-2026-12-01-e),
and one of five under the first estimate (h200-2026-12-03-c). A task that cannot be read
there counts as zero, and an idle GPU takes any pair. A pair that runs out of GPU memory
anyway is run once more, alone on its GPU (evaluate/scheduler.py), before it is written as a
retry.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import multiprocessing as mp
import multiprocessing.util as mp_util
import os
import signal
import sys
import types
from collections.abc import Iterator
from typing import Any

from drtriton.errors import ResourceError, UserError
from drtriton.evaluate.scheduler import AdmittedRun, pool_future
from drtriton.files import ends_torn
from drtriton.jsonl import read_jsonl, require_precision, run_precision
from drtriton.verify.harness import Options, Verifier

# This pool process's options and Verifier (its spare worker, the compiled baselines), set by
# the pool's initializer: multiprocessing hands work to a process, not to an object.
_OPTS: Options | None = None
_VERIFIER: Verifier | None = None
# The task file run_batch resolved for a pair (an absolute path), in the record it hands a
# pool process: the process need not guess again whether `task` is a path.
TASK_FILE_KEY = "_task_file"


def _init(opts: Options, device: str | None) -> None:
    global _OPTS, _VERIFIER
    if device is not None:
        opts.device = device
    opts.prewarm = True  # start the next worker while this harness compares outputs
    _OPTS = opts
    _VERIFIER = Verifier()
    # The Verifier's fork server and spare worker stop with this process, and their folders
    # under /tmp go: at a pool's close (multiprocessing runs its Finalize callbacks as a pool
    # process exits) and at its terminate (SIGTERM, which would otherwise end the process
    # before anything ran: each batch of a long sft-data run left a folder per process).
    mp_util.Finalize(_VERIFIER, _VERIFIER.close, exitpriority=10)
    signal.signal(signal.SIGTERM, _stop_on_terminate)


def _stop_on_terminate(signum: int, frame: Any) -> None:
    if _VERIFIER is not None:
        _VERIFIER.close()
    os._exit(128 + signum)


def _one(record: dict[str, Any]) -> str:
    from drtriton.verify.harness import verify

    assert _OPTS is not None
    rid = record["id"]
    try:
        task, candidate = _task_text(record), _candidate_text(record)
        verdict = verify(task, candidate, _OPTS, verifier=_VERIFIER)
        result = {"id": rid, **verdict.to_dict()}
    except UserError as exc:
        result = {"id": rid, "error": str(exc)}
    except ResourceError as exc:  # not judged: a rerun of the batch tries this pair again
        result = {"id": rid, "error": str(exc), "retry": True}
    return json.dumps(result) + "\n"


def _task_text(record: dict[str, Any]) -> str:
    path = record.get(TASK_FILE_KEY)
    if isinstance(path, str):
        try:
            with open(path) as f:
                return f.read()
        except OSError as exc:
            raise UserError(f"cannot read task {path!r}: {exc.strerror}") from None
    text = record.get("source") or record.get("task")
    if not isinstance(text, str):
        raise UserError("the pair has no task (`source` or `task`)")
    return text


def resolve_task(record: dict[str, Any], folder: str) -> dict[str, Any]:
    """`record`, with TASK_FILE_KEY set when its task names a file relative to `folder` (the
    pairs file's) or an absolute one. Raises UserError for a name that looks like a path (one
    line ending in .py) but names no file: judging it as source code would report the user's
    typo as an unusable task, or worse, as the candidate's failure."""
    text = record.get("source") or record.get("task")
    if not isinstance(text, str) or "\n" in text or not text.strip():
        return record
    path = os.path.join(folder, os.path.expanduser(text.strip()))
    if os.path.isfile(path):
        return {**record, TASK_FILE_KEY: os.path.abspath(path)}
    if text.strip().endswith(".py"):
        raise UserError(f"pair {record['id']!r}: no task file {text!r} (looked for {path}; "
                        "relative paths are read from the pairs file's folder)")  # fmt: skip
    return record


def _candidate_text(record: dict[str, Any]) -> str:
    text = record.get("completion", record.get("candidate"))
    if not isinstance(text, str):
        raise UserError("the pair has no candidate (`completion` or `candidate`)")
    return text


def read_pairs(path: str) -> Iterator[dict[str, Any]]:
    return read_jsonl(path, required=("id",), what="pair")


def done_ids(path: str) -> set[str]:
    ids: set[str] = set()
    if not os.path.exists(path):
        return ids
    with open(path) as f:
        for line in f:
            try:
                record = json.loads(line)
                if not record.get("retry"):  # a pair the harness could not judge is redone
                    ids.add(str(record["id"]))
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                continue  # a torn last line: redo that pair
    return ids


def pairs_precision(pairs: str, requested: str | None = None) -> str:
    """The one precision mode of the pairs file `pairs` (jsonl.run_precision): their field,
    `requested` (verify-batch --precision; None: fp32) for pairs without it."""
    return run_precision(list(read_pairs(pairs)), pairs, requested)


def run_batch(pairs: str, out: str, opts: Options, *, workers: int | None = None,
              progress: bool = True, pools: Pools | None = None) -> tuple[int, int]:  # fmt: skip
    """Verifies every pair not yet in `out`, in `opts.precision` (module docstring); returns
    (verified now, results in `out`). `pools`: harness processes kept open by the caller for
    many batches of these options (Pools); None: started for this batch and stopped after."""
    records = list(read_pairs(pairs))
    run_precision(records, pairs, opts.precision)  # a pair of another mode: UserError
    require_precision(out, opts.precision, "verdicts", unstated=None)
    finished = done_ids(out)
    folder = os.path.dirname(os.path.abspath(pairs))
    todo, seen = [], set(finished)
    for record in records:
        key = str(record["id"])
        if key in seen:
            continue
        seen.add(key)
        todo.append(resolve_task(record, folder))
    if todo:  # a sandbox that cannot start fails here, once, not as every pair's verdict
        from drtriton.verify import sandbox

        sandbox.choose(opts.sandbox)
    fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    if ends_torn(out):
        os.write(fd, b"\n")  # close a torn last line so the next result starts a line of its own
    count = 0
    try:
        bar = _bar(len(todo), progress)
        with contextlib.ExitStack() as stack:
            if pools is None:
                pools = stack.enter_context(Pools(opts, workers))
            elif pools.opts != opts:
                raise ValueError("run_batch: the pools were made for other options")
            if todo:
                for _record, future in pools.run(todo):
                    line = future.result()  # a pool's exception (a sandbox that cannot start)
                    os.write(fd, line.encode())
                    count += 1
                    bar.update(1)
        bar.close()
    finally:
        os.close(fd)
    return count, len(finished) + count


class Pools:
    """run_batch's harness processes: one multiprocessing pool per device, each process with
    its Verifier (its fork server, compiled baselines). A caller that verifies many batches
    with the same options keeps one open (rewards.BatchVerifier, for a whole RL run): a batch
    that starts its own pays every process's start (Python, torch, a Verifier, its fork
    server) again, 9.4 s of a 4-pair batch with 2 workers on the 2-core CPU machine, where
    the next batches through kept processes took 0.44-0.50 s (2026-12-06). The processes start
    with the first batch; close it (or use it as a context manager) to stop them."""

    def __init__(self, opts: Options, workers: int | None = None) -> None:
        self.opts = dataclasses.replace(opts)
        gpus = 0
        if opts.on_cuda:
            import torch

            gpus = torch.cuda.device_count()
        if workers is None:
            workers = gpus if opts.on_cuda else max(1, (os.cpu_count() or 2) // 2)
        self.slots = pool_slots(max(1, workers), gpus if opts.on_cuda else 0)
        self._stack = contextlib.ExitStack()
        self.pools: dict[str, Any] = {}  # started by the first batch

    def _start(self) -> None:
        ctx, opts = mp.get_context("spawn"), self.opts
        try:
            for device, size in self.slots.items():
                with _main_not_reimported():
                    pool = ctx.Pool(size, initializer=_init,
                                    initargs=(opts, device if opts.on_cuda else None))  # fmt: skip
                self.pools[device] = self._stack.enter_context(pool)
        except BaseException:
            self._terminate()
            raise

    def _terminate(self) -> None:
        """Stops the processes now (SIGTERM, which they clean up on); a later batch starts
        them again."""
        self._stack.close()
        self.pools = {}

    def run(self, todo: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], Any]]:
        """(record, future of its result line) as each pair finishes; memory admission as in
        the module docstring, afresh for each batch (it knows its pairs by identity)."""
        if not self.pools:
            self._start()
        admission = _admission(list(self.slots), self.opts)

        def submit(device: str, record: dict[str, Any]) -> Any:
            return pool_future(self.pools[device], _one, record)

        # A pair that ran out of GPU memory beside others runs once more, alone.
        yield from AdmittedRun(todo, self.slots, admission, submit, retry_alone=_needs_room)

    def close(self) -> None:
        """Lets each process finish and exit (its Verifier stops its server then)."""
        for pool in self.pools.values():
            pool.close()
        for pool in self.pools.values():
            pool.join()
        self._terminate()  # nothing is left by now

    def __enter__(self) -> Pools:
        return self

    def __exit__(self, exc_type: type | None, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:  # an error or an interrupt: stop now
            self._terminate()


def pool_slots(workers: int, gpus: int) -> dict[str, int]:
    """Harness processes per device: `workers` split evenly over `gpus` CUDA devices (the first
    ones take the remainder, each at least one), or all of them on "cpu" when gpus is 0."""
    if gpus <= 0:
        return {"cpu": workers}
    return {f"cuda:{i}": max(1, workers // gpus + (i < workers % gpus)) for i in range(gpus)}


def _admission(devices: list[str], opts: Options) -> Any:
    # The admission lives in evaluate/ because it imports no torch at module level (the
    # evaluation's --help reads its defaults); this package's __init__ imports torch.
    from drtriton.evaluate import memory

    budgets = memory.gpu_budgets(devices) if opts.on_cuda else {}
    return memory.Admission(budgets, lambda record: _footprint(record, opts.trials))


def _footprint(record: dict[str, Any], trials: int) -> int:
    from drtriton.evaluate import memory

    try:
        return memory.footprint(_task_text(record), trials)
    except UserError:  # an unreadable task is judged (as an error) by its pool process
        return 0


def _needs_room(record: dict[str, Any], future: Any) -> bool:
    """Whether a pair's result says the harness ran out of GPU memory (not judged)."""
    return bool(json.loads(future.result()).get("retry"))


@dataclasses.dataclass
class Tally:
    """What the results file says about a pairs file's pairs (the last line of each id)."""

    pairs: int = 0
    verdicts: int = 0
    errors: int = 0  # the pair is unusable (its task or candidate): not redone on resume
    retries: int = 0  # not judged (the harness ran out of GPU memory): redone on resume

    def summary(self, now: int, out: str) -> str:
        """The closing line of `drtriton verify-batch`, which counts only what it saw."""
        line = f"verify-batch: {now} done now; {self.verdicts} of {self.pairs} pairs have a verdict"
        if self.errors:
            line += f", {self.errors} an error (its `error` field says why)"
        if self.retries:
            line += f", {self.retries} were not judged (run again to retry them)"
        missing = self.pairs - self.verdicts - self.errors - self.retries
        if missing:
            line += f", {missing} no result"
        return f"{line} (results in {out})"

    @property
    def exit_code(self) -> int:
        """0 when every pair has a verdict (rejections included: they are answers), else 2:
        the pairs file needs fixing, or a rerun."""
        return 0 if self.verdicts == self.pairs else 2


def tally(pairs: str, out: str) -> Tally:
    """Counts the results in `out` of the pairs in `pairs`."""
    ids = {str(record["id"]) for record in read_pairs(pairs)}
    last: dict[str, dict[str, Any]] = {}
    if os.path.exists(out):
        with open(out) as f:
            for line in f:
                with contextlib.suppress(json.JSONDecodeError, KeyError, TypeError):
                    record = json.loads(line)
                    if str(record["id"]) in ids:
                        last[str(record["id"])] = record
    counts = Tally(pairs=len(ids))
    for record in last.values():
        if record.get("retry"):
            counts.retries += 1
        elif "error" in record:
            counts.errors += 1
        else:
            counts.verdicts += 1
    return counts


@contextlib.contextmanager
def _main_not_reimported() -> Iterator[None]:
    """Starts spawned children without re-running the caller's __main__ module.

    `spawn` re-imports the parent's main module in every child; `python -m drtriton` has no
    `if __name__ == "__main__"` guard to stop it re-running the command. The pool's work
    (`_init`, `_one`) lives in this importable module, so the children do not need __main__.
    """
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _bar(total: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, unit="cand", desc="verify")

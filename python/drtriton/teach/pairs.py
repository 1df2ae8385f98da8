"""Program records -> pair records (DESIGN.md "Datasets"): the program record plus
`completion` (the teacher's candidate), `variant`, and with verification the verdict's
fields (`status`, `correct`, `reason`, times and speedup on a GPU). A pair the harness could
not judge for want of GPU memory has `error` and `retry: true` instead of a verdict.

Records whose operators the generator cannot emit yet come back with `completion: null`
and `unsupported: [...]` so that callers list them instead of silently dropping them.
With `generic_shapes`, each pair says whether the generic mode applied (`generic_shapes`:
true) or the program kept its specialized candidate (false, and `generic_unsupported`).
Verification runs in a pool of spawned processes (each verify call sandboxes its own
worker), so N programs verify N-wide.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import sys
import types
from collections.abc import Iterable, Iterator
from typing import Any

from drtriton.errors import ResourceError, UserError
from drtriton.teach import emit, generic_unsupported_ops, unsupported_ops, variants

_OPTS: Any = None  # the verify Options of this worker process


def pair_records(
    record: dict[str, Any], k: int, generic_shapes: bool = False
) -> list[dict[str, Any]]:
    """The pair records of one program record: one per variant (ids get `#v<i>` when k > 1)."""
    source = record["source"]
    try:
        missing = unsupported_ops(source)
    except UserError as exc:
        return [{**record, "completion": None, "error": str(exc)}]
    if missing:
        return [{**record, "completion": None, "unsupported": missing}]
    if k <= 1:
        texts = [emit(source, generic_shapes=generic_shapes)]
    else:
        texts = variants(source, k, generic_shapes=generic_shapes)
    extra: dict[str, Any] = {}
    if generic_shapes:
        blockers = generic_unsupported_ops(source)
        extra = {"generic_shapes": not blockers}
        if blockers:
            extra["generic_unsupported"] = blockers
    out = []
    for i, text in enumerate(texts):
        rid = record["id"] if k <= 1 else f"{record['id']}#v{i}"
        out.append({**record, "id": rid, "completion": text, "variant": i, **extra})
    return out


def _init(opts: Any, counter: Any, gpus: int) -> None:
    global _OPTS
    with counter.get_lock():
        index = counter.value
        counter.value += 1
    if opts is not None and opts.on_cuda:
        opts.device = f"cuda:{index % max(gpus, 1)}"
    _OPTS = opts


def _work(job: tuple[dict[str, Any], int, bool]) -> list[dict[str, Any]]:
    record, k, generic_shapes = job
    pairs = pair_records(record, k, generic_shapes)
    if _OPTS is None:
        return pairs
    from drtriton.verify import verify

    for pair in pairs:
        if pair.get("completion") is None:
            continue
        try:
            pair.update(verify(pair["source"], pair["completion"], _OPTS).to_dict())
        except UserError as exc:  # the task itself is unusable
            pair["error"] = str(exc)
        except ResourceError as exc:  # not judged (the harness's GPU memory): callers retry
            pair.update(error=str(exc), retry=True)
    return pairs


@contextlib.contextmanager
def _spawn_safe_main() -> Iterator[None]:
    # Spawned children re-import __main__ unless it looks like an interactive session; a
    # script run as `python script.py` would otherwise run again in every worker.
    main = sys.modules["__main__"]
    if getattr(main, "__file__", None) is None:
        yield
        return
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def make_pairs(
    records: Iterable[dict[str, Any]],
    k: int = 1,
    opts: Any = None,
    workers: int = 1,
    generic_shapes: bool = False,
) -> Iterator[list[dict[str, Any]]]:
    """Yields the pair records of each program record (in completion order when workers
    > 1).  `opts` (drtriton.verify.Options) turns verification on; `generic_shapes` emits
    shape-generic candidates (drtriton.teach)."""
    jobs = ((r, k, generic_shapes) for r in records)
    if workers <= 1:
        _init(opts, mp.Value("i", 0), _gpu_count(opts))
        for job in jobs:
            yield _work(job)
        return
    ctx = mp.get_context("spawn")
    counter = ctx.Value("i", 0)
    with _spawn_safe_main():
        pool = ctx.Pool(workers, initializer=_init, initargs=(opts, counter, _gpu_count(opts)))
    with pool:
        yield from pool.imap_unordered(_work, jobs)


def _gpu_count(opts: Any) -> int:
    if opts is None or not opts.on_cuda:
        return 0
    import torch

    return torch.cuda.device_count()

"""optimize_source: frontend → search per catalog run → ModelNew → final verification.

Cost model (what "fastest" means).  On a GPU every fragment candidate is timed by the
verifier and each operator's PyTorch cost is its measured eager time, so the chosen cover is
the fastest measured one.  On the CPU nothing is timed (Triton's interpreter is not a
performance model): costs are modelled memory traffic in bytes, so a fragment is fused
exactly when it keeps intermediates out of memory (see drtriton.search.search).
"""

from __future__ import annotations

import json
import math
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from drtriton import _core
from drtriton.errors import UserError
from drtriton.frontend import FrontendResult, Line, Run, from_module_source
from drtriton.frontend.lower import BATCH_STATISTICS
from drtriton.optimize import assemble
from drtriton.optimize.allowed import allowed_ops
from drtriton.search.lazy import Calibration

if TYPE_CHECKING:
    from drtriton.verify import Options, Verifier

Progress = Callable[[str], None]


@dataclass
class OptimizeConfig:
    device: str = "cpu"  # "cpu" (interpreter, traffic model) or "cuda[:N]" (measured)
    mode: str = "eval"  # "eval" (a deployment: drtriton optimize) | "train" (KernelBench)
    max_ops: int = 5  # longest fused fragment, in operators (paper: 5)
    k: int = 2  # candidates asked of the policy per fragment
    policy: Any = None  # anything with candidates(task, k); None: the template teacher
    verify_timeout: float | None = None  # seconds per verification; None: the verifier's
    time_budget_s: float | None = None  # stop searching when spent; keep the best so far
    seed: int = 0
    # GPU: a JSON file of the policy's measured/bound ratios shared with other optimizations
    # (search.lazy.Calibration); None: this model's own measurements only.
    calibration_file: str | None = None
    # A JSON-lines file of this optimization's search verdicts (search.VerdictCache), read
    # back when it runs again: a resumed KernelBench problem does not verify its fragments
    # twice.  None: verdicts are kept in memory only.
    verdicts_file: str | None = None
    # Keep the least slow verified kernel when none beats PyTorch (KernelBench's correctness
    # counts any correct kernel); off for a deployment, which should never get slower.
    keep_slower: bool = False
    # Also build and verify kernels that read the batch size at run time (optimize/generic.py:
    # one more export and two to three more verifications), so ModelNew serves any batch; off
    # where only the example shapes are judged (KernelBench's evaluation).
    any_batch: bool = True
    # In training mode, batch norm with batch statistics as the catalog's batch_norm_train,
    # which kernels may compute (fused with its neighbours), instead of an opaque PyTorch call.
    # On an H100 (2026-12-06, results/h100-2026-12-06c, bf16 KernelBench level 2) the six
    # problems with one went, against torch.compile, from 0.40x to 1.07x (L2 73), 0.57x to
    # 0.99x (52), 0.77x to 1.01x (41), 0.37x to 0.62x (11), 0.75x to 0.91x (77), and 0.92x (97).
    # The cost: a CNN's runs no longer end at every batch norm, so ResNet101 becomes one run of
    # 449 operators whose search verifies at most search/lazy.py's MAX_MEASURED fragments,
    # where its runs between batch norms (often repeats, searched once) had that many each.
    batch_norm_kernels: bool = True
    # The verifier's precision mode (verify/precision.py): fp32 (strict), tf32, bf16 or fp16.
    # The search's verifications and the final one judge and time in it; in bf16 and fp16 the
    # teacher's kernels load half operands for tensor-core tl.dot and accumulate in fp32.
    precision: str = "fp32"


@dataclass
class OptimizeResult:
    model_new: str | None = None  # the ModelNew file; None when no kernel made it in
    verdict: dict[str, Any] | None = None  # the verifier's JSON on the module task
    segments: list[dict[str, Any]] = field(default_factory=list)
    frontend: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    # CPU: modelled memory traffic of the original and of ModelNew (_traffic); None on a GPU,
    # where the verdict's measured times say what changed.
    traffic: dict[str, Any] | None = None
    # What the searches' own verifications cost, summed over the runs searched
    # (search.costs_summed; empty when nothing was searched).
    search_costs: dict[str, Any] = field(default_factory=dict)
    # Which shapes ModelNew's kernels serve (optimize/generic.py): "served" in words,
    # "any_batch", "why" not (empty when it does), "checks": the generic text's verdict per batch.
    shapes: dict[str, Any] = field(default_factory=dict)

    @property
    def correct(self) -> bool:
        """A verified ModelNew was kept (the verdict is kept too where one was not: slower)."""
        return bool(self.verdict and self.verdict.get("correct")) and self.model_new is not None

    def report_markdown(self) -> str:
        from drtriton.optimize.report import render

        return render(self)


def _export(code: str, config: OptimizeConfig) -> FrontendResult:
    from drtriton.verify.task import MODULE, task_kind

    if task_kind(code) != MODULE:
        raise UserError("the model file must define Model, get_inputs and get_init_inputs")
    try:
        # Fake inputs: the export and the mapping read shapes only (the same result on every
        # KernelBench dev problem of levels 1-3), and a level-1 input of 1.6G elements took
        # 18 s of random numbers and 6.4 GB of host memory in each optimizing process before.
        return from_module_source(
            code,
            config.seed,
            training=config.mode == "train",
            fake_inputs=True,
            batch_statistics=config.batch_norm_kernels,
        )
    except UserError:
        raise
    except Exception as exc:
        raise UserError(
            f"torch.export could not trace Model ({config.mode} mode): {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}"
        ) from exc


def _frontend_summary(frontend: FrontendResult) -> dict[str, Any]:
    return {
        "n_ops": len(frontend.lines),
        "n_catalog": sum(not line.opaque for line in frontend.lines),
        "opaque_calls": frontend.opaque_calls,
        "fully_mapped": frontend.fully_mapped,
        # forward's Python-number arguments: baked in by torch.export (ModelNew refuses other
        # values), or read at run time as one-element tensors
        "specialized": {k: repr(v) for k, v in frontend.specialized.items()},
        "runtime_scalars": [i.target for i in frontend.inputs if i.kind == "scalar"],
    }


def _search_run(run: Run, config: OptimizeConfig, deadline: float | None,
                calibration: Calibration | None = None) -> Any:  # fmt: skip
    from drtriton.search import SearchConfig, TemplatePolicy, search
    from drtriton.search.search import VerdictCache

    search_config = SearchConfig(
        max_ops=config.max_ops,
        k=config.k,
        device=config.device,
        verify_timeout=config.verify_timeout,
        deadline=deadline,
        keep_slower=config.keep_slower,
        precision=config.precision,
    )
    cache = VerdictCache(config.verdicts_file, _verdicts_context(config))
    return search(run.task, config.policy or TemplatePolicy(), search_config, cache=cache,
                  calibration=calibration)  # fmt: skip


def _verdicts_context(config: OptimizeConfig) -> str:
    """What a stored verdict holds only for (VerdictCache keys it by task and candidate text):
    the device and its GPU, the precision mode and the verification timeout."""
    gpu = ""
    if config.device.startswith("cuda"):
        import torch

        gpu = torch.cuda.get_device_name(torch.device(config.device))
    return json.dumps([config.device, gpu, config.precision, config.verify_timeout])


def _run_segments(k: int, run: Run, found: Any, why: str, on_gpu: bool) -> list[dict[str, Any]]:
    """Report rows for one run: the cover's segments, or the run whole in PyTorch."""
    ops = [line.op or line.call.split("(")[0] for line in run.lines]
    if found is None or found.hybrid is None or not found.hybrid_ok:
        row = {"run": k, "ops": ops, "fused": False, "kernel": None, "why": why}
        tried = _tried(found, ops)
        if tried:
            row["tried"] = tried
        return [row]
    fragments = {(f.start, f.end): f for f in found.fragments}
    rows = []
    fused_index = 0
    for seg in found.cover:
        row: dict[str, Any] = {"run": k, "ops": ops[seg["start"] : seg["end"]]}
        frag = fragments.get((seg["start"], seg["end"]))
        if seg["fused"] and frag is not None:
            row.update(fused=True, kernel=f"r{k}_f{fused_index}_triton_fused_operator")
            row.update(modelled_bytes=frag.modelled, eager_ms=frag.eager_ms)
            op_costs = getattr(found, "op_costs", None)
            if not on_gpu and op_costs:  # the same operators, each in PyTorch
                row["pytorch_bytes"] = sum(op_costs[seg["start"] : seg["end"]])
            row["time_ms"] = frag.cost if on_gpu else None
            fused_index += 1
        else:
            row.update(fused=False, kernel=None, why="PyTorch is as cheap or cheaper here")
        rows.append(row)
    tried = _tried(found, ops)
    if rows and tried:  # what every verified fragment got, the chosen ones and the rest
        rows[0]["tried"] = tried
    return rows


def _tried(found: Any, ops: list[str]) -> list[str]:
    """The fragments the search verified for a run and what each got, one line each."""
    lines = []
    for frag in getattr(found, "fragments", None) or []:
        for outcome in frag.outcomes:
            lines.append(f"{'+'.join(ops[frag.start : frag.end])}: {outcome}")
    return lines


def _kept_results(pieces: list[assemble.Piece], found_by_run: dict[int, Any]) -> set[str]:
    """Results of every line that runs in PyTorch in the assembled forward."""
    kept: set[str] = set()
    for k, piece in enumerate(pieces):
        if piece.hybrid is None:
            kept.update(line.result for line in piece.run.lines)
            continue
        found = found_by_run[k]
        nodes = _core.parse(piece.run.task)[1]["nodes"]
        results = [line.result for line in piece.run.lines]
        in_order = [n["result"] for n in nodes] == results
        for seg in found.cover:
            if not seg["fused"]:
                span = results[seg["start"] : seg["end"]] if in_order else results
                kept.update(span)
    return kept


def _with_hybrid_packets(allow: tuple[str, ...], pieces: list[assemble.Piece],
                         found_by_run: dict[int, Any]) -> tuple[str, ...]:  # fmt: skip
    """`allow` (the kept frontend lines' packets) and those of the kept hybrids' own PyTorch
    lines, which can differ: a concatenation the program spells as padded parts and their sum
    is one torch.cat there (search/hybrid.py, core/search/padded_sums.h)."""
    extra = {p for k, piece in enumerate(pieces) if piece.hybrid is not None
             for p in found_by_run[k].kept_packets}  # fmt: skip
    return tuple(sorted(set(allow) | extra))


def optimize_source(
    code: str, config: OptimizeConfig | None = None, progress: Progress | None = None
) -> OptimizeResult:
    """A KernelBench-format model source → OptimizeResult (see the package docstring).

    Raises UserError for a file that is not a model task, whose own code fails (the file, the
    constructor, get_inputs) or that torch.export cannot trace; any later failure is reported
    in `error`, never raised.
    """
    config = config or OptimizeConfig()
    if config.mode not in ("eval", "train"):
        raise UserError(f"mode must be eval or train, not {config.mode!r}")
    say = progress or (lambda _msg: None)
    start = time.monotonic()
    result = OptimizeResult(config={k: v for k, v in vars(config).items() if k != "policy"})
    deadline = start + config.time_budget_s if config.time_budget_s else None
    frontend = _export(code, config)
    result.frontend = _frontend_summary(frontend)
    say(f"frontend: {result.frontend['n_catalog']} of {result.frontend['n_ops']} operators "
        "map to the catalog")  # fmt: skip
    try:
        from drtriton.verify import Verifier

        with Verifier() as final:  # the final verification's: it keeps the compiled baseline
            _optimize(code, config, frontend, result, deadline, say, final)
    except UserError as exc:
        result.error = str(exc)
    except Exception as exc:  # a bug or a torch failure: a result, not a traceback
        result.error = f"{type(exc).__name__}: {exc}"
        result.config["traceback"] = traceback.format_exc(limit=8)
    result.seconds = round(time.monotonic() - start, 2)
    return result


def _optimize(
    code: str,
    config: OptimizeConfig,
    frontend: FrontendResult,
    result: OptimizeResult,
    deadline: float | None,
    say: Progress,
    final: Verifier,
) -> None:
    runs = frontend.runs()
    pieces: list[assemble.Piece] = []
    found_by_run: dict[int, Any] = {}
    searchable = sum(run.task is not None for run in runs)
    if deadline is not None and searchable and config.device.startswith("cuda"):
        _compile_baseline_first(code, config, final, say)
    done = 0
    # What the policy's kernels achieve: across this model's runs, and other models' with a file.
    calibration = Calibration(path=config.calibration_file)
    # A run whose task is another run's under other names (an unrolled RNN repeats one cell
    # hundreds of times) takes that run's result: same inputs in the same order, so the same
    # hybrid serves both, and assemble emits its kernels once.
    searched: dict[str, tuple[int, Any]] = {}
    costs: list[dict[str, Any]] = []  # each search verification's cost (result.search_costs)
    for k, run in enumerate(runs):
        piece = assemble.Piece(run)
        why = _opaque_why(run.lines[0]) if run.lines[0].opaque else "no task for this run"
        if run.task is not None:
            if deadline is not None and time.monotonic() > deadline:
                why = "the time budget was spent before this run"
            else:
                done += 1
                key = _core.parse(run.task)[1]["canonical_key"]
                if key in searched:
                    first, found = searched[key]
                    say(f"search {done}/{searchable}: the program of search {first}, reused")
                else:
                    say(f"search {done}/{searchable}: {', '.join(str(x.op) for x in run.lines)}")
                    found = _search_run(run, config, deadline, calibration)
                    searched[key] = (done, found)
                    costs += getattr(found, "verification_costs", [])
                    tried = sum(len(f.outcomes) for f in getattr(found, "fragments", []))
                    say(f"search {done}/{searchable} done: {tried} candidates verified, "
                        f"hybrid {'kept' if found.hybrid_ok else 'none'}, operator costs "
                        f"timed in {getattr(found, 'op_costs_s', 0.0):.1f} s")  # fmt: skip
                found_by_run[k] = found
                if found.hybrid is not None and found.hybrid_ok:
                    piece.hybrid = found.hybrid
                elif found.hybrid is not None:
                    why = f"the stitched hybrid failed its check: {found.hybrid_reason}"
                else:
                    why = "no fused fragment beat PyTorch"
        pieces.append(piece)
        on_gpu = config.device.startswith("cuda")
        result.segments += _run_segments(k, run, found_by_run.get(k), why, on_gpu)
    if costs:
        from drtriton.search.search import costs_summed

        result.search_costs = costs_summed(costs)
    if not config.device.startswith("cuda"):
        result.traffic = _traffic(pieces, found_by_run, len(frontend.lines))
    if not any(p.hybrid for p in pieces):
        result.error = "no Triton kernel: every operator stayed in PyTorch (see segments)"
        return
    model = _load_model(code, config)
    attributes = assemble.module_attributes(model)
    serving = _serving(model, code, frontend, config)
    kept = _kept_results(pieces, found_by_run)
    allow = allowed_ops(frontend, kept, _probe_device(config), config.precision)
    allow = _with_hybrid_packets(allow, pieces, found_by_run)
    generic = _any_batch(code, frontend, pieces, found_by_run, attributes, serving, allow,
                         config, deadline, say, final)  # fmt: skip
    result.shapes = {"served": (generic.serving or serving).shapes(), "why": generic.why,
                     "any_batch": generic.model_new is not None, "checks": generic.checks}  # fmt: skip
    if generic.model_new is not None:
        result.model_new, result.verdict = generic.model_new, generic.verdict
        return
    result.model_new = assemble.model_new(code, frontend, pieces, attributes, serving)
    say(f"verify ModelNew ({len(allow)} ATen operators left in PyTorch)")
    result.verdict = _final_verdict(code, result.model_new, allow, config, final)
    say(f"verified: {result.verdict.get('status')}")
    slower = _slower_than_eager(result.verdict, config)
    if slower:
        result.error, result.model_new = slower, None


def _opaque_why(line: Line) -> str:
    """Why an opaque run stays in PyTorch: the reason the frontend recorded on its line (batch
    norm with batch statistics, which the catalog has but optimize leaves to PyTorch with
    --no-batch-norm-kernels), or else its operator is not in the catalog."""
    if line.reason == BATCH_STATISTICS:
        return f"{line.reason} (--no-batch-norm-kernels)"
    return line.reason or "not in the operator catalog"


def _slower_than_eager(verdict: dict[str, Any], config: OptimizeConfig) -> str | None:
    """Why a correct ModelNew is not handed back: on a GPU, without keep_slower, it ran slower
    than Model's own eager forward.  Each fragment beat the operators it replaces, but those
    are the export's, and the kept ones can be slower than the module they came from: on the
    H200 (2026-12-04) KernelBench L3 28 and 32, transformers whose nn.MultiheadAttention
    exports as matmuls, softmax and views, came out at 0.71x and 0.75x eager."""
    if not config.device.startswith("cuda") or config.keep_slower:
        return None
    speedup, ms, eager = (verdict.get(k) for k in ("speedup", "time_ms", "eager_ms"))
    if not verdict.get("correct") or speedup is None or speedup >= 1.0:
        return None
    return (f"ModelNew was correct but slower than Model's eager forward ({ms:.4g} ms against "
            f"{eager:.4g} ms, {speedup:.2f}x), so none is kept (--keep-slower keeps it)")  # fmt: skip


def _compile_baseline_first(
    code: str, config: OptimizeConfig, final: Verifier, say: Progress
) -> None:
    """torch.compile of the whole model, for the final verification, before the search: under
    a deadline the search then ends where it would have, and the final verification starts
    with its baseline compiled.  Compiled after the search (as before), it was the part of the
    final verification that did not fit: on the H200 (2026-12-04, 240 s a problem, the search
    given half) ResNet101, GoogleNet and DenseNet201 timed out there.  A failure here is not
    the model's: the final verification compiles it again and reports what it finds."""
    try:
        seconds = final.compile_baseline(code, _final_options(config, ()))
    except UserError:
        raise
    except Exception as exc:
        say(f"torch.compile of the whole model failed before the search: {type(exc).__name__}")
        return
    if seconds:
        say(f"torch.compile of the whole model, for the final verification: {seconds:.1f} s")


def _any_batch(code: str, frontend: FrontendResult, pieces: list[assemble.Piece],
               found_by_run: dict[int, Any], attributes: set[str], serving: Any,
               allow: tuple[str, ...], config: OptimizeConfig, deadline: float | None,
               say: Progress, final: Verifier) -> Any:  # fmt: skip
    """ModelNew for any batch (optimize/generic.py) where its checks pass; else a Generic
    that says why not, and the example-shape ModelNew is built and verified as before."""
    from drtriton.optimize import generic

    if not config.any_batch:
        return generic.Generic(why="the example shapes only were asked for")
    if deadline is not None and time.monotonic() > deadline:
        return generic.Generic(why="the time budget was spent before the generic kernels")
    # A deployment never gets slower than eager for the sake of other batch sizes: where the
    # generic kernels lose at the example batch, the searched (measured) ones stay.
    faster = config.device.startswith("cuda") and not config.keep_slower
    options = {"max_ops": config.max_ops, "k": config.k, "seed": config.seed,
               "training": config.mode == "train", "min_speedup": 1.0 if faster else None,
               "batch_statistics": config.batch_norm_kernels}  # fmt: skip

    def judge(task: str, text: str, batch: int) -> dict[str, Any]:
        say(f"verify the generic ModelNew at batch {batch} ({len(allow)} ATen operators left "
            "in PyTorch)")  # fmt: skip
        verdict = _final_verdict(task, text, allow, config, final)
        say(f"verified: {verdict.get('status')}")
        return verdict

    try:
        return generic.attempt(code, frontend, pieces, found_by_run, attributes, serving,
                               options, judge)  # fmt: skip
    except Exception as exc:  # a bug there must not cost the example-shape ModelNew
        return generic.Generic(why=f"the generic attempt failed: {type(exc).__name__}: {exc}")


def _serving(model: Any, code: str, frontend: Any, config: OptimizeConfig) -> Any:
    """What ModelNew's kernels serve (optimize/serving.py): the user's argument names, the
    example shapes, and the optimization's mode when the model's output depends on it."""
    from drtriton.optimize import serving
    from drtriton.verify.precision import mode

    names = serving.user_arguments(model, assemble.signature(frontend))
    training = config.mode == "train" if serving.mode_dependent(model, code) else None
    m = mode(config.precision)  # the kernels were verified on inputs cast to its dtype
    return assemble.serving_of(frontend, names, training, m.dtype if m.casts else None)


def _traffic(pieces: list[assemble.Piece], found_by_run: dict[int, Any], n_ops: int
             ) -> dict[str, Any]:  # fmt: skip
    """Modelled bytes moved by the searched runs, all in PyTorch (each operator's unfused
    traffic) and as ModelNew runs them (the cover's cost where its hybrid is used). Runs the
    search never modelled (operators outside the catalog) are left out of both sides."""
    before = after = 0.0
    ops = 0
    for k, piece in enumerate(pieces):
        found = found_by_run.get(k)
        if found is None or not math.isfinite(found.pytorch_cost):
            continue
        before += found.pytorch_cost
        after += found.cost if piece.hybrid is not None else found.pytorch_cost
        ops += len(piece.run.lines)
    return {"before_bytes": before, "after_bytes": after, "ops_counted": ops, "ops": n_ops}


def _probe_device(config: OptimizeConfig) -> str:
    return config.device if config.device.startswith("cuda") else "cpu"


def _load_model(code: str, config: OptimizeConfig) -> Any:
    from drtriton.frontend.export import load_module_task

    return load_module_task(code, config.seed, config.mode == "train", inputs=False).model


def _final_options(config: OptimizeConfig, allow: tuple[str, ...]) -> Options:
    from drtriton.verify import Options

    return Options(
        device=config.device,
        allow_torch=allow,
        eval_mode=config.mode == "eval",
        timeout=config.verify_timeout,
        seed=config.seed,
        precision=config.precision,
    )


def _final_verdict(
    code: str, model_new: str, allow: tuple[str, ...], config: OptimizeConfig, final: Verifier
) -> dict[str, Any]:
    import json

    from drtriton.verify import verify

    opts = _final_options(config, allow)
    verdict = json.loads(verify(code, model_new, opts, verifier=final).to_json())
    verdict["allowed_torch"] = list(allow)
    return verdict

"""The harness: the parent side of one verification. It never imports the candidate.

Order of work (cheap rejections first):
1. static checks (static.py) on the candidate text, up to a drop-in wrapper's marker (dropin.py:
   nothing after it is judged or run);
2. spawn the sandboxed worker (channel.py; it imports torch while the harness works on step 3);
3. load the task, draw `trials` fresh input sets (inputs.py), compute the references here on
   pristine copies (references.py), and record which copy operators the task itself uses
   (those are poisoned too);
4. load the candidate in the worker; a compile pass (compile_pass.py: the kernels compile, no
   GPU work); one poisoned call per input set, outputs compared here;
5. on a GPU: time the candidate, eager and torch.compile in interleaved rounds (measure.py).
The verdict is built here from what the harness measured itself; the worker's replies only
carry what it was asked for, and a worker that dies, hangs or answers nonsense is a verdict.

GPU work holds the GPU's lock (gpu_lock.py): shared around everything but the timed rounds,
which hold it exclusively, and the first call of a candidate with `@triton.autotune`, which
times its configs (also exclusive: static.autotunes says why); nothing a verification runs on
the GPU is outside a hold, and no file work is inside one (the worker's outputs are written
and read between holds). What is kept between verifications lives in a `Verifier` (the fork
server or a spare worker, the compiled baselines); `verify()` without one uses a fresh one.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
import weakref
from typing import Any

import torch

from drtriton.errors import ResourceError, SandboxError
from drtriton.verify import compare as cmp
from drtriton.verify import gpu_lock, sandbox, static
from drtriton.verify.baselines import Baselines
from drtriton.verify.channel import CANDIDATE_FILE, TASK_FILE, Rejected, WorkerChannel, worker_env
from drtriton.verify.dropin import verified_part
from drtriton.verify.forking import ForkFailed, ForkServer, ForkUnsupported
from drtriton.verify.inputs import InputSets, distribution, fresh_seed
from drtriton.verify.measure import Timing
from drtriton.verify.options import Options
from drtriton.verify.precision import mode
from drtriton.verify.references import References, fetch_output, guard_task, onto
from drtriton.verify.task import FUNCTIONAL, load_task, task_kind
from drtriton.verify.verdict import Verdict

__all__ = ["Options", "Verifier", "verify"]


class Verifier:
    """Verifications in one process that share what is worth keeping between them: per
    configuration, the fork server its workers are forked from (Options.fork_server, under the
    sandboxes that have one: zygote.py) or else a started, unused worker (Options.prewarm: the
    next verification skips the worker's start-up, about 3 s of Python, torch and triton
    imports on the CPU CI machine); and the compiled torch.compile baseline of each task
    (baselines.py). Each worker serves exactly one candidate. Close the Verifier (or use it as
    a context manager) to stop the servers and spares."""

    def __init__(self) -> None:
        self.spares: dict[tuple[Any, ...], WorkerChannel] = {}
        self.servers: dict[tuple[Any, ...], ForkServer] = {}  # Options.fork_server
        # Configurations whose server's CUDA check failed (zygote.py), and why: their workers
        # start one sandbox each, as with fork_server off.
        self.unforkable: dict[tuple[Any, ...], str] = {}
        self.baselines = Baselines()
        # Also at exit, for a Verifier nobody closed (a spare's worker exits by itself when
        # its pipe closes with this process, but its private directory would stay).
        weakref.finalize(self, _stop_spares, self.spares, self.servers)

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        _stop_spares(self.spares, self.servers)

    def verify(self, task_source: str, candidate_source: str, options: Options | None = None,
               **kwargs: Any) -> Verdict:  # fmt: skip
        """Judges `candidate_source` against `task_source`. Keyword arguments override
        Options fields (on a copy).

        Raises drtriton.errors.UserError when the task itself is unusable, and ResourceError
        when the harness runs out of GPU memory (nothing was judged: retry); anything the
        candidate does is a verdict."""
        opts = dataclasses.replace(options or Options())
        for key, value in kwargs.items():
            assert hasattr(opts, key), f"unknown option {key!r}"
            setattr(opts, key, value)
        mode(opts.precision)  # an unknown mode is a UserError before anything runs
        start, lock_before = time.monotonic(), gpu_lock.totals()
        original, judged = candidate_source, verified_part(candidate_source)  # a drop-in
        # wrapper after the marker (verify/dropin.py) is neither judged nor run
        early = _static_verdict(task_source, judged, opts)
        if early is not None:
            early.precision = opts.precision
            return early
        candidate_source = judged
        # Drawn here, in the harness, so that every verdict below names the seed that draws its
        # input sets again (the worker still sees it only with each run request).
        if opts.input_seed is None:
            opts.input_seed = fresh_seed()
        level = sandbox.choose(opts.sandbox)
        if opts.on_cuda:  # this verification's own peak (a pooled harness verifies many)
            _reset_peak_memory(opts.device)
        forks = (opts.fork_server and level in sandbox.FORKING_LEVELS
                 and _spare_key(opts, level) not in self.unforkable)  # fmt: skip
        worker = self._forked_worker(opts, level) if forks else None
        forks = worker is not None  # False where the server's CUDA check failed just now
        worker = worker or self._take_spare(opts, level) or WorkerChannel(opts, level)
        # From here: a fork server's start (once per harness process) is not the candidate's.
        worker.deadline = time.monotonic() + opts.wall_limit()
        if opts.prewarm and not forks:  # the next worker imports torch while this one runs
            self.spares[_spare_key(opts, level)] = WorkerChannel(opts, level)
        try:
            with open(os.path.join(worker.workdir, CANDIDATE_FILE), "w") as f:
                f.write(candidate_source)
            verdict = _Judgement(
                worker,
                task_source,
                opts,
                self.baselines,
                start,
                autotuned=static.autotunes(candidate_source),
            ).run()
        except Rejected as rejected:
            verdict = Verdict(**rejected.kwargs)
        except RuntimeError as exc:  # raised here, in the harness: the worker's are replies
            if not _out_of_memory(exc):
                raise
            raise ResourceError(
                f"the harness ran out of GPU memory: {str(exc).splitlines()[0]}"
            ) from None
        finally:
            worker.close()
            if forks and opts.prewarm:  # a server this candidate killed: its successor's
                self._server(opts, level)  # imports run while the harness finishes this one
            if opts.on_cuda:
                peak = torch.cuda.max_memory_reserved(opts.device)
                peak_gb = {"harness": round(peak / 1e9, 3),
                           "worker": round(worker.peak_bytes / 1e9, 3)}  # fmt: skip
                # A long-lived harness (a pool of them shares a GPU) would otherwise keep the
                # cached blocks of its largest task's reference: 13-25 GB per process in the
                # 2026-11-30 teacher run, until a sixth process could not allocate a timing buffer.
                torch.cuda.empty_cache()
        verdict.sandbox = level
        verdict.extra["forked"] = forks  # from the fork server (zygote.py), or a sandbox of its own
        verdict.precision = opts.precision
        if len(judged) < len(original):
            verdict.extra["judged_chars"] = len(judged)  # the text before the drop-in marker
        verdict.extra["input_seed"] = opts.input_seed  # `drtriton verify --input-seed` replays
        verdict.extra["wall_s"] = round(time.monotonic() - start, 3)
        verdict.extra["request_s"] = {op: round(s, 3) for op, s in worker.request_s.items()}
        if opts.on_cuda:  # reserved by the caching allocators, CUDA contexts not included
            verdict.extra["peak_gb"] = peak_gb
        # What sharing the GPU cost this verification (the evaluation's throughput figures).
        lock_after = gpu_lock.totals()
        verdict.extra["lock_wait_s"] = round(lock_after["wait_s"] - lock_before["wait_s"], 3)
        verdict.extra["exclusive_s"] = round(
            lock_after["exclusive_s"] - lock_before["exclusive_s"], 3
        )
        return verdict

    def compile_baseline(self, task_source: str, options: Options | None = None) -> float:
        """Compiles the task's torch.compile baseline now, as a verification of the task would
        when it times it (baselines.py: same reference, input set 0, precision mode and lock
        protocol), and keeps it for this Verifier's later verifications of that task. Returns
        the seconds it took: 0.0 where a verification would compile none (on the CPU, or with
        `baselines` or `compile_baseline` off) or this Verifier has it already.

        Why: a caller that will verify a large task later, under a deadline, can pay the
        compilation first. On the H200 (2026-12-04, six KernelBench problems at once, 240 s
        each) ResNet101, GoogleNet and DenseNet201 timed out in their final verification,
        whose first part is torch.compile of the whole model in training mode (ResNet101's
        had 97 s left after its search and did not finish).

        Raises drtriton.errors.UserError when the task itself is unusable."""
        opts = options or Options()
        if not (opts.on_cuda and opts.baselines and opts.compile_baseline):
            return 0.0
        began = time.monotonic()
        device, task = torch.device(opts.device), load_task(task_source)
        precision = mode(opts.precision)
        if self.baselines.has(task.source, opts.device, opts.eval_mode, precision):
            return 0.0
        if device.index is not None:
            torch.cuda.set_device(device)
        with torch.no_grad(), gpu_lock.hold(opts.device, gpu_lock.SHARED):
            reference = _reference(task, opts, device, precision)
            first = InputSets(task, opts, device).make(0)
            self.baselines.compiled(task.source, reference, first, opts.device, opts.eval_mode,
                                    precision)  # fmt: skip
        del first
        torch.cuda.empty_cache()
        return time.monotonic() - began

    def _server(self, opts: Options, level: str) -> ForkServer:
        """This configuration's fork server, started anew when the last one has ended."""
        key = _spare_key(opts, level)
        server = self.servers.get(key)
        if server is None or not server.alive():
            if server is not None:
                server.stop()
            gpu = opts.device if opts.on_cuda else None
            server = self.servers[key] = ForkServer(
                level, lambda inside: worker_env(opts, inside, -1, -1), gpu
            )
        return server

    def _forked_worker(self, opts: Options, level: str) -> WorkerChannel | None:
        """A worker forked from this configuration's server; a server that no longer forks
        (its last candidate stopped or killed it) is replaced once. None when the server's
        CUDA check fails (said once on stderr). Raises SandboxError when a fresh server cannot
        start."""
        key = _spare_key(opts, level)
        for attempt in range(2):
            server = self._server(opts, level)
            try:
                return WorkerChannel(opts, level, server=server)
            except ForkUnsupported as refusal:
                self.servers.pop(key, None)
                self.unforkable[key] = str(refusal)
                sys.stderr.write(f"drtriton verify: no fork server, one sandbox per worker: "
                                 f"{refusal}\n")  # fmt: skip
                return None
            except ForkFailed:
                tail = server.process.log_tail(800)  # before stop(), which removes the log
                server.stop()
                if attempt:
                    raise SandboxError("the verifier's fork server stopped answering twice; "
                                       f"its log: {tail}") from None  # fmt: skip
        raise AssertionError("unreachable")

    def _take_spare(self, opts: Options, level: str) -> WorkerChannel | None:
        worker = self.spares.pop(_spare_key(opts, level), None)
        if worker is not None and not worker.alive():
            worker.kill()
            return None
        return worker


def verify(task_source: str, candidate_source: str, options: Options | None = None, *,
           verifier: Verifier | None = None, **kwargs: Any) -> Verdict:  # fmt: skip
    """Judges `candidate_source` against `task_source` (Verifier.verify). Without a `verifier`
    a fresh one judges it, and prewarm is off (its spare would be stopped unused)."""
    if verifier is not None:
        return verifier.verify(task_source, candidate_source, options, **kwargs)
    with Verifier() as fresh:
        return fresh.verify(task_source, candidate_source, options, **{**kwargs, "prewarm": False})


def _reference(task: Any, opts: Options, device: torch.device, precision: Any) -> Any:
    """The task's reference on `device`, as a verification judges and times against it (and
    Verifier.compile_baseline compiles it)."""
    return guard_task(lambda: task.build_reference(device, opts.seed, opts.eval_mode, precision))


def _out_of_memory(exc: RuntimeError) -> bool:
    """torch.OutOfMemoryError, or the AcceleratorError a CUDA call other than an allocation
    raises when memory runs out (on the H200, 2026-12-04, creating the timing's capture stream
    beside five teacher processes: it ended the whole teacher run instead of one program)."""
    return isinstance(exc, torch.OutOfMemoryError) or "out of memory" in str(exc)


def _reset_peak_memory(device: str) -> None:
    """Starts `device`'s reserved-memory peak afresh. Only once CUDA is initialized: before,
    nothing is reserved, and torch's reset raises ("Invalid device argument: did you call
    init?"), which failed a pooled harness's first verification on the H200 (2026-12-03)."""
    if torch.cuda.is_initialized():
        torch.cuda.reset_peak_memory_stats(device)


def _stop_spares(spares: dict[tuple[Any, ...], WorkerChannel],
                 servers: dict[tuple[Any, ...], ForkServer]) -> None:  # fmt: skip
    while spares:
        spares.popitem()[1].kill()
    while servers:
        servers.popitem()[1].stop()


def _spare_key(opts: Options, level: str) -> tuple[Any, ...]:
    return (opts.device, level, opts.wall_limit(), opts.memory_gb,
            repr(sorted(opts.extra_env.items())))  # fmt: skip


def _static_verdict(task_source: str, candidate_source: str, opts: Options) -> Verdict | None:
    """The verdict of the static rules, or None when the candidate passes them."""
    kind = task_kind(task_source)
    entry = "triton_fused_operator" if kind == FUNCTIONAL else "ModelNew"
    issues = static.check_source(candidate_source, entry) if opts.static_checks else []
    if issues:
        first = issues[0]
        return Verdict(first.status, reason=first.reason(), line=first.line)
    if kind == FUNCTIONAL:
        want = static.entry_signature(task_source, "fused_operator")
        got = static.entry_signature(candidate_source, "triton_fused_operator")
        if got is not None and want is not None and len(got) != len(want):
            return Verdict("compile_error", reason=f"triton_fused_operator takes {len(got)} "
                           f"parameters, fused_operator takes {len(want)}")  # fmt: skip
    return None


class _Judgement:
    """Steps 3-5 of one verification (the module docstring), over a started worker."""

    def __init__(self, worker: WorkerChannel, task_source: str, opts: Options,
                 baselines: Baselines, start: float, *, autotuned: bool = False) -> None:  # fmt: skip
        self.worker, self.opts, self.baselines, self.start = worker, opts, baselines, start
        # Triton's autotuner times the configs at the first call and keeps the fastest (on
        # disk too, with cache_results): beside other processes' GPU work that choice is a
        # draw.  H200, 2026-12-03, two processes sharing the GPU, trial 0 held shared:
        # KernelBench L1 62's conv ran 5.07 ms on the tile chosen, where its first tile alone
        # (the session before, no autotuning) ran 3.86 ms and L1 80 (nearly its shape) 3.30.
        # So trial 0 of such a candidate holds the GPU exclusively.
        self.autotuned = autotuned
        self.device = torch.device(opts.device)
        if opts.on_cuda and self.device.index is not None:
            torch.cuda.set_device(self.device)
        self.task = load_task(task_source)
        self.mode = mode(opts.precision)
        self.inputs = InputSets(self.task, opts, self.device)

    def lock(self, mode: str = gpu_lock.SHARED) -> Any:
        return self.worker.hold(self.opts.device, mode)

    def run(self) -> Verdict:
        opts, worker, task = self.opts, self.worker, self.task
        with self.lock():  # not while waiting for the worker: that would hold timings back
            reference = _reference(task, opts, self.device, self.mode)
            first = self.inputs.make(0)
            references = References(reference, self.device, opts.envelope_max_gb, self.mode,
                                    envelope_host_max_gb=opts.envelope_host_max_gb)  # fmt: skip
            refs = [references(first, redraw=lambda: self.inputs.make(0))]
        with open(os.path.join(worker.workdir, TASK_FILE), "w") as f:
            f.write(task.source)
        worker.request(None)  # the worker's "ready" line
        ready = time.monotonic()
        with self.lock():  # ModelNew's construction and parameters go to the GPU
            worker.request(self._load_request(reference, references.copies))
        # No lock: the pass does no GPU work, and compiling under one would stall timings.
        warm = worker.request({"op": "warm", "set": self.inputs.spec(0)})
        call_s = 0.0
        # One shared hold per trial compares the previous trial's output, then draws and runs
        # this one (and a last hold compares the last): each hold is one more wait behind any
        # timing queued meanwhile, and on the H200 a fragment's verification spent 3-24 s of
        # its 17-45 s in such waits (2026-12-01).
        previous: tuple[int, Any] | None = None  # (trial, its output), not yet compared
        for i in range(opts.trials + 1):
            alone = i == 0 and self.autotuned
            with self.lock(gpu_lock.EXCLUSIVE if alone else gpu_lock.SHARED):
                if previous is not None:
                    done, out = previous
                    previous = None
                    with worker.harness_work():
                        problem = cmp.judge(onto(out, self.device), refs[done],
                                            *opts.tolerances())  # fmt: skip
                    del out
                    if problem:
                        reason = f"input set {done} ({distribution(done)}): {problem}"
                        return Verdict("wrong_answer", reason=reason, trials=done)
                if i == opts.trials:
                    break
                if i == 0:  # set 0 was drawn first (its reference names the poisoned copies)
                    current, first = first, None
                else:
                    with worker.harness_work():
                        current = self.inputs.make(i)
                        refs.append(references(current, redraw=lambda i=i: self.inputs.make(i)))
                reply = self.inputs.run(worker, i, current)
                del current
            call_s += float(reply.get("call_s", 0.0))
            previous = (i, fetch_output(worker, f"out{i}.pt"))  # file work: no lock
        verdict = Verdict("correct", reason=f"{opts.trials} input sets match", trials=opts.trials)
        relative = sum(ref.by_baseline_error for ref in refs)
        if relative:  # compare._less_exact_than_baseline: said in the verdict, never silent
            verdict.reason += (f" ({relative} only as no less exact than eager {self.mode.name},"
                               " itself outside the tolerance there)")  # fmt: skip
            verdict.extra["baseline_error_sets"] = relative
        self._diagnostics(verdict, ready, call_s, warm)
        if opts.on_cuda:
            Timing(worker, task, reference, self.inputs, refs, opts, self.baselines,
                   references.seen or set()).run(verdict)  # fmt: skip
        return verdict

    def _load_request(self, reference: Any, copies: set[str]) -> dict[str, Any]:
        task = self.task
        load = {"op": "load", "candidate": CANDIDATE_FILE, "task": TASK_FILE, "kind": task.kind,
                "device": "cuda" if self.opts.on_cuda else "cpu",  # it sees only its GPU
                "poisoned_copies": sorted(copies), "allow_torch": sorted(self.opts.allow_torch),
                "eval": self.opts.eval_mode, "precision": self.mode.name}  # fmt: skip
        if task.kind != FUNCTIONAL:
            init = {"seed": self.opts.seed, "init_inputs": task.init_inputs(self.mode),
                    "params": [p.detach().cpu() for p in reference.parameters()],
                    "buffers": [b.detach().cpu() for b in reference.buffers()]}  # fmt: skip
            torch.save(init, os.path.join(self.worker.workdir, "init.pt"))
            load["init"] = "init.pt"
        return load

    def _diagnostics(self, verdict: Verdict, ready: float, call_s: float,
                     warm: dict[str, Any]) -> None:  # fmt: skip
        """For the throughput benchmark: when the worker was ready (since the harness started),
        the seconds inside the candidate's calls (as the worker timed them), the compile pass."""
        verdict.extra["worker_ready_s"] = round(max(0.0, ready - self.start), 3)
        verdict.extra["candidate_s"] = round(call_s, 4)
        verdict.extra["compile_pass_s"] = warm.get("seconds")
        if not warm.get("complete"):
            verdict.extra["compile_pass"] = str(warm.get("reason", ""))[:300]
        if self.inputs.files:
            verdict.extra["inputs_shipped"] = sorted(self.inputs.files)
        if self.opts.allow_torch:
            verdict.extra["allowed_torch"] = sorted(self.opts.allow_torch)

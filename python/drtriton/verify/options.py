"""How one verification runs: every setting of the verifier, each with its one default."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Options:
    """How one verification runs. Defaults follow DESIGN.md."""

    device: str = "cpu"  # "cpu" (Triton interpreter, correctness only) or "cuda[:N]"
    trials: int = 5  # fresh input sets for correctness (DESIGN.md: five)
    timeout: float | None = (
        None  # wall-clock seconds for the whole candidate; None: 120 cpu, 300 cuda
    )
    # Precision mode (precision.py, MODES): fp32 (strict, the default), tf32, bf16 or fp16.
    # Inputs, parameters and buffers are cast to the mode's dtype; the reference, the worker
    # and the baselines all run in it; its tolerance is the default of atol and rtol.
    precision: str = "fp32"
    # None: the mode's tolerance (precision.MODES: fp32 1e-4, the others 1e-2); in fp32 each
    # output's dtype picks it (compare.DEFAULT_TOLERANCE: a task's own fp16 outputs get 1e-2).
    atol: float | None = None
    rtol: float | None = None
    seed: int = 0  # seed of module initialisation (Model and ModelNew)
    # Seed of the input sets; None: drawn afresh for each verification (so a candidate cannot
    # precompute answers at import time), and reported in the verdict's extra "input_seed".
    input_seed: int | None = None
    sandbox: str = "auto"  # auto | bwrap | unshare | none
    # GPU timing (measure.py). Candidate, eager and torch.compile are timed in rounds, one
    # call of each per round in rotating order, all in one hold of the GPU's lock.
    warmup: int = 3  # untimed calls of each before the rounds (compilation, autotuning)
    runs: int = 30  # rounds at least
    # Rounds at most: after `runs`, rounds go on until the median of every series is known to
    # within `target_ci` (half-width of its 95% interval, relative) or `timing_budget_s` is spent.
    # The budget bounds the exclusive hold, which every other process on the GPU waits for:
    # six KernelBench problems share an H200, each verifies ~6 candidates, and at 2.5 problems
    # a minute the holds of all of them must fit in that minute (2 s x 6 x 2.5 = 30 s).
    max_runs: int = 100
    target_ci: float = 0.01
    timing_budget_s: float = 2.0
    # Stop the rounds, too, once the candidate's and eager's median intervals are disjoint
    # (rounds.py): for callers that rank the candidate against eager and need no more (the
    # search's fragment verifications); never for a reported number.
    stop_when_decided: bool = False
    # GPU spin between the L2 flush and each timed call's start event (timing.py): the host's
    # time to enqueue the call before the GPU waits for it; launch cost beyond it is charged.
    launch_slack_us: float = 500.0
    # Timed calls whose outputs are compared too, in expectation over `runs` rounds: each
    # round is checked with probability check_timed / runs, drawn in the worker after the
    # candidate's import (worker.Timing), so a candidate cannot tell which calls are checked.
    check_timed: int = 5
    # CUDA-graph replay times of the candidate and of eager beside the event times: the
    # difference is the launch overhead (measure.py says why decisions use the event times).
    # A fixed max(5, runs // 3) rounds: these figures are reported, never decided on.
    graph: bool = True
    baselines: bool = True  # time eager and torch.compile of the task (GPU)
    # ATen overload packets ("convolution", "addmm") a hybrid deliberately leaves in PyTorch:
    # not poisoned, not counted against it. Every other torch compute operator keeps the strict
    # rule, and a call must still launch at least one Triton kernel.
    allow_torch: tuple[str, ...] = ()
    # Module tasks: Model and ModelNew both in .eval() (a user's deployment). Off by default, as
    # in KernelBench, which never calls eval(): dropout and batch norm run in training mode.
    eval_mode: bool = False
    # torch.compile of every task costs seconds per harness process: RL on many distinct
    # programs turns it off and keeps the eager baseline (its speed reward's reference).
    compile_baseline: bool = True
    memory_gb: float = 8.0  # RLIMIT_DATA of a CPU worker
    # Input size (GB) above which the task gets no float64 evaluation (envelope.py): its float64
    # copies take twice the inputs again (a KernelBench level-1 ReLU has 6.4 GB of input, and
    # eight problems may share a GPU). Without it the float32 reference alone decides, which
    # only ever rejects more (compare.py). One verification per GPU can afford more.
    envelope_max_gb: float = 2.0
    # Input size (GB) up to which a task above envelope_max_gb is evaluated in float64 on the
    # host instead (references.py), only where the float32 reference rejects an output: a
    # KernelBench level-1 GEMV (2048 x 1,048,576, 8.6 GB of input) has outputs near zero whose
    # float32 reference is off by 2e-3 relative (H200, 2026-12-01), so without it no kernel that
    # sums in another order can pass. The host's copies are freed after each evaluation.
    envelope_host_max_gb: float = 16.0
    # Off only in tests of the dynamic defences (what a candidate that slipped past the static
    # rules could still do); never off for a reward or a reported number.
    static_checks: bool = True
    # Start the next candidate's worker while this one runs (batch mode): hides start-up.
    prewarm: bool = False
    # Fork each worker from a sandboxed server that imported torch and triton once (zygote.py),
    # where the sandbox gives it a private /tmp (bwrap, unshare): a worker is ready in
    # milliseconds instead of after 4 s of imports (the 2-core CPU machine). Off: one sandbox
    # per worker, started from scratch (the A/B of benchmarks/verify_throughput.py).
    fork_server: bool = True
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def on_cuda(self) -> bool:
        return self.device.startswith("cuda")

    def tolerances(self) -> tuple[float | None, float | None]:
        """atol and rtol of the comparisons. In fp32 they are passed on as given (None: per
        dtype, compare.py), which keeps the strict contract exactly as it was; in the other
        modes None is the mode's tolerance, whatever the output's dtype (tf32's outputs are
        float32, and 1e-4 would hold TF32 to strict float32)."""
        from drtriton.verify.precision import STRICT, mode

        m = mode(self.precision)
        if m == STRICT:
            return self.atol, self.rtol
        atol = m.tolerance if self.atol is None else self.atol
        rtol = m.tolerance if self.rtol is None else self.rtol
        return atol, rtol

    def wall_limit(self) -> float:
        if self.timeout is not None:
            return self.timeout
        return 300.0 if self.on_cuda else 120.0

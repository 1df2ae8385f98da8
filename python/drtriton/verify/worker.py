"""The candidate's worker: `python -m drtriton.verify.worker`, started by the harness in a sandbox.

It is the only process that imports the candidate, and it never sees a reference output. Protocol:
one JSON object per line, requests on the file descriptor named by DRT_VERIFY_FDS ("in,out"),
replies on the other; the candidate's stdout and stderr go to a log file, so nothing it prints
can pose as a reply. Outputs travel as `torch.save` files in the private work directory and are
read back by the harness with `weights_only=True` (no pickled code crosses the boundary).

Inputs are drawn here, on the worker's device, by the same trusted code and seed as in the
harness (task.make_inputs; the task's source is a file in the work directory): a 10 GB input set
then costs milliseconds instead of a file round trip. The seed arrives with each run request,
after the candidate was imported, and is drawn afresh per verification, so an import cannot
precompute the answers. The reply carries the set's fingerprint; when it differs from the
harness's (a task whose get_inputs() is not reproducible), the harness sends that set as a file.
A candidate that tampers with the drawing only changes its own inputs, never the reference.

Requests:
- {"op": "load", "candidate", "task", "kind", "device", "init", "poisoned_copies", "allow_torch",
  "eval"}: load the task, install the launch counter and the torch watch (operators in
  allow_torch are left alone), import the candidate, build ModelNew for module tasks (in eval
  mode when "eval").
- {"op": "run", "set", "output"}: one poisoned call on fresh inputs; a set is {"index", "seed"}
  (drawn here) or {"file"} (sent by the harness).
- {"op": "time", "sets": [...], "warmup", "runs", "check", "output"}: GPU timing.
Each reply is {"ok": true, ...} or {"ok": false, "status", "reason", "line"}.

Anything the harness has not asked for (a crash, a hang, os._exit) is judged by the harness from
the outside: it only ever reads the replies it requested.
"""

from __future__ import annotations

import faulthandler
import json
import os
import random
import resource
import sys
import time
import traceback
import types
from typing import Any


def _set_limits(limits: dict[str, int]) -> None:
    table = {
        "cpu": resource.RLIMIT_CPU,
        "nofile": resource.RLIMIT_NOFILE,
        "fsize": resource.RLIMIT_FSIZE,
        "core": resource.RLIMIT_CORE,
        "data": resource.RLIMIT_DATA,
    }
    for key, value in limits.items():
        _soft, hard = resource.getrlimit(table[key])
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(table[key], (value, value))


class Worker:
    def __init__(self, workdir: str) -> None:
        import torch

        from drtriton.verify import poison, precision, timing

        self.torch = torch
        self.timing = timing
        # The references are strict float32 (precision.py); so are the PyTorch operators a
        # hybrid keeps (allow_torch), or its cuDNN convolutions would round through TF32 and
        # miss the tolerance by 10x. The static rules keep the candidate from switching back.
        precision.disable_tf32()
        self.workdir = workdir
        self.launches = poison.LaunchCounter()
        self.launches.install()
        self.watch: poison.TorchWatch | None = None
        self.entry: Any = None
        self.device = "cpu"
        self.candidate_path = ""
        self.task: Any = None

    # -- requests -----------------------------------------------------------------------------
    def load(self, msg: dict[str, Any]) -> dict[str, Any]:
        from drtriton.verify import poison
        from drtriton.verify.task import load_task

        torch = self.torch
        self.device = msg["device"]
        if msg.get("task"):  # before the candidate runs anything
            with open(os.path.join(self.workdir, os.path.basename(msg["task"]))) as f:
                self.task = load_task(f.read(), "task.py")
        self.candidate_path = os.path.join(self.workdir, os.path.basename(msg["candidate"]))
        self.watch = poison.TorchWatch(
            frozenset(msg.get("poisoned_copies", [])),
            self.launches,
            allowed=frozenset(msg.get("allow_torch", [])),
        )
        module = types.ModuleType("candidate")
        module.__file__ = self.candidate_path
        with open(self.candidate_path) as f:
            source = f.read()
        try:
            code = compile(source, self.candidate_path, "exec")
            exec(code, module.__dict__)
        except BaseException as exc:  # the candidate's import: any failure is its verdict
            return self._error("compile_error", "the candidate failed to import", exc)
        if not self.timing.timers_intact():
            return {
                "ok": False,
                "status": "forbidden",
                "reason": "the candidate patched the timers",
            }
        if msg["kind"] == "functional":
            self.entry = getattr(module, "triton_fused_operator", None)
            if not callable(self.entry):
                return {"ok": False, "status": "compile_error",
                        "reason": "triton_fused_operator is not a function"}  # fmt: skip
            return {"ok": True}
        init = torch.load(os.path.join(self.workdir, msg["init"]), weights_only=True)
        try:
            torch.manual_seed(init["seed"])
            model = module.ModelNew(*init["init_inputs"]).to(self.device)
            if msg.get("eval"):
                model.eval()
        except BaseException as exc:
            return self._error("runtime_error", "ModelNew(*get_init_inputs()) failed", exc)
        problem = _adopt_state(model, init["params"], init["buffers"])
        if problem:
            return {"ok": False, "status": "wrong_answer", "reason": problem}
        self.entry = model
        return {"ok": True}

    def run(self, msg: dict[str, Any]) -> dict[str, Any]:
        torch = self.torch
        fresh = self._input_set(msg["set"])
        mark = None
        if "file" not in msg["set"]:
            from drtriton.verify.task import fingerprint

            mark = fingerprint(fresh)
        inputs = self._into_buffers(fresh)
        self.watch.hits.clear()
        self.watch.poison = True
        self.launches.count = 0
        start = time.perf_counter()
        try:
            with torch.no_grad(), self.watch:
                out = self.entry(*inputs)
        except BaseException as exc:
            return self._error("runtime_error", "the candidate raised", exc)
        elapsed = time.perf_counter() - start  # diagnostics only (harness overhead figures)
        reply = self._finish(out, msg["output"])
        reply["call_s"] = elapsed
        if mark is not None:
            reply["fingerprint"] = mark
        return reply

    def time(self, msg: dict[str, Any]) -> dict[str, Any]:
        torch = self.torch
        sets = [self._input_set(spec) for spec in msg["sets"]]
        watch = self.watch
        watch.hits.clear()
        watch.poison = False  # count only: the timed calls are the real ones
        self.launches.count = 0
        entry = self.entry

        silent: list[int] = []  # calls that launched no kernel
        rng = random.SystemRandom()  # the candidate cannot predict which calls are checked
        check = sorted(rng.sample(range(msg["runs"]), min(msg["check"], msg["runs"])))
        call = watched_calls(entry, watch, self.launches, msg["warmup"], set(check), silent)
        try:
            with torch.no_grad():
                times, kept = self.timing.time_cuda(
                    call, sets, warmup=msg["warmup"], runs=msg["runs"], check=check
                )
        except BaseException as exc:
            return self._error("runtime_error", "the candidate raised while timed", exc)
        calls = msg["warmup"] + msg["runs"]
        if watch.hits:
            return self._torch_used("timed calls")
        if silent:
            return {"ok": False, "status": "not_genuine",
                    "reason": f"{len(silent)} of {calls} timed calls launched no Triton kernel"}  # fmt: skip
        if not self.timing.timers_intact():
            return {
                "ok": False,
                "status": "forbidden",
                "reason": "the candidate patched the timers",
            }
        outputs = []
        for t in check:
            flat, problem = _flatten_output(kept[t], self.device)
            if problem:
                return {"ok": False, "status": "wrong_answer", "reason": problem}
            outputs.append(flat)
        torch.save(outputs, os.path.join(self.workdir, msg["output"]))
        return {"ok": True, "times": times, "check": check, "sets": len(sets)}

    # -- helpers -------------------------------------------------------------------------------
    def _input_set(self, spec: dict[str, Any]) -> list[Any]:
        """An input set: read from the harness's file, or drawn here from its index and seed."""
        if "file" in spec:
            path = os.path.join(self.workdir, os.path.basename(str(spec["file"])))
            return self.torch.load(path, weights_only=True, map_location=self.device)
        with self.torch.no_grad():
            return self.task.make_inputs(int(spec["index"]), int(spec["seed"]), self.device)

    def _into_buffers(self, fresh: list[Any]) -> list[Any]:
        """The same tensors (addresses, strides) on every call, refilled with new values.

        A candidate that caches on shapes or data pointers then returns a stale result on the
        second input set instead of getting lucky with the allocator.
        """
        torch = self.torch
        same = getattr(self, "_buffers", None) is not None and len(self._buffers) == len(fresh)
        if same:
            for buf, new in zip(self._buffers, fresh, strict=True):
                if isinstance(buf, torch.Tensor) != isinstance(new, torch.Tensor) or (
                    isinstance(buf, torch.Tensor)
                    and (buf.shape, buf.stride(), buf.dtype) != (new.shape, new.stride(), new.dtype)
                ):
                    same = False
        if not same:
            self._buffers = fresh
            return fresh
        out = []
        for buf, new in zip(self._buffers, fresh, strict=True):
            if isinstance(buf, torch.Tensor):
                buf.copy_(new)
                out.append(buf)
            else:
                out.append(new)
        return out

    def _finish(self, out: Any, output_name: str) -> dict[str, Any]:
        if self.watch.hits:
            return self._torch_used("a poisoned call")
        if self.launches.count == 0:
            return {"ok": False, "status": "not_genuine",
                    "reason": "the call launched no Triton kernel"}  # fmt: skip
        flat, problem = _flatten_output(out, self.device)
        if problem:
            return {"ok": False, "status": "wrong_answer", "reason": problem}
        self.torch.save(flat, os.path.join(self.workdir, output_name))
        return {"ok": True, "launches": self.launches.count}

    def _torch_used(self, where: str) -> dict[str, Any]:
        ops = ", ".join(f"{name} x{n}" for name, n in self.watch.hits.most_common(5))
        return {
            "ok": False,
            "status": "not_genuine",
            "reason": f"torch computed during {where} ({ops}); torch may allocate and reshape, "
            "not compute",
        }

    def _error(self, status: str, what: str, exc: BaseException) -> dict[str, Any]:
        line = None
        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename == self.candidate_path:
                line = frame.lineno
        if isinstance(exc, SyntaxError) and exc.filename == self.candidate_path:
            line = exc.lineno
        text = f"{type(exc).__name__}: {exc}".strip()
        if len(text) > 2000:
            text = text[:2000] + " ..."
        if "CUDA error" in text or "cudaError" in text:
            status, what = "runtime_error", "CUDA error"
        if isinstance(exc, SystemExit):
            what = "the candidate called exit"
        if type(exc).__name__ in _TRITON_COMPILE_ERRORS:
            status, what = "compile_error", "a Triton kernel failed to compile"
        where = f" (line {line})" if line else ""
        return {"ok": False, "status": status, "reason": f"{what}{where}: {text}", "line": line,
                "fatal": "CUDA" in what}  # fmt: skip


# Triton's compile-time failures (triton.compiler.errors), matched by name so that the worker
# does not depend on where a Triton version keeps them.
_TRITON_COMPILE_ERRORS = {
    "CompilationError",
    "CompileTimeAssertionFailure",
    "UnsupportedLanguageConstruct",
    "PTXASError",
}


def watched_calls(entry: Any, watch: Any, launches: Any, warmup: int, check: set[int],
                  silent: list[int]) -> Any:  # fmt: skip
    """`entry` as time_cuda calls it: warm-ups first, then the timed runs 0, 1, ...

    The torch watch (a Python dispatch mode) costs ~25 us per call plus more per torch operator,
    which CUDA events would charge to the candidate alone (eager is timed without it): tiny
    fragments measured 0.18 ms against 0.01 ms eager on the H200.  So it watches the warm-ups
    and the checked runs only, whose outputs are also compared; the harness takes the time
    from the unchecked runs.  A candidate cannot tell which runs are checked (SystemRandom,
    drawn after its import), so one that computes in torch on a share p of the timed calls
    escapes with probability (1 - p) ** len(check), and cannot move the median below p = 1/2.
    Every call must still launch a Triton kernel (`silent` collects those that did not)."""
    calls = 0

    def call(*args: Any) -> Any:
        nonlocal calls
        run = calls - warmup  # negative during the warm-ups
        calls += 1
        before = launches.count
        if run < 0 or run in check:
            with watch:
                out = entry(*args)
        else:
            out = entry(*args)
        if launches.count == before:
            silent.append(run)
        return out

    return call


def _adopt_state(model: Any, params: list[Any], buffers: list[Any]) -> str | None:
    """Copies Model's parameters and buffers into ModelNew in order, after checking shapes."""
    import torch

    mine = list(model.parameters())
    if [tuple(p.shape) for p in mine] != [tuple(p.shape) for p in params]:
        return (
            "ModelNew's parameters do not match Model's in order and shape: "
            f"{[tuple(p.shape) for p in mine]} vs {[tuple(p.shape) for p in params]}"
        )
    my_buffers = list(model.buffers())
    with torch.no_grad():
        for p, value in zip(mine, params, strict=False):
            p.copy_(value)
        if [tuple(b.shape) for b in my_buffers] == [tuple(b.shape) for b in buffers]:
            for b, value in zip(my_buffers, buffers, strict=False):
                b.copy_(value)
    return None


def _flatten_output(out: Any, device: str) -> tuple[list[Any], str | None]:
    """The result as plain CPU tensors and scalars; a tensor subclass or odd object is refused."""
    import torch

    from drtriton.verify.compare import flatten

    flat = []
    for leaf in flatten(out):
        if isinstance(leaf, torch.Tensor):
            if type(leaf) is not torch.Tensor:
                return [], f"returned a {type(leaf).__name__}, not a plain torch.Tensor"
            if leaf.device.type != torch.device(device).type:
                return [], f"returned a tensor on {leaf.device}, the inputs are on {device}"
            flat.append(leaf.detach().to("cpu", copy=True))
        elif leaf is None or type(leaf) in (int, float, bool):
            flat.append(leaf)
        else:
            return [], f"returned a {type(leaf).__name__}, expected tensors"
    return flat, None


def main() -> None:
    fd_in, fd_out = (int(x) for x in os.environ["DRT_VERIFY_FDS"].split(","))
    workdir = os.environ["DRT_VERIFY_DIR"]
    _set_limits(json.loads(os.environ.get("DRT_VERIFY_LIMITS", "{}")))
    faulthandler.enable()  # a segfault leaves a Python traceback in the log the harness quotes
    requests = os.fdopen(fd_in, "r")
    replies = os.fdopen(fd_out, "w")
    worker = Worker(workdir)
    replies.write(json.dumps({"ok": True, "ready": True}) + "\n")
    replies.flush()
    handlers = {"load": worker.load, "run": worker.run, "time": worker.time}
    for line in requests:
        msg = json.loads(line)
        if msg["op"] == "exit":
            break
        reply = handlers[msg["op"]](msg)
        sys.stdout.flush()
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    os._exit(0)  # skip interpreter teardown: the candidate may have left state behind


if __name__ == "__main__":
    main()

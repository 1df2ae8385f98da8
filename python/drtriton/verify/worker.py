"""The candidate's worker: `python -m drtriton.verify.worker`, started by the harness in a sandbox.

It is the only process that imports the candidate, and it never sees a reference output. Protocol:
one JSON object per line, requests on the file descriptor named by DRT_VERIFY_FDS ("in,out"),
replies on the other; the candidate's stdout and stderr go to a log file, so nothing it prints
can pose as a reply. Outputs travel as `torch.save` files in the private work directory and are
read back by the harness with `weights_only=True` (no pickled code crosses the boundary). A
request that produces outputs copies them to host memory and keeps them; a separate "save"
request writes the file, so that the harness holds no GPU lock through the file's writing and
reading (a 1 GB KernelBench output took seconds each way, and every timing on the GPU waited
for it: 65-160 s of lock waits per level-2 problem on the H200, 2026-12-01).

Inputs are drawn here, on the worker's device, by the same trusted code and seed as in the
harness (task.make_inputs; the task's source is a file in the work directory): a 10 GB input set
then costs milliseconds instead of a file round trip. The seed arrives with each run request,
after the candidate was imported, and is drawn afresh per verification, so an import cannot
precompute the answers. The reply carries the set's fingerprint; when it differs from the
harness's (a task whose get_inputs() is not reproducible), the harness sends that set as a file.
A candidate that tampers with the drawing only changes its own inputs, never the reference.

Requests:
- {"op": "load", "candidate", "task", "kind", "device", "init", "poisoned_copies", "allow_torch",
  "eval", "precision"}: load the task, set the precision mode's TF32 flags (precision.py),
  install the launch counter and the torch watch (operators in allow_torch are left alone),
  import the candidate, build ModelNew for module tasks (in eval mode when "eval"; its
  parameters and buffers cast to the mode's dtype, as the reference's are). Input sets are then
  drawn in the mode's dtype.
- {"op": "warm", "set"}: the compile pass (compile_pass.py): one call on allocated, undrawn
  inputs with no work on the GPU, so that the kernels compile while the harness holds no lock.
- {"op": "run", "set", "output"}: one poisoned call on fresh inputs; a set is {"index", "seed"}
  (drawn here) or {"file"} (sent by the harness). Its output is kept under the name "output".
- {"op": "save", "output"}: writes the kept output of that name to its file (no GPU work).
- GPU timing, one request per timed call so that the harness can interleave the candidate's
  calls with eager's and torch.compile's (measure.py): {"op": "time_begin", "sets", "warmup",
  "check_p", "check_max"}, {"op": "time_run", "run"}, {"op": "time_end", "output"}; then the
  CUDA-graph replays: {"op": "graph_begin", "rounds"}, {"op": "graph_run", "run"},
  {"op": "graph_end", "output"} (the checked outputs kept under "output", as for "run").
Each reply is {"ok": true, ...} or {"ok": false, "status", "reason", "line"}.

Anything the harness has not asked for (a crash, a hang, os._exit) is judged by the harness from
the outside: it only ever reads the replies it requested.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import resource
import sys
import time
import traceback
import types
from collections.abc import Iterator
from typing import Any

# The reply of a request whose own work, not the candidate's, ran out of GPU memory (the
# harness raises ResourceError for it: channel.py).
OUT_OF_MEMORY = "harness_out_of_memory"


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


def prime_dispatch() -> None:
    """Python dispatch's first use, paid now: it imports what it needs, 1.97 s for one relu
    under a TorchDispatchMode on the 2-core CPU (2026-12-06), 0.0 s the second time."""
    import torch

    from drtriton.verify import poison

    with poison.TorchWatch():
        torch.relu(torch.zeros(1))


class Worker:
    def __init__(self, workdir: str) -> None:
        import torch

        from drtriton.verify import poison, precision, timing

        self.torch = torch
        self.timers = timing
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
        self.mode = precision.STRICT  # the precision mode (load request)
        self.timed: Any = None  # worker_timing.CandidateTiming of the timing requests
        self.kept: dict[str, Any] = {}  # outputs on the host, by file name, until "save"
        self.host = HostCopies(torch)  # the host memory those copies reuse
        # Before the worker reports ready, so a prewarmed spare pays it while the harness is
        # busy with the previous candidate, not inside this one's first call (a forked worker
        # finds it paid by its fork server).
        prime_dispatch()

    # -- requests -----------------------------------------------------------------------------
    def load(self, msg: dict[str, Any]) -> dict[str, Any]:
        from drtriton.verify import poison, precision
        from drtriton.verify.task import load_task

        torch = self.torch
        self.device = msg["device"]
        # Before the candidate is imported; the static rules keep it from switching back.
        self.mode = precision.mode(str(msg.get("precision", precision.DEFAULT)))
        precision.set_tf32(self.mode.tf32)
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
        if not self.timers.timers_intact():
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
            if self.mode.casts:  # KernelBench casts the new model as it casts the reference
                model = model.to(self.mode.torch_dtype())
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

    def warm(self, msg: dict[str, Any]) -> dict[str, Any]:
        from drtriton.verify import compile_pass

        try:
            inputs = compile_pass.shaped_like(self._shaped_set(msg["set"]), self.device)
        except Exception as exc:  # a task whose inputs cannot be drawn on meta: no pass
            return {"ok": True, "complete": False, "reason": f"inputs: {type(exc).__name__}"}
        return {"ok": True, **compile_pass.run(self.entry, inputs, self.launches)}

    def time_begin(self, msg: dict[str, Any]) -> dict[str, Any]:
        from drtriton.verify.timing import Flush
        from drtriton.verify.worker_timing import CandidateTiming

        sets = [self._input_set(spec) for spec in msg["sets"]]
        self.watch.hits.clear()
        self.watch.poison = False  # count only: the timed calls are the real ones
        flush = Flush(float(msg["slack_us"]))
        self.timed = CandidateTiming(self.entry, self.watch, self.launches, sets, flush,
                                      check_p=float(msg["check_p"]),
                                      check_max=int(msg["check_max"]))  # fmt: skip
        return self._timed_step(lambda: self.timed.warm(int(msg["warmup"])) or {})

    def time_run(self, msg: dict[str, Any]) -> dict[str, Any]:
        def step() -> dict[str, Any]:
            ms, checked = self.timed.run(int(msg["run"]))
            return {"ms": ms, "checked": checked}

        return self._timed_step(step)

    def time_end(self, msg: dict[str, Any]) -> dict[str, Any]:
        kept = self.timed.kept
        return self._save_kept(kept, msg["output"], {"check": sorted(kept)})

    def graph_begin(self, msg: dict[str, Any]) -> dict[str, Any]:
        def step() -> dict[str, Any]:
            reason = self.timed.capture(int(msg["rounds"]))
            return {"graph": reason is None, "reason": reason or ""}

        return self._timed_step(step)

    def graph_run(self, msg: dict[str, Any]) -> dict[str, Any]:
        return self._timed_step(lambda: {"ms": self.timed.replay(int(msg["run"]))})

    def graph_end(self, msg: dict[str, Any]) -> dict[str, Any]:
        kept = self.timed.graph_kept
        return self._save_kept(kept, msg["output"], {"check": sorted(kept)})

    def _timed_step(self, step: Any) -> dict[str, Any]:
        """One timing request: the candidate raising, computing in torch while watched or
        launching nothing is a verdict at once."""
        try:
            with self.torch.no_grad():
                reply = step()
        except BaseException as exc:
            return self._error("runtime_error", "the candidate raised while timed", exc)
        if self.watch.hits:
            return self._torch_used("timed calls")
        if self.timed.silent:
            return {"ok": False, "status": "not_genuine",
                    "reason": f"{self.timed.silent} of {self.timed.calls} timed calls launched "
                    "no Triton kernel"}  # fmt: skip
        return {"ok": True, **reply}

    def save(self, msg: dict[str, Any]) -> dict[str, Any]:
        name = os.path.basename(str(msg["output"]))
        if name not in self.kept:
            return {"ok": False, "status": "crashed", "reason": f"no output {name} to save"}
        outputs = self.kept.pop(name)
        with _without_checksums():
            self.torch.save(outputs, os.path.join(self.workdir, name))
        self.host.release(outputs)  # written: the next call's copies may reuse the memory
        return {"ok": True}

    def _save_kept(
        self, kept: dict[int, Any], output: str, reply: dict[str, Any]
    ) -> dict[str, Any]:
        if not self.timers.timers_intact():
            return {
                "ok": False,
                "status": "forbidden",
                "reason": "the candidate patched the timers",
            }
        outputs = []
        for run in sorted(kept):
            flat, problem = _flatten_output(kept[run], self.device, self.host)
            if problem:
                return {"ok": False, "status": "wrong_answer", "reason": problem}
            outputs.append(flat)
        kept.clear()  # the device copies go now: only the host copies wait for "save"
        self.kept[os.path.basename(output)] = outputs
        return {"ok": True, **reply}

    # -- helpers -------------------------------------------------------------------------------
    def _input_set(self, spec: dict[str, Any]) -> list[Any]:
        """An input set: read from the harness's file, or drawn here from its index and seed."""
        if "file" in spec:
            path = os.path.join(self.workdir, os.path.basename(str(spec["file"])))
            return self.torch.load(path, weights_only=True, map_location=self.device)
        with self.torch.no_grad():
            return self.task.make_inputs(int(spec["index"]), int(spec["seed"]), self.device,
                                         self.mode)  # fmt: skip

    def _shaped_set(self, spec: dict[str, Any]) -> list[Any]:
        """An input set's shapes without drawing it on the device: meta tensors (drawn by the
        task's own code on the meta device), or a shipped set read onto the CPU."""
        if "file" in spec:
            path = os.path.join(self.workdir, os.path.basename(str(spec["file"])))
            return self.torch.load(path, weights_only=True, map_location="cpu")
        with self.torch.no_grad():
            return self.task.make_inputs(int(spec["index"]), int(spec["seed"]), "meta", self.mode)

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
        flat, problem = _flatten_output(out, self.device, self.host)
        if problem:
            return {"ok": False, "status": "wrong_answer", "reason": problem}
        self.kept[os.path.basename(output_name)] = flat
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


@contextlib.contextmanager
def _without_checksums() -> Iterator[None]:
    """torch.save without its zip records' CRC32: the checksum took 2.5 of the 3 s a 512 MB
    output took to write on the CPU CI machine (0.5 s without), and reading it back is faster
    too (0.7 s against 1.2-1.7 s). The file never leaves the machine; the harness's
    weights_only load is what guards the boundary."""
    try:
        from torch.utils.serialization import config
    except ImportError:  # pragma: no cover - torch before 2.6 has no switch
        yield
        return
    before = config.save.compute_crc32
    config.save.compute_crc32 = False
    try:
        yield
    finally:
        config.save.compute_crc32 = before


class HostCopies:
    """Host memory for the outputs' copies, reused from one call's copy to the next.

    Every output the harness judges is copied to the host and written to a file ("save"). A
    fresh host tensor for each copy pays for its pages on first touch, and a GPU copy into
    pageable memory goes through the driver's staging buffer: on the H200 (2026-12-03) a
    4.3 GB output (KernelBench L1 7) took 3.4 s per correctness call to reach the host, about
    1.3 GB/s, five times per verification plus the checked timed call and graph replay.
    Here a copy takes a free buffer of its shape and dtype, page-locked when it comes from a
    GPU (so the copy runs at the bus's speed; plain memory where the driver refuses), and
    "save" gives it back once written. At most the outputs waiting for "save" are held, as
    before, but their memory stays with the worker until it exits."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.free: dict[tuple[Any, ...], list[Any]] = {}
        self.pin = True  # until the driver refuses a page-locked buffer

    def copy(self, leaf: Any) -> Any:
        """A host copy of `leaf` (a plain, detached tensor)."""
        if not leaf.is_contiguous():  # keeps its strides, as .to() does
            return leaf.detach().to("cpu", copy=True)
        pool = self.free.get(self._key(leaf))
        host = pool.pop() if pool else self._new(leaf)
        host.copy_(leaf.detach())
        return host

    def release(self, values: list[Any]) -> None:
        """Gives back the copies in `values` (nested lists: the timed calls' outputs)."""
        for value in values:
            if isinstance(value, list):
                self.release(value)
            elif isinstance(value, self.torch.Tensor) and value.is_contiguous():
                self.free.setdefault(self._key(value), []).append(value)

    def _key(self, tensor: Any) -> tuple[Any, ...]:
        return (tuple(tensor.shape), tensor.dtype)

    def _new(self, leaf: Any) -> Any:
        torch = self.torch
        if leaf.is_cuda and self.pin:
            try:
                return torch.empty(leaf.shape, dtype=leaf.dtype, pin_memory=True)
            except RuntimeError:  # page-locked memory refused: plain memory from now on
                self.pin = False
        return torch.empty(leaf.shape, dtype=leaf.dtype)


def _flatten_output(out: Any, device: str,
                    host: HostCopies | None = None) -> tuple[list[Any], str | None]:  # fmt: skip
    """The result as plain CPU tensors and scalars (host copies, from `host` when given); a
    tensor subclass or odd object is refused."""
    import torch

    from drtriton.verify.compare import flatten

    flat = []
    for leaf in flatten(out):
        if isinstance(leaf, torch.Tensor):
            if type(leaf) is not torch.Tensor:
                return [], f"returned a {type(leaf).__name__}, not a plain torch.Tensor"
            if leaf.device.type != torch.device(device).type:
                return [], f"returned a tensor on {leaf.device}, the inputs are on {device}"
            flat.append(host.copy(leaf) if host else leaf.detach().to("cpu", copy=True))
        elif leaf is None or type(leaf) in (int, float, bool):
            flat.append(leaf)
        else:
            return [], f"returned a {type(leaf).__name__}, expected tensors"
    return flat, None


REQUESTS = (
    "load",
    "warm",
    "run",
    "save",
    "time_begin",
    "time_run",
    "time_end",
    "graph_begin",
    "graph_run",
    "graph_end",
)


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
    handlers = {name: getattr(worker, name) for name in REQUESTS}
    for line in requests:
        msg = json.loads(line)
        if msg["op"] == "exit":
            break
        try:
            reply = handlers[msg["op"]](msg)
        except worker.torch.OutOfMemoryError as exc:
            # The worker's own work ran out of GPU memory (drawing an input set, the timing
            # buffers), outside any call of the candidate, whose errors its requests catch:
            # nothing was judged (the H200, 2026-12-01: a 1.75 GB input set in six processes).
            first = (str(exc).splitlines() or [""])[0]  # an empty message is no IndexError
            reply = {"ok": False, "status": OUT_OF_MEMORY, "reason": first}
        cuda = worker.torch.cuda
        if cuda.is_initialized():  # the reserved peak so far (the verdict's peak_gb)
            reply["peak_bytes"] = int(cuda.max_memory_reserved())
        sys.stdout.flush()
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    os._exit(0)  # skip interpreter teardown: the candidate may have left state behind


if __name__ == "__main__":
    main()

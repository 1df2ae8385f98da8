"""Can the verifier's sandboxed worker hand a GPU output to the harness without the host? (H200)

    python benchmarks/ipc_probe.py [--gb 1 4]

Why: a verification moves every output the harness judges through the host and a file
(worker.py: copy to host, torch.save; references.py: torch.load, copy back). For KernelBench's
level-1 problems that is 4-6.4 GB per output, seven outputs a verification: on the H200
(2026-12-03) L1 7's 4.3 GB output took 3.4 s to reach the host and 2.1 s to be written, per
correctness call, and level 1's large problems take minutes each. CUDA IPC would let the
harness copy the worker's output on the GPU instead (1-3 ms a GB). Whether it works across
the sandbox (new PID, IPC, mount and network namespaces; /dev/shm and /tmp private) is what
this probe finds out before anything is built on it.

A child process started exactly as the verifier starts its worker (verify/sandbox.py: the same
level, the same prefix) fills an N GB float32 tensor on the GPU and offers it three ways; the
parent (the harness's side) reports for each whether it arrived intact and how long it took:
- `file`: the verifier's path today (copy to host, torch.save without checksums; torch.load,
  copy to the GPU);
- `torch_ipc`: torch.multiprocessing's CUDA sharing (reduce_tensor / rebuild_cuda_tensor; its
  reference counter lives in shared memory, which the sandbox makes private);
- `cupy_ipc`: a plain cudaMalloc copy made by CuPy and exported with cudaIpcGetMemHandle (legacy
  IPC works on cudaMalloc memory only; PyTorch's expandable segments are not that).
Prints one line per way and size; exit 0 when the probe ran (whatever the answers), 2 without
a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

# The worker's side: one JSON line per request on stdin, one reply per line on stdout.
CHILD = r"""
import json, os, sys, time
import torch
from torch.multiprocessing.reductions import reduce_tensor

def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()

keep = []
for line in sys.stdin:
    msg = json.loads(line)
    if msg["op"] == "exit":
        break
    n = int(msg["gb"] * (1 << 30) // 4)
    x = torch.arange(n, device="cuda", dtype=torch.float32) * 0.5
    torch.cuda.synchronize()
    way, reply = msg["way"], {"ok": True}
    try:
        t = time.perf_counter()
        if way == "file":
            host = x.cpu()
            torch.save(host, os.path.join(msg["dir"], "out.pt"))
            del host
        elif way == "torch_ipc":
            fn, args = reduce_tensor(x)
            reply["args"] = [a.hex() if isinstance(a, bytes) else a if isinstance(a, (int, float, bool, type(None), list, tuple)) else repr(a) for a in args]
            keep.append(x)
        elif way == "cupy_ipc":
            import cupy
            buf = cupy.cuda.memory.Memory(x.numel() * 4)  # plain cudaMalloc
            cupy.cuda.runtime.memcpy(buf.ptr, x.data_ptr(), x.numel() * 4, cupy.cuda.runtime.memcpyDeviceToDevice)
            cupy.cuda.runtime.deviceSynchronize()
            reply["handle"] = bytes(cupy.cuda.runtime.ipcGetMemHandle(buf.ptr)).hex()
            reply["bytes"] = x.numel() * 4
            keep.append(buf)
        reply["child_s"] = time.perf_counter() - t
    except Exception as exc:
        reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
    say(reply)
"""


def receive(way: str, reply: dict, gb: float, folder: str):  # -> (tensor or None, seconds)
    import torch

    n = int(gb * (1 << 30) // 4)
    t = time.perf_counter()
    if way == "file":
        out = torch.load(os.path.join(folder, "out.pt"), weights_only=True).to("cuda")
    elif way == "torch_ipc":
        from torch.multiprocessing.reductions import rebuild_cuda_tensor

        raw = reply["args"]
        # (cls, size, stride, offset, storage cls, dtype, device, handle, size bytes, offset
        # bytes, requires_grad, ref counter handle, ref counter offset, event handle, sync)
        args = [torch.Tensor, torch.Size(raw[1]), tuple(raw[2]), raw[3], torch.UntypedStorage,
                torch.float32, raw[6], bytes.fromhex(raw[7]), raw[8], raw[9], raw[10],
                bytes.fromhex(raw[11]), raw[12], bytes.fromhex(raw[13]), raw[14]]  # fmt: skip
        out = rebuild_cuda_tensor(*args).clone()
    else:
        import cupy

        ptr = cupy.cuda.runtime.ipcOpenMemHandle(bytes.fromhex(reply["handle"]))
        mem = cupy.cuda.UnownedMemory(ptr, reply["bytes"], owner=None)
        view = cupy.ndarray((n,), dtype=cupy.float32, memptr=cupy.cuda.MemoryPointer(mem, 0))
        out = torch.from_dlpack(view).clone()
        cupy.cuda.runtime.ipcCloseMemHandle(ptr)
    torch.cuda.synchronize()
    return out, time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gb", type=float, nargs="+", default=[1.0, 4.0])
    args = ap.parse_args(argv)
    import torch

    from drtriton.verify import sandbox

    if not torch.cuda.is_available():
        print("ipc_probe: needs a CUDA device", file=sys.stderr)
        return 2
    level = sandbox.choose("auto")
    print(f"sandbox: {level}; PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF')}")
    with tempfile.TemporaryDirectory(prefix="drtriton-ipc-") as folder:
        argv_, inside = sandbox.wrap(level, folder, [sys.executable, "-c", CHILD])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([sandbox.PACKAGE_ROOT,
                                                            os.environ.get("PYTHONPATH", "")])}  # fmt: skip
        child = subprocess.Popen(argv_, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                 cwd=folder, env=env)  # fmt: skip
        try:
            for gb in args.gb:
                n = int(gb * (1 << 30) // 4)
                want = torch.arange(n, device="cuda", dtype=torch.float32) * 0.5
                for way in ("file", "torch_ipc", "cupy_ipc"):
                    msg = {"op": "send", "way": way, "gb": gb, "dir": inside}
                    child.stdin.write(json.dumps(msg) + "\n")
                    child.stdin.flush()
                    reply = json.loads(child.stdout.readline())
                    if not reply.get("ok"):
                        print(f"{way:<9} {gb:4g} GB: the worker's side failed: {reply['error']}")
                        continue
                    try:
                        out, seconds = receive(way, reply, gb, folder)
                    except Exception as exc:
                        print(f"{way:<9} {gb:4g} GB: the harness's side failed: "
                              f"{type(exc).__name__}: {str(exc)[:200]}")  # fmt: skip
                        continue
                    intact = bool(torch.equal(out, want))
                    print(f"{way:<9} {gb:4g} GB: intact {intact}, worker {reply['child_s']:.3f} s, "
                          f"harness {seconds:.3f} s")  # fmt: skip
                    del out
                del want
                torch.cuda.empty_cache()
        finally:
            if child.poll() is None:
                child.stdin.write(json.dumps({"op": "exit"}) + "\n")
                child.stdin.flush()
                child.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""End-to-end check of a stitched hybrid.

A hybrid that is all kernels goes through the verifier like any candidate.  A hybrid that
keeps operators in PyTorch would be `not_genuine` there (the verifier poisons every torch
compute call), so it is compared against the task in a child process instead: on the search's
device (inputs drawn there; the Triton interpreter on the CPU), from files (on a GPU Triton's
JIT reads each kernel's source from its file: exec'd text fails there), TF32 off as in the verifier,
three seeds, atol = rtol = 1e-4.  The fragments inside it were each verified strictly; this
checks the wiring between them (the optimized model is verified end to end afterwards).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

_CHILD = r"""
import json, sys, torch
from drtriton.verify.precision import disable_tf32
from drtriton.verify.task import import_file
task_path, hybrid_path, device = json.loads(sys.stdin.read())
disable_tf32()
t, h = import_file(task_path, "task"), import_file(hybrid_path, "hybrid")
flat = lambda v: list(v) if isinstance(v, (list, tuple)) else [v]
for seed in range(3):
    torch.manual_seed(seed)
    with torch.device(device):
        args = t.get_inputs()
    want = flat(t.fused_operator(*[a.clone() for a in args]))
    got = flat(h.triton_fused_operator(*[a.clone() for a in args]))
    for w, g in zip(want, got, strict=True):
        if w.shape != g.shape or not torch.allclose(g, w, atol=1e-4, rtol=1e-4):
            print(json.dumps([False, f"seed {seed}: output differs"])); sys.exit()
print(json.dumps([True, "matches the task on 3 seeds"]))
"""


def check_hybrid(
    task: str, hybrid: str, cover: list[dict[str, Any]], device: str
) -> tuple[bool, str]:
    if all(s["fused"] for s in cover):
        from drtriton.verify import verify

        verdict = verify(task, hybrid, device=device, compile_baseline=False)
        return verdict.correct, f"{verdict.status}: {verdict.reason}"
    from drtriton.verify.harness import PACKAGE_ROOT

    env = {**os.environ}  # the child imports drtriton from where this process did
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_ROOT, env.get("PYTHONPATH")]))
    if not device.startswith("cuda"):
        env["TRITON_INTERPRET"] = "1"
    with tempfile.TemporaryDirectory(prefix="drtriton-hybrid-") as tmp:
        paths = [os.path.join(tmp, "task.py"), os.path.join(tmp, "hybrid.py")]
        for path, text in zip(paths, (task, hybrid), strict=True):
            with open(path, "w") as f:
                f.write(text)
        try:
            done = subprocess.run(
                [sys.executable, "-c", _CHILD],
                input=json.dumps([*paths, device]),
                capture_output=True,
                text=True,
                timeout=300,
                env=env,
            )
        except subprocess.TimeoutExpired:
            return False, "the hybrid timed out (300 s)"
    try:
        ok, reason = json.loads(done.stdout.strip().splitlines()[-1])
        return bool(ok), str(reason)
    except (IndexError, json.JSONDecodeError):
        tail = done.stderr.strip().splitlines()[-3:]
        return False, "the hybrid crashed: " + " | ".join(tail)[-400:]

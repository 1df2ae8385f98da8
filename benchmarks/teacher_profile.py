"""Where does the teacher's kernel for a program spend its time? (run on the H200)

    python benchmarks/teacher_profile.py --programs paper70.jsonl --ids 57 5 98 --device cuda
    TRITON_INTERPRET=1 python benchmarks/teacher_profile.py --programs p.jsonl --ids 3   # CPU
    python benchmarks/teacher_profile.py --programs level2.jsonl --kernels EVAL/kernels \
        --precision bf16 --ids 44 91        # KernelBench: an evaluation's ModelNew files

Why: the teacher alone reaches 0.833x eager (geometric mean) on the 70 paper-preset programs
of h200-2026-12-04b against issue 20's 1.0x; nine programs run at 0.05x - 0.2x. The verifier
times a candidate as a whole; this splits it into its kernels (torch.profiler's CUDA kernel
times), names the tile each autotuned kernel chose and its registers and spills, and sets
them beside eager's kernels. It answers "which kernel, and why" before a change is made.

What it does: each program (a record of a `drtriton synth` JSONL with `source`; `--ids`
match its `index` field, or its line number when it has none) runs in a process of its own
(a crash or hang loses one row): the teacher's candidate (`drtriton.teach.emit`) is imported
from a file, run once to autotune, checked against eager on input set 0 (largest difference
over the largest reference magnitude: a screen, not the verifier's rule), then profiled over
RUNS calls beside eager. Prints per program the candidate's and eager's total kernel time per
call and the candidate's kernels, slowest first; `--out` keeps the rows as JSON.

With `--kernels DIR` the records are KernelBench problems (`code`, `level`, `problem_id`) and
the candidate is an evaluation's ModelNew (DIR/L{level}_{id}.py, as `drtriton eval` writes
them), built with Model's parameters, in `--precision`'s dtype as the verifier builds both;
torch.compile of Model is profiled beside them (its kernels, too: what the candidate is
judged against). `--ids` are problem ids then.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import pathlib
import sys
import tempfile
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

RUNS = 5  # profiled calls per side; kernel times are summed and divided by RUNS


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--programs", required=True, help="JSONL of synthesized programs")
    ap.add_argument("--ids", nargs="*", type=int, default=None, help="program indices (all)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per program")
    ap.add_argument("--out", default=None, help="JSON file of the rows")
    ap.add_argument("--kernels", default=None,
                    help="an evaluation's kernels/ folder: profile its ModelNew files for the "
                         "KernelBench problems of --programs")  # fmt: skip
    ap.add_argument("--precision", default="fp32", help="precision mode (--kernels only)")
    return ap.parse_args(argv)


def load_records(path: str, ids: list[int] | None) -> list[dict[str, Any]]:
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    for number, rec in enumerate(records):
        rec.setdefault("index", rec.get("problem_id", number))
    if ids is None:
        return records
    by_index = {rec["index"]: rec for rec in records}
    missing = [i for i in ids if i not in by_index]
    if missing:
        raise SystemExit(f"error: no program with index {missing[0]} in {path}")
    return [by_index[i] for i in ids]


def kernel_times(fn: Any, args: list[Any], device: str) -> dict[str, float]:
    """Milliseconds per call of each kernel `fn(*args)` launches (its name -> summed time)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    if device == "cpu":
        return {}
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(RUNS):
            fn(*args)
        torch.cuda.synchronize()
    out: dict[str, float] = {}
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            out[event.name] = out.get(event.name, 0.0) + event.device_time / 1000.0 / RUNS
    return out


def screen_error(got: Any, want: Any) -> float:
    """The largest difference over the largest reference magnitude (a screen, not the
    verifier's rule)."""
    scale = want.double().abs().max().item() or 1.0
    return (got.double() - want.double()).abs().max().item() / scale


def tuned_kernels(module: Any) -> dict[str, dict[str, Any]]:
    """Each Triton kernel of the candidate: the autotuner's choice, registers and spills."""
    out: dict[str, dict[str, Any]] = {}
    for name, obj in vars(module).items():
        best = getattr(obj, "best_config", None)
        jit = getattr(obj, "fn", obj)
        caches = getattr(jit, "device_caches", None)
        if best is None and caches is None:
            continue
        info: dict[str, Any] = {"config": str(best) if best is not None else None}
        for cache in (caches or {}).values():
            for compiled in cache[0].values():
                info.setdefault("builds", []).append(
                    {"regs": getattr(compiled, "n_regs", None),
                     "spills": getattr(compiled, "n_spills", None)})  # fmt: skip
        out[name] = info
    return out


def profile_one(rec: dict[str, Any], device: str) -> dict[str, Any]:
    import torch

    from drtriton.teach import emit
    from drtriton.verify.task import import_file, load_task

    row: dict[str, Any] = {"index": rec["index"], "level": rec.get("level"), "ops": rec.get("ops")}
    dev = torch.device(device)
    task = load_task(rec["source"])
    inputs = task.make_inputs(0, 0, dev)
    eager = task.build_reference(dev, 0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"cand_{rec['index']}.py")
        with open(path, "w") as f:
            f.write(emit(rec["source"]))
        module = import_file(path, f"teacher_profile_{rec['index']}")
        with torch.no_grad():
            row["error"] = screen_error(module.triton_fused_operator(*inputs), eager(*inputs))
            row["kernels"] = kernel_times(module.triton_fused_operator, inputs, device)
            row["eager_kernels"] = kernel_times(eager, inputs, device)
        row["tuned"] = tuned_kernels(module)
    row["ms"] = sum(row["kernels"].values())
    row["eager_ms"] = sum(row["eager_kernels"].values())
    return row


def profile_model(rec: dict[str, Any], device: str, kernels: str, precision: str) -> dict[str, Any]:
    """A KernelBench problem's ModelNew from an evaluation beside Model and torch.compile."""
    import torch

    from drtriton.verify.precision import in_mode, mode
    from drtriton.verify.task import import_file, load_task

    m = mode(precision)
    name = f"L{rec['level']}_{rec['problem_id']}"
    row: dict[str, Any] = {"index": rec["index"], "level": rec["level"], "ops": [rec.get("name")]}
    dev = torch.device(device)
    task = load_task(rec["code"])
    inputs = task.make_inputs(0, 0, dev, m)
    reference = task.build_reference(dev, 0, mode=m)
    module = import_file(os.path.join(kernels, f"{name}.py"), f"teacher_profile_{name}")
    torch.manual_seed(0)
    model = module.ModelNew(*task.init_inputs(m)).to(dev)
    model = model.to(m.torch_dtype()) if m.casts else model
    with torch.no_grad():
        for mine, theirs in zip(model.parameters(), reference.parameters(), strict=True):
            mine.copy_(theirs)
    compiled = torch.compile(reference)
    with torch.no_grad(), in_mode(m):
        row["error"] = screen_error(model(*inputs), reference(*inputs))
        compiled(*inputs)
        row["kernels"] = kernel_times(model, inputs, device)
        row["eager_kernels"] = kernel_times(reference, inputs, device)
        row["compile_kernels"] = kernel_times(compiled, inputs, device)
    row["tuned"] = tuned_kernels(module)
    for side in ("", "eager_", "compile_"):
        row[f"{side}ms"] = sum(row[f"{side}kernels"].values())
    return row


def _child(rec: dict[str, Any], device: str, queue: Any, kernels: str | None = None,
           precision: str = "fp32") -> None:  # fmt: skip
    try:
        if kernels:
            queue.put(profile_model(rec, device, kernels, precision))
        else:
            queue.put(profile_one(rec, device))
    except Exception as exc:  # one program's failure is its row, not the run's end
        queue.put({"index": rec["index"], "failed": f"{type(exc).__name__}: {exc}"[:300]})


def run_isolated(rec: dict[str, Any], device: str, timeout: float, kernels: str | None = None,
                 precision: str = "fp32") -> dict[str, Any]:  # fmt: skip
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(rec, device, queue, kernels, precision))
    proc.start()
    try:
        return queue.get(timeout=timeout)
    except Exception:
        return {"index": rec["index"], "failed": f"no answer in {timeout:.0f} s"}
    finally:
        proc.join(5)
        if proc.is_alive():
            proc.kill()


def print_row(row: dict[str, Any]) -> None:
    if "failed" in row:
        print(f"## program {row['index']}: failed: {row['failed']}", flush=True)
        return
    ms, eager_ms = row["ms"], row["eager_ms"]
    ratio = f"{eager_ms / ms:.3f}x eager" if ms else "untimed"
    if "compile_ms" in row and ms:
        ratio += f", compile {row['compile_ms']:.3f} ms ({row['compile_ms'] / ms:.3f}x)"
    print(f"## program {row['index']} (level {row['level']}: {' -> '.join(row['ops'] or [])}): "
          f"{ms:.3f} ms vs eager {eager_ms:.3f} ms ({ratio}), error {row['error']:.1e}")  # fmt: skip
    for name, t in sorted(row["kernels"].items(), key=lambda kv: -kv[1]):
        tuned = next((v for k, v in row["tuned"].items() if name.startswith(k)), {})
        print(f"   {t:9.3f} ms  {name[:60]:<60} {tuned.get('config') or ''} "
              f"{tuned.get('builds') or ''}")  # fmt: skip
    top = sorted(row["eager_kernels"].items(), key=lambda kv: -kv[1])[:3]
    print("   eager: " + "; ".join(f"{name[:50]} {t:.3f} ms" for name, t in top), flush=True)
    top = sorted(row.get("compile_kernels", {}).items(), key=lambda kv: -kv[1])[:4]
    if top:
        print("   compile: " + "; ".join(f"{name[:50]} {t:.3f} ms" for name, t in top), flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows = []
    for rec in load_records(args.programs, args.ids):
        row = run_isolated(rec, args.device, args.timeout, args.kernels, args.precision)
        print_row(row)
        rows.append(row)
        if args.out:
            tmp = args.out + ".tmp"
            with open(tmp, "w") as f:
                json.dump(rows, f, indent=1)
            os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The teacher's memory-bound kernels on an H200, judged without one: resident programs per SM
and how evenly the grid fills the SMs, from each kernel compiled for sm_90 on this machine.

    python benchmarks/occupancy_audit.py [--problems level1.jsonl] [--ids 40 23] [--out a.json]
    python benchmarks/occupancy_audit.py --programs teacher_paper70.jsonl --ids 27 57

Why: a memory-bound kernel's time is its bytes over the bandwidth only when every SM streams to
the end. On the H200 (2026-12-03) KernelBench L1 40's layer norm ran 272 programs whose sm_90
build fits two (statistics) and one (output) 512-thread programs per SM: the last 8 and 140
programs ran in rounds of their own, and the kernel pair took 0.718 ms against 0.322 for
torch.compile, 1.2 TB/s of the 4.3 measured. Such a schedule is visible before any GPU time:
the grid is in the wrapper, the registers and shared memory in the compiled kernel.

For each problem of the file whose operators are all memory-bound (no matrix product or
convolution, as benchmarks/memory_bound_speed.py decides; with --all every fully mapped one,
an autotuned contraction once per tile it may run with, its fp16x3 build as on the H200): the frontend's program (on fake
inputs), the teacher's candidate, and its wrapper called on meta tensors with every Triton
launch captured instead of run (grid, arguments, num_warps). Each captured kernel is compiled
for sm_90 (`triton.compile`, no GPU needed) and its cubin's registers and shared memory read
with the cuobjdump that Triton ships. Then, per launch: programs per SM the SM can hold
(65,536 registers in 256-register warp allocations, 2,048 threads, 32 programs, 228 KB of
shared memory), rounds = grid / (132 SMs x that), and the last round's fill: how much of the
final round's capacity is used (1.0 when the grid is a whole number of rounds; L1 40 before the
change: 0.03 and 0.06). A launch of a few rounds with a thin last round over at least 64 MB
of tensors is flagged. Also per kernel: its spill instructions (local loads and stores) and
those in the loop around its matrix instructions (spill_counts), where a contraction pays
them, and that loop's instructions and global loads by opcode (loop_profile). `--programs`
audits synthetic programs (the teacher's paper-preset set) instead. Prints one table; exit 0 when it ran, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT / "python"))

SMS = 132
H200_PROPERTIES = type("H200Properties", (), {"multi_processor_count": SMS})()
REGS_PER_SM = 65536
THREADS_PER_SM = 2048
PROGRAMS_PER_SM = 32
SHARED_PER_SM = 228 * 1024
# A launch is flagged when it takes fewer than this many rounds and its last is under FLAG_FILL
# full (below 8 rounds a thin last round costs at least an eighth of the time), and its
# tensors hold at least FLAG_MB (a final combine of partial sums is one program by design:
# launch-bound, a few microseconds whatever its grid).
FLAG_ROUNDS = 8
FLAG_FILL = 0.5
FLAG_MB = 64.0


def programs_per_sm(regs: int, warps: int, shared: int) -> int:
    """Programs of `warps` warps, `regs` registers a thread and `shared` bytes one SM holds."""
    per_warp = math.ceil(regs * 32 / 256) * 256  # registers are allocated per warp, by 256
    by_regs = REGS_PER_SM // max(1, per_warp * warps)
    by_threads = THREADS_PER_SM // (32 * warps)
    by_shared = SHARED_PER_SM // shared if shared else PROGRAMS_PER_SM
    return max(0, min(by_regs, by_threads, by_shared, PROGRAMS_PER_SM))


def rounds_and_fill(grid: int, per_sm: int) -> tuple[float, float]:
    """(rounds of the whole grid, share of the last round's capacity that is used)."""
    capacity = SMS * max(1, per_sm)
    rounds = grid / capacity
    last = grid - (math.ceil(rounds) - 1) * capacity
    return rounds, last / capacity


class Launches:
    """Captures Triton launches (JITFunction.run) instead of running them; an autotuned
    kernel's launch is captured once per config (the autotuner times them on the GPU and keeps
    the fastest: each is a schedule the kernel may run with)."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def __enter__(self) -> Launches:
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction

        self._originals = (JITFunction.run, Autotuner.run)
        seen = self.seen

        def run(fn, *args, grid, warmup, **kwargs):
            seen.append({"fn": fn, "args": args, "grid": grid, "kwargs": kwargs})

        def tuned(tuner, *args, grid, **kwargs):
            for i, config in enumerate(tuner.configs):
                options = {"num_warps": config.num_warps, "num_stages": config.num_stages}
                seen.append({"fn": tuner.fn, "args": args, "grid": grid, "config": i,
                             "kwargs": {**kwargs, **config.kwargs, **options}})  # fmt: skip

        JITFunction.run = run
        Autotuner.run = tuned
        return self

    def __exit__(self, *exc: object) -> None:
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction

        JITFunction.run, Autotuner.run = self._originals


def _arg_type(value: Any) -> str:
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor

    names = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16",
             torch.int64: "i64", torch.int32: "i32", torch.bool: "i1"}  # fmt: skip
    if isinstance(value, torch.Tensor):
        return "*" + names[value.dtype]
    if isinstance(value, TensorDescriptor):  # a host TMA descriptor (the TMA contraction)
        block = ",".join(str(b) for b in value.block_shape)
        return f"tensordesc<{names[value.base.dtype]}[{block}]>"
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -(2**31) <= value < 2**31 else "i64"
    return "fp32"


def _specialized_to_one(param: Any, value: Any) -> bool:
    """Whether Triton's JIT would compile this argument as the constant 1."""
    plain_int = isinstance(value, int) and not isinstance(value, bool)
    return plain_int and value == 1 and not getattr(param, "do_not_specialize", False)


def compile_sm90(fn: Any, signature: dict[str, str], constants: dict[str, Any],
                 attrs: dict[tuple[int, ...], Any], warps: int, stages: int,
                 maxnreg: int | None = None) -> dict[str, Any]:  # fmt: skip
    """`fn` compiled for sm_90 on this machine (no GPU needed): registers, shared bytes, PTX
    barriers, spills, and the hot loop's instructions and global loads (loop_profile)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    options: dict[str, Any] = {"num_warps": warps, "num_stages": stages}
    if maxnreg:
        options["maxnreg"] = maxnreg
    compiled = triton.compile(ASTSource(fn, signature, constants, attrs),
                              target=GPUTarget("cuda", 90, 32), options=options)  # fmt: skip
    regs, static = _resources(compiled.asm["cubin"])
    sass = _sass(compiled.asm["cubin"])
    spills, loop_spills = spill_counts(sass)
    profile = loop_profile(sass)
    # Triton's pipelines take dynamic shared memory (the metadata's), cuobjdump reports static.
    shared = max(static, int(compiled.metadata.shared))
    # Barriers in the PTX: a combine across warps before a streaming loop costs every program
    # (L1 40's split output kernel: 39, and 1.35 ms where the same schedule with 5 ran 0.28).
    barriers = compiled.asm["ptx"].count("bar.sync")
    return {"regs": regs, "shared": shared, "barriers": barriers, "spills": spills,
            "loop_spills": loop_spills, "loop_instructions": profile[0] if profile else None,
            "loop_loads": profile[1] if profile else None}  # fmt: skip


def compile_launch(launch: dict[str, Any]) -> dict[str, Any]:
    """The captured launch's kernel for sm_90: name, grid, warps, registers, shared bytes."""
    fn, args, kwargs = launch["fn"], launch["args"], dict(launch["kwargs"])
    warps = int(kwargs.pop("num_warps", 4))
    stages = int(kwargs.pop("num_stages", 3))
    maxnreg = kwargs.pop("maxnreg", None)
    kwargs.pop("launch_cooperative_grid", None)
    # On meta tensors the wrapper picks the CPU's exact products; on the H200 a float32
    # contraction runs the fp16x3 split (core/codegen/heuristics.h).
    if kwargs.get("DOT_PRECISION") == "ieee":
        kwargs["DOT_PRECISION"] = "fp16x3"
    values = dict(zip(fn.arg_names, args, strict=False)) | kwargs
    signature, constants, attrs = {}, {}, {}
    for i, param in enumerate(fn.params):
        value = values[param.name]
        if param.is_constexpr:
            signature[param.name], constants[param.name] = "constexpr", value
            continue
        if _specialized_to_one(param, value):
            # The JIT compiles an integer argument equal to 1 as the constant 1 (a unit
            # stride): without it a row kernel's loads were 4 bytes each in this build and
            # 16 on the GPU (L1 40-like layer norm of 2-D rows: 100 registers, 50 loads).
            signature[param.name], constants[param.name] = "constexpr", 1
            continue
        signature[param.name] = _arg_type(value)
        aligned = signature[param.name].startswith("*") or (
            isinstance(value, int) and not isinstance(value, bool) and value % 16 == 0)  # fmt: skip
        if aligned:
            attrs[(i,)] = [["tt.divisibility", 16]]
    built = compile_sm90(fn, signature, constants, attrs, warps, stages, maxnreg)
    grid = launch["grid"]
    grid = grid(constants) if callable(grid) else grid
    programs = math.prod(int(g) for g in grid)
    name = fn.__name__ + (f"[{launch['config']}]" if "config" in launch else "")
    return {"kernel": name, "grid": programs, "warps": warps, **built, "mb": _tensor_mb(args)}


def _tensor_mb(args: tuple[Any, ...]) -> float:
    """MB held by the launch's distinct tensor arguments (what it may read or write)."""
    import torch

    seen = {id(a): a for a in args if isinstance(a, torch.Tensor)}
    return sum(t.numel() * t.element_size() for t in seen.values()) / 1e6


def _kernel_lines(sass: str) -> tuple[list[str], dict[int, int]]:
    """The kernel's own SASS lines and each instruction line's address. Code past the first
    CALL target is a called function's (the range guard's noinline tile, which runs only for a
    tile that overflowed): not the kernel's."""
    lines = sass.splitlines()
    address: dict[int, int] = {}
    for k, line in enumerate(lines):
        found = re.match(r"\s*/\*([0-9a-f]{4,})\*/", line)
        if found:
            address[k] = int(found.group(1), 16)
    targets = [int(t, 16) for t in re.findall(r"\bCALL\.\w+(?:\.\w+)* (0x[0-9a-f]+)", sass)]
    if targets:  # the kernel's own code ends where the first called function begins
        own = min((k for k, a in address.items() if a >= min(targets)), default=len(lines))
        lines = lines[:own]
        address = {k: a for k, a in address.items() if k < own}
    return lines, address


def hot_loop(sass: str) -> tuple[list[str], dict[int, int], tuple[int, int] | None]:
    """The kernel's lines, their addresses, and the (first, last) line of the innermost loop (a
    backward branch) around every matrix instruction (HGMMA, HMMA); None without one."""
    lines, address = _kernel_lines(sass)
    matrix = [k for k, line in enumerate(lines) if re.search(r"\bH(G)?MMA\b", line)]
    if not matrix:
        return lines, address, None
    loops = []
    for k, line in enumerate(lines):
        branch = re.search(r"\bBRA\b.*?0x([0-9a-f]+)", line)
        if not branch or k not in address or int(branch.group(1), 16) >= address[k]:
            continue
        start = min((j for j, a in address.items() if a >= int(branch.group(1), 16)), default=k)
        if start <= matrix[0] and k >= matrix[-1]:
            loops.append((k - start, start, k))
    if not loops:
        return lines, address, None
    _, first, last = min(loops)
    return lines, address, (first, last)


def spill_counts(sass: str) -> tuple[int, int | None]:
    """(local-memory loads and stores in the kernel, those inside its hot loop), None without
    one (hot_loop). Why both: a contraction's build can spill where it never runs hot.
    Paper-preset program 27 (hardtanh -> transpose -> conv_transpose1d, 2026-12-04) has 600
    spill instructions in its sm_90 build, 75 in the K loop; without the fp16x3 range guard's
    second (ieee) loop, 3. L1 62's conv (2026-12-04): 32 spill instructions of its own, 1,072
    in the guard's function."""
    lines, _, loop = hot_loop(sass)
    spilled = [k for k, line in enumerate(lines) if re.search(r"\b(STL|LDL)\b", line)]
    if loop is None:
        return len(spilled), None
    return len(spilled), sum(loop[0] <= k <= loop[1] for k in spilled)


def loop_profile(sass: str) -> tuple[int, dict[str, int]] | None:
    """(instructions in the hot loop, its global loads by opcode), None without one. The loads
    say whether the pipeliner could stage the tiles: cp.async (LDGSTS) copies 4, 8 or 16
    bytes, so 2-byte loads (LDG.E.U16, fp16 parts of rows masked at an odd length) stay in
    registers unpipelined. KernelBench L1 8's fp16x3 loop (K 2949, 2026-12-05): 812
    instructions and 128 LDG.E.U16 a step; with its rows padded and masked at 2960: 327 and
    16 LDGSTS.E.BYPASS.128."""
    lines, address, loop = hot_loop(sass)
    if loop is None:
        return None
    body = [lines[k] for k in range(loop[0], loop[1] + 1) if k in address]
    loads: dict[str, int] = {}
    for line in body:
        found = re.search(
            r"\*/\s+(?:@!?U?P\w+\s+)?((?:LDGSTS|LDG(?!DEPBAR)|UTMALDG)[A-Z0-9_.]*)", line
        )
        if found:
            loads[found.group(1)] = loads.get(found.group(1), 0) + 1
    return len(body), loads


def _sass(cubin: bytes) -> str:
    return _cuobjdump(cubin, "-sass")


def _cuobjdump(cubin: bytes, flag: str) -> str:
    import triton

    tool = pathlib.Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([str(tool), flag, f.name], capture_output=True, text=True,
                              check=True).stdout  # fmt: skip


def _resources(cubin: bytes) -> tuple[int, int]:
    out = _cuobjdump(cubin, "--dump-resource-usage")
    found = re.search(r"REG:(\d+).*?SHARED:(\d+)", out)
    if not found:
        raise RuntimeError(f"no resource usage in cuobjdump's output: {out[:200]}")
    return int(found.group(1)), int(found.group(2))


# --precision: the dtype the floating inputs take (fp32 keeps the program's own).
HALF_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}


def audit(program: str, variant: int = 0, precision: str = "fp32") -> list[dict[str, Any]]:
    """Every launch of the teacher's candidate (schedule `variant`) for `program`, judged for
    occupancy; `precision` bf16 or fp16 passes the floating inputs in that dtype, as the
    verifier casts them (the wrapper then takes its half-precision branches)."""
    import importlib.util

    import torch

    from drtriton.program import parse
    from drtriton.teach import emit

    # Meta tensors take the GPU's branches of the wrapper: its fp16x3 split, and the launches
    # that only run with it (an operand's fp16 parts, emit_split.cc).
    candidate = (
        emit(program, variant=variant)
        .replace('.device.type != "cuda"', '.device.type not in ("cuda", "meta")')
        .replace('.device.type == "cuda"', '.device.type in ("cuda", "meta")')
    )
    shapes = parse(program)
    with tempfile.TemporaryDirectory(prefix="drtriton-audit-") as folder:
        path = pathlib.Path(folder) / "candidate.py"  # Triton reads kernels' source from a file
        path.write_text(candidate)
        spec = importlib.util.spec_from_file_location("audited_candidate", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        # An autotuned kernel lists its tiles for a GPU, its first alone elsewhere: the GPU's.
        available, torch.cuda.is_available = torch.cuda.is_available, lambda: True
        try:
            spec.loader.exec_module(module)
        finally:
            torch.cuda.is_available = available
        half = HALF_DTYPES.get(precision)
        inputs = []
        for name in shapes.inputs:
            dtype = getattr(torch, shapes.dtypes.get(name, "float32"))
            if half is not None and dtype.is_floating_point:
                dtype = getattr(torch, half)
            inputs.append(torch.empty(shapes.shapes[name], device="meta", dtype=dtype))
        # A cooperative kernel's grid is sized by the GPU's SMs (rows_coop.cc): the H200's.
        properties = torch.cuda.get_device_properties
        torch.cuda.get_device_properties = lambda device: H200_PROPERTIES
        try:
            with Launches() as launches:
                module.triton_fused_operator(*inputs)
        finally:
            torch.cuda.get_device_properties = properties
        rows = []
        for launch in launches.seen:
            row = compile_launch(launch)
            row["per_sm"] = programs_per_sm(row["regs"], row["warps"], row["shared"])
            if row["per_sm"] == 0:  # more shared memory than an SM has: the tile cannot run
                rows.append({**row, "rounds": None, "last_fill": None, "flag": False})
                continue
            row["rounds"], row["last_fill"] = rounds_and_fill(row["grid"], row["per_sm"])
            row["flag"] = (row["rounds"] < FLAG_ROUNDS and row["last_fill"] < FLAG_FILL
                           and row["mb"] >= FLAG_MB)  # fmt: skip
            rows.append(row)
    return rows


def _program(code: str, every: bool, classify: Any) -> str | None:
    """The problem's functional program: a memory-bound one's, or with `every` any fully
    mapped one's; None otherwise."""
    if not every:
        view = classify(code)
        return view["program"] if view["kind"] == "memory" else None
    from drtriton.frontend import from_module_source

    try:
        return from_module_source(code, fake_inputs=True).program_text
    except Exception:  # a problem the frontend cannot export has no kernels to audit
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", type=pathlib.Path,
                    default=ROOT / ".devdata" / "kernelbench" / "level1.jsonl")  # fmt: skip
    ap.add_argument("--programs", type=pathlib.Path,
                    help="synthetic program records (JSONL with `source`, as `drtriton synth` "
                    "writes and teacher_acceptance.py keeps) instead of KernelBench problems; "
                    "--ids then names their `index`")  # fmt: skip
    ap.add_argument("--ids", type=int, nargs="+", help="only these problem ids")
    ap.add_argument("--variant", type=int, default=0, help="the teacher's schedule variant")
    ap.add_argument("--all", action="store_true",
                    help="every fully mapped problem, matrix products and convolutions too "
                    "(each autotuned tile a row)")  # fmt: skip
    ap.add_argument("--precision", choices=("fp32", *HALF_DTYPES), default="fp32",
                    help="the inputs' dtype: bf16 or fp16 audits the half-precision kernels "
                    "(TMA contractions among them)")  # fmt: skip
    ap.add_argument("--out", help="write the rows as JSON here")
    args = ap.parse_args(argv)
    source = args.programs or args.problems
    if not source.is_file():
        print(f"occupancy_audit: no such file: {source}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from drtriton.files import write_text_atomic
    from memory_bound_speed import classify

    table = []
    for line in source.read_text().splitlines():
        record = json.loads(line)
        key = record.get("index") if args.programs else record["problem_id"]
        if args.ids and key not in args.ids:
            continue
        if args.programs:  # a synthetic program is the teacher's input as it stands
            program = record["source"]
            record["name"] = str(record.get("id", key))
        else:
            program = _program(record["code"], args.all, classify)
        if program is None:
            continue
        try:
            rows = audit(program, args.variant, args.precision)
        except Exception as exc:  # one problem's failure is its row, the audit goes on
            rows = [{"error": f"{type(exc).__name__}: {str(exc)[:160]}"}]
        for row in rows:
            table.append({"problem": record["name"], **row})
    print(f"{'problem':<36} {'kernel':<34} {'MB':>7} {'grid':>7} {'warps':>5} {'regs':>4} "
          f"{'smem':>6} {'bar':>4} {'spill':>5} {'loop':>4} {'per SM':>6} {'rounds':>7} "
          f"{'last':>5} {'loop instr':>10}  loop global loads")  # fmt: skip
    for r in table:
        if "error" in r:
            print(f"{r['problem'][:36]:<36} error: {r['error']}")
            continue
        if r["rounds"] is None:
            print(f"{r['problem'][:36]:<36} {r['kernel'][-34:]:<34} {r['mb']:>7.0f} "
                  f"{r['grid']:>7} {r['warps']:>5} {r['regs']:>4} {r['shared']:>6} "
                  f"{r['barriers']:>4}  does not fit "
                  "an SM (the autotuner skips it)")  # fmt: skip
            continue
        mark = "  <- thin last round" if r["flag"] else ""
        loop = "" if r["loop_spills"] is None else r["loop_spills"]
        instructions = "" if r["loop_instructions"] is None else r["loop_instructions"]
        loads = ", ".join(f"{n} {op}" for op, n in sorted((r["loop_loads"] or {}).items()))
        print(f"{r['problem'][:36]:<36} {r['kernel'][-34:]:<34} {r['mb']:>7.0f} {r['grid']:>7} "
              f"{r['warps']:>5} {r['regs']:>4} {r['shared']:>6} {r['barriers']:>4} "
              f"{r['spills']:>5} {loop:>4} {r['per_sm']:>6} {r['rounds']:>7.2f} "
              f"{r['last_fill']:>5.2f} {instructions:>10}  {loads}{mark}")  # fmt: skip
    if args.out:
        write_text_atomic(args.out, json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

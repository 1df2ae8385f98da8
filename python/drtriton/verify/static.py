"""Static checks on a candidate's source, before any of it runs.

Each rule below carries its rationale: the trick it closes. The dynamic checks (poisoned torch,
launch counting, fresh inputs, isolation) are the real defence; these rules make the cheap tricks
cost a rejection up front and remove the tools the expensive ones need (frames, builtins, private
modules, patching). Every issue names the candidate line it was found on.

Rule families:
- structure: parses, defines the entry point, defines a `@triton.jit` kernel and launches one
  (`kernel[grid](...)`), so a kernel that is defined but never launched (a decoy) fails here.
- imports: an allow-list (torch, torch.nn(.functional), triton, triton.language, and pure-Python
  helpers). Everything else can compute on the host (numpy), spawn work the harness cannot see
  (threading, multiprocessing, subprocess), read or patch the harness (sys, gc, inspect, os,
  importlib, ctypes) or touch timers (time, timeit).
- names: exec/eval/compile/__import__/getattr/setattr/globals/open/exit... reach every banned thing
  by a string the other rules cannot see, or end the process (`exit`).
- try/except: a kernel that fails inside `try` and falls back to torch in `except` would pass
  whenever torch is healthy; a broken kernel must be a visible error.
- patching: assigning to (or deleting) an attribute of an imported module or class (torch.relu =,
  torch.Tensor.__matmul__ =, triton.runtime... =, time.perf_counter =) is how published exploits
  replaced the reference, the launcher or the timer.
- private and dunder attributes (torch._C, tensor.__class__, frame.f_globals via __traceback__): the
  way out of the dispatch-mode poisoning and into the harness's objects. `__init__` is allowed.
- torch paths: torch.compile/jit/_dynamo (the compiler would write the kernel, not the candidate),
  streams, events, graphs, synchronize (timing games: work off the timed stream, replayed graphs),
  torch.backends/set_* (process-wide switches), torch.ops/library/utils (custom or raw ops),
  save/load/from_numpy (files and host compute), `.numpy()`/`.tolist()` (host compute).
- triton paths: only jit, autotune, Config, heuristics, cdiv, next_power_of_2, triton.language and
  triton.tools.tensor_descriptor.TensorDescriptor (a host record of a tensor's base, shape,
  strides and block that the launcher turns into a TMA descriptor); triton.runtime/compiler/
  testing/knobs hold the launcher, the cache and do_bench.
- pre_hook/post_hook: Python callbacks that the autotuner runs around launches.
"""

from __future__ import annotations

import ast
import dataclasses

ALLOWED_IMPORTS = (
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "triton",
    "triton.language",
    # TensorDescriptor: a host-side record (tensor, shape, strides, block) that the launcher
    # turns into a TMA descriptor for the kernel; it reads and computes nothing itself.
    "triton.tools.tensor_descriptor",
    "math",
    "typing",
    "typing_extensions",
    "functools",
    "itertools",
    "operator",
    "collections",
    "collections.abc",  # ABCs only; model code (Swin) imports it for isinstance checks
    # Model code (KernelBench L3 Mamba2) rearranges with einops; its functions run torch
    # operators, which the worker's dispatch watch sees like any other torch call.
    "einops",
    "dataclasses",
    "enum",
    "numbers",
    "__future__",
)
# Anything under these is allowed too (libdevice lives in triton.language.extra...).
ALLOWED_IMPORT_PREFIXES = ("triton.language.",)

BANNED_NAMES = {
    "exec": "runs code the static checks cannot see",
    "eval": "runs code the static checks cannot see",
    "compile": "builds code the static checks cannot see",
    "__import__": "imports modules around the import allow-list",
    "getattr": "reaches banned attributes through a string",
    "setattr": "patches objects through a string",
    "delattr": "patches objects through a string",
    "globals": "reads or rewrites module state behind the checks",
    "locals": "reads or rewrites frame state behind the checks",
    "vars": "reads or rewrites object dictionaries behind the checks",
    "open": "reads the task or reference files, writes state between calls",
    "breakpoint": "enters a debugger",
    "input": "reads the harness's stdin",
    "exit": "ends the process to dodge the verdict",
    "quit": "ends the process to dodge the verdict",
    "__builtins__": "reaches the builtins that are banned by name",
    "memoryview": "reads raw memory",
}

# Dotted torch paths that are banned, with the trick each one serves.
BANNED_TORCH = {
    "torch.compile": "torch's compiler would write the kernels, not the candidate",
    "torch.jit": "TorchScript computes with torch",
    "torch.backends": "process-wide switches (TF32, cudnn) change what the harness measures",
    "torch.library": "custom operators hide torch compute from the checks",
    "torch.ops": "raw operators hide torch compute from the checks",
    "torch.utils": "holds the dispatch-mode and hook machinery of the harness",
    "torch.overrides": "disables the torch-function machinery",
    "torch.fx": "graph rewriting",
    "torch.export": "graph capture",
    "torch.hub": "downloads code",
    "torch.multiprocessing": "work outside the candidate's process",
    "torch.distributed": "work outside the candidate's process",
    "torch.autograd.graph": "hooks",
    "torch.Stream": "work off the timed stream",
    "torch.Event": "timer games",
    "torch.cuda.Stream": "work off the timed stream",
    "torch.cuda.stream": "work off the timed stream",
    "torch.cuda.ExternalStream": "work off the timed stream",
    "torch.cuda.set_stream": "work off the timed stream",
    "torch.cuda.current_stream": "work off the timed stream",
    "torch.cuda.default_stream": "work off the timed stream",
    "torch.cuda.Event": "timer games",
    "torch.cuda.synchronize": "timer games",
    "torch.cuda.graph": "replayed graphs return stale results",
    "torch.cuda.graphs": "replayed graphs return stale results",
    "torch.cuda.CUDAGraph": "replayed graphs return stale results",
    "torch.cuda.make_graphed_callables": "replayed graphs return stale results",
    "torch.cuda.memory": "allocator state",
    "torch.cuda.set_sync_debug_mode": "process-wide switch",
    "torch.save": "files outlive the call",
    "torch.load": "reads files (the reference never exists there, but the task does)",
    "torch.from_numpy": "host compute in numpy",
    "torch.set_default_dtype": "process-wide switch",
    "torch.set_default_device": "process-wide switch",
    "torch.set_flush_denormal": "process-wide switch",
    "torch.set_float32_matmul_precision": "process-wide switch",
    "torch.use_deterministic_algorithms": "process-wide switch",
    "torch.classes": "custom C++ classes",
}
BANNED_TENSOR_METHODS = {
    "numpy": "host compute in numpy",
    "tolist": "host compute in Python",
    "record_stream": "work off the timed stream",
    "register_hook": "hooks",
    "untyped_storage": "raw storage access",
    "storage": "raw storage access",
}
ALLOWED_TRITON = {"jit", "autotune", "Config", "heuristics", "cdiv", "next_power_of_2", "language"}
# Host tensor descriptors (TMA): records the launcher reads, nothing that runs or times.
ALLOWED_TRITON_TOOLS = ("triton.tools.tensor_descriptor.TensorDescriptor",)
BANNED_KEYWORDS = {
    "pre_hook": "autotuner callbacks run Python (and torch) around the launch",
    "post_hook": "autotuner callbacks run Python (and torch) around the launch",
}
ALLOWED_DUNDERS = {"__init__"}


@dataclasses.dataclass(frozen=True)
class Issue:
    status: str  # "compile_error" | "forbidden" | "not_genuine"
    line: int | None
    message: str

    def reason(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.message}"


def _import_allowed(module: str) -> bool:
    return module in ALLOWED_IMPORTS or module.startswith(ALLOWED_IMPORT_PREFIXES)


def _dotted(node: ast.AST) -> tuple[str, list[str]] | None:
    """`a.b.c` -> ("a", ["b", "c"]); None when the chain does not start at a plain name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, parts[::-1]
    return None


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


class _Checker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.issues: list[Issue] = []
        self.aliases: dict[str, str] = {}  # local name -> dotted module/object path it imports
        self.jit_kernels: set[str] = set()
        self.autotuned: set[str] = set()  # kernels under @triton.autotune
        self.launched: set[str] = set()

    def forbid(self, node: ast.AST, message: str) -> None:
        self.issues.append(Issue("forbidden", getattr(node, "lineno", None), message))

    # -- imports --------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not _import_allowed(alias.name):
                self.forbid(
                    node, f"import of {alias.name!r} is not allowed ({_why_import(alias.name)})"
                )
            local = alias.asname or alias.name.split(".")[0]
            self.aliases[local] = alias.name if alias.asname else alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or not _import_allowed(module):
            self.forbid(
                node, f"import from {module or '.'!r} is not allowed ({_why_import(module)})"
            )
            return
        for alias in node.names:
            if alias.name == "*":
                self.forbid(node, "star imports hide which names the candidate uses")
                continue
            full = f"{module}.{alias.name}"
            self.aliases[alias.asname or alias.name] = full
            self._check_path(node, full)

    # -- names, attributes, calls -----------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        if node.id in BANNED_NAMES and node.id not in self.aliases:
            self.forbid(node, f"{node.id!r} is not allowed ({BANNED_NAMES[node.id]})")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if attr.startswith("__") and attr.endswith("__") and attr not in ALLOWED_DUNDERS:
            self.forbid(
                node,
                f"dunder attribute {attr!r} is not allowed (reaches frames, classes and builtins)",
            )
        dotted = _dotted(node)
        if dotted and dotted[0] in self.aliases:
            full = ".".join([self.aliases[dotted[0]], *dotted[1]])
            if any(p.startswith("_") and not p.startswith("__") for p in dotted[1]):
                self.forbid(node, f"private attribute {full!r} is not allowed (library internals)")
            self._check_path(node, full)
        elif attr in BANNED_TENSOR_METHODS and isinstance(node.ctx, ast.Load):
            self.forbid(node, f"'.{attr}' is not allowed ({BANNED_TENSOR_METHODS[attr]})")
        self.generic_visit(node)

    def _check_path(self, node: ast.AST, full: str) -> None:
        for banned, why in BANNED_TORCH.items():
            if full == banned or full.startswith(banned + "."):
                self.forbid(node, f"{full!r} is not allowed ({why})")
                return
        if full.startswith("torch.") and full.split(".")[1].startswith("set_"):
            self.forbid(node, f"{full!r} is not allowed (process-wide switch)")
        parts = full.split(".")
        tool = any(full == t or full.startswith(t + ".") for t in ALLOWED_TRITON_TOOLS)
        if parts[0] != "triton" or len(parts) == 1 or tool:
            return
        if parts[1] not in ALLOWED_TRITON:
            self.forbid(
                node,
                f"{full!r} is not allowed (triton's runtime, compiler, testing and knobs hold the "
                "launcher, the cache and the timers)",
            )

    def visit_Call(self, node: ast.Call) -> None:
        for kw in node.keywords:
            if kw.arg in BANNED_KEYWORDS:
                self.forbid(node, f"keyword {kw.arg!r} is not allowed ({BANNED_KEYWORDS[kw.arg]})")
        if isinstance(node.func, ast.Subscript):
            name = _root_name(node.func.value)
            if isinstance(node.func.value, ast.Name):
                self.launched.add(node.func.value.id)
            elif isinstance(node.func.value, ast.Attribute):
                self.launched.add(node.func.value.attr)
            elif name:
                self.launched.add(name)
        self.generic_visit(node)

    # -- structure ----------------------------------------------------------------------------
    def visit_Try(self, node: ast.AST) -> None:
        self.forbid(node, "try/except is not allowed (a failing kernel could fall back to torch)")
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def _check_target(self, target: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._check_target(elt)
            return
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            root = _root_name(target)
            if root in self.aliases:
                self.forbid(
                    target,
                    f"assigning into imported {self.aliases[root]!r} is not allowed "
                    "(patching torch, triton, timers or the verifier)",
                )

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for dec in node.decorator_list:
            if self._is_triton_decorator(dec):
                self.jit_kernels.add(node.name)
            if self._triton_name(dec) == "triton.autotune":
                self.autotuned.add(node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def _triton_name(self, dec: ast.AST) -> str | None:
        """The decorator's full dotted name through this file's imports, e.g. triton.jit."""
        target = dec.func if isinstance(dec, ast.Call) else dec
        dotted = _dotted(target)
        if not dotted or dotted[0] not in self.aliases:
            return None
        return ".".join([self.aliases[dotted[0]], *dotted[1]])

    def _is_triton_decorator(self, dec: ast.AST) -> bool:
        return self._triton_name(dec) in ("triton.jit", "triton.autotune", "triton.heuristics")


def _why_import(module: str) -> str:
    root = module.split(".")[0]
    reasons = {
        "numpy": "host compute",
        "time": "timer games",
        "timeit": "timer games",
        "threading": "work the harness cannot see",
        "multiprocessing": "work the harness cannot see",
        "concurrent": "work the harness cannot see",
        "asyncio": "work the harness cannot see",
        "subprocess": "escapes the process",
        "os": "files, processes and environment of the harness",
        "sys": "the harness's modules and frames",
        "gc": "the harness's objects",
        "inspect": "the harness's frames",
        "ctypes": "raw memory",
        "importlib": "imports around the allow-list",
        "builtins": "rebinds builtins",
        "socket": "network",
        "drtriton": "the verifier itself",
    }
    return reasons.get(root, "not on the allow-list")


def check_source(source: str, entry_point: str, *, filename: str = "<candidate>") -> list[Issue]:
    """All static issues of `source`; an empty list means it may run.

    `entry_point` is `triton_fused_operator` (functional task) or `ModelNew` (module task).
    """
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        return [Issue("compile_error", exc.lineno, f"syntax error: {exc.msg}")]
    checker = _Checker()
    checker.visit(tree)
    issues = list(checker.issues)
    defined = {
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    if entry_point not in defined:
        issues.append(
            Issue("compile_error", None, f"the candidate does not define {entry_point!r}")
        )
    if not checker.jit_kernels:
        issues.append(Issue("not_genuine", None, "no @triton.jit kernel is defined"))
    elif not (checker.jit_kernels & checker.launched):
        issues.append(
            Issue(
                "not_genuine",
                None,
                f"@triton.jit kernels {sorted(checker.jit_kernels)} are defined but never launched "
                "with kernel[grid](...)",
            )
        )
    # Forbidden constructs first (the most serious), then a missing entry point, then decoys.
    order = {"forbidden": 0, "compile_error": 1, "not_genuine": 2}
    issues.sort(key=lambda i: order[i.status])
    return issues


def autotunes(source: str) -> bool:
    """Whether `source` defines a `@triton.autotune` kernel: its first call times its configs
    with Triton's own benchmark, which the harness must keep alone on the GPU (harness.py)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    checker = _Checker()
    checker.visit(tree)
    return bool(checker.autotuned)


def entry_signature(source: str, name: str) -> list[str] | None:
    """Positional parameter names of top-level function `name` (None when absent or unparsable)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return [a.arg for a in node.args.posonlyargs + node.args.args]
    return None

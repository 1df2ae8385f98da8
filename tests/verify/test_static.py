"""Static rules: each reports its status and the candidate line."""

from __future__ import annotations

import pytest
from conftest import HERE

from drtriton.verify import static
from drtriton.verify.static import check_source, entry_signature

GOOD = (HERE / "honest" / "add_relu.py").read_text()
ENTRY = "triton_fused_operator"


def test_honest_candidate_has_no_issues() -> None:
    assert check_source(GOOD, ENTRY) == []


def test_syntax_error_reports_line() -> None:
    (issue,) = check_source("import torch\n\ndef f(:\n", ENTRY)
    assert issue.status == "compile_error" and issue.line == 3


@pytest.mark.parametrize(
    ("snippet", "needle"),
    [
        ("import numpy", "numpy"),
        ("import os", "os"),
        ("from time import perf_counter", "time"),
        ("x = eval('1')", "eval"),
        ("torch.relu = None", "assigning into imported"),
        ("tl.sum = None", "assigning into imported"),
        ("s = torch.cuda.Stream()", "torch.cuda.Stream"),
        ("e = torch.cuda.Event()", "torch.cuda.Event"),
        ("c = torch._C", "private attribute"),
        ("g = f.__globals__", "dunder"),
        ("from triton.testing import do_bench", "triton.testing"),
        ("k = triton.runtime", "triton.runtime"),
        ("y = torch.compile(f)", "torch.compile"),
        ("z = x.numpy()", ".numpy"),
        ("import threading", "threading"),
        # Only the tensor descriptor of triton.tools (TMA): its other modules are not records.
        ("from triton.tools.disasm import get_sass", "triton.tools.disasm"),
        ("d = triton.tools.tensor_descriptor_x", "triton.tools"),
    ],
)
def test_banned_construct_is_forbidden_with_its_line(snippet: str, needle: str) -> None:
    source = GOOD + "\n\n" + snippet + "\n"
    issues = check_source(source, ENTRY)
    assert issues, snippet
    first = issues[0]
    assert first.status == "forbidden", first
    assert needle in first.message, first.message
    assert first.line == source.count("\n") - 0 or first.line == len(source.splitlines()), first


@pytest.mark.parametrize(
    "snippet",
    [
        "import collections.abc",
        "from itertools import repeat",
        "import math",
        "from einops import rearrange",
        # A host TMA descriptor (the teacher's half-precision contractions).
        "from triton.tools.tensor_descriptor import TensorDescriptor\n"
        "d = TensorDescriptor.from_tensor",
    ],
)
def test_pure_python_helpers_model_code_imports_are_allowed(snippet: str) -> None:
    # A ModelNew carries the problem's own module code (KernelBench L3 Swin: collections.abc;
    # L3 Mamba2: einops).
    assert check_source(GOOD + "\n" + snippet + "\n", ENTRY) == []


def test_try_except_is_forbidden() -> None:
    src = GOOD.replace(
        "    add_relu_kernel[grid]",
        "    try:\n        pass\n    except Exception:\n        pass\n    add_relu_kernel[grid]",
    )
    assert check_source(src, ENTRY)[0].status == "forbidden"


def test_missing_entry_point_and_decoys() -> None:
    src = GOOD.replace("def triton_fused_operator", "def other")
    assert check_source(src, ENTRY)[0].status == "compile_error"
    no_launch = GOOD.replace("add_relu_kernel[grid](x0, x1, out, n, BLOCK=256)", "pass")
    assert check_source(no_launch, ENTRY)[0].status == "not_genuine"
    no_jit = "import torch\n\ndef triton_fused_operator(x):\n    return x\n"
    assert check_source(no_jit, ENTRY)[0].status == "not_genuine"


def test_entry_signature() -> None:
    assert entry_signature(GOOD, ENTRY) == ["x0", "x1"]
    assert entry_signature(GOOD, "missing") is None


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import triton\n@triton.autotune(configs=[], key=[])\n@triton.jit\ndef k(): pass\n", True),
        (
            "from triton import autotune, jit\n@autotune(configs=[], key=[])\n@jit\ndef k(): pass\n",
            True,
        ),
        ("import triton\n@triton.jit\ndef k(): pass\n", False),
        # a local function named like Triton's is not Triton's autotuner
        ("def autotune(f): return f\n@autotune\ndef k(): pass\n", False),
        ("def broken(:\n", False),
    ],
)
def test_autotunes_finds_triton_autotune_decorators(source: str, expected: bool) -> None:
    assert static.autotunes(source) is expected

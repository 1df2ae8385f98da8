"""A tiny model plus teacher pairs shared by the SFT and RL tests (the loader of benchmarks/
scripts is tests/benchmark_scripts.py, a plugin for every test folder)."""

from __future__ import annotations

import json
import pathlib

import pytest

HEADER = "import torch\nimport torch.nn.functional as F\n\n"
TASKS = {
    "relu": ("t0 = torch.relu(x0)", "torch.randn(8, 16)"),
    "sigmoid": ("t0 = torch.sigmoid(x0)", "torch.randn(4, 32)"),
    "neg": ("t0 = torch.neg(x0)", "torch.randn(64)"),
    "tanh": ("t0 = torch.tanh(x0)", "torch.randn(2, 8, 8)"),
}


def task(op: str) -> str:
    line, inputs = TASKS[op]
    return (f"{HEADER}def fused_operator(x0):\n    {line}\n    return t0\n\n"
            f"def get_inputs():\n    return [{inputs}]\n")  # fmt: skip


def _completion(source: str) -> str:
    try:
        from drtriton.teach import emit

        return emit(source)
    except Exception:  # the teacher may be missing from a partial build: a fixed kernel
        return "import triton\n\n@triton.jit\ndef k(x_ptr):\n    pass\n"


@pytest.fixture(scope="session")
def pairs_file(tmp_path_factory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("data") / "pairs.jsonl"
    with path.open("w") as f:
        for i, op in enumerate(TASKS):
            source = task(op)
            record = {"id": f"p{i}", "level": 1, "ops": [op], "source": source,
                      "completion": _completion(source), "correct": True}  # fmt: skip
            f.write(json.dumps(record) + "\n")
        f.write(json.dumps({"id": "bad", "source": task("relu"), "completion": "x",
                            "correct": False}) + "\n")  # fmt: skip
    return path


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory, pairs_file) -> pathlib.Path:
    from drtriton.jsonl import read_jsonl
    from drtriton.train.tiny import TinyConfig, corpus_from_records, make_tiny

    out = tmp_path_factory.mktemp("tiny") / "model"
    texts = corpus_from_records(list(read_jsonl(pairs_file)))
    return make_tiny(texts, out, TinyConfig(vocab_size=600))

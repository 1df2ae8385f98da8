"""The harness running out of GPU memory is not a verdict: verify raises ResourceError, the
batch verifier and the teacher's pairs mark the pair `retry`, and a resumed batch redoes it."""

from __future__ import annotations

import json
import pathlib

import pytest
import torch
from conftest import HERE, task_source

from drtriton.errors import ResourceError
from drtriton.teach import pairs as teach_pairs
from drtriton.verify import Options, batch, harness, verify


def _out_of_memory(*_args: object, **_kwargs: object) -> None:
    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 256.00 MiB.")


@pytest.fixture
def harness_out_of_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness._Judgement, "run", _out_of_memory)


def _honest() -> str:
    return (HERE / "honest" / "add_relu.py").read_text()


def test_verify_raises_resource_error(harness_out_of_memory: None) -> None:
    with pytest.raises(ResourceError, match="ran out of GPU memory"):
        verify(task_source("add_relu"), _honest(), device="cpu", timeout=30)


def test_an_accelerator_error_out_of_memory_is_a_resource_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A CUDA call other than an allocation (a capture stream) reports memory running out as
    # torch.AcceleratorError; any other error still propagates.
    def accelerator(*_args: object, **_kwargs: object) -> None:
        raise torch.AcceleratorError("CUDA error: out of memory")

    monkeypatch.setattr(harness._Judgement, "run", accelerator)
    with pytest.raises(ResourceError, match="ran out of GPU memory"):
        verify(task_source("add_relu"), _honest(), device="cpu", timeout=30)

    def other(*_args: object, **_kwargs: object) -> None:
        raise torch.AcceleratorError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(harness._Judgement, "run", other)
    with pytest.raises(torch.AcceleratorError, match="illegal memory access"):
        verify(task_source("add_relu"), _honest(), device="cpu", timeout=30)


def test_batch_marks_retry_and_redoes_it(
    harness_out_of_memory: None, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    monkeypatch.setattr(batch, "_OPTS", Options(device="cpu", timeout=30))
    record = {"id": "a", "task": task_source("add_relu"), "candidate": _honest()}
    line = json.loads(batch._one(record))
    assert line["retry"] is True and "GPU memory" in line["error"]
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps(line) + "\n" + json.dumps({"id": "b", "status": "correct"}) + "\n")
    assert batch.done_ids(str(out)) == {"b"}


def test_teacher_pair_marked_retry(
    harness_out_of_memory: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(teach_pairs, "_OPTS", Options(device="cpu", timeout=30))
    monkeypatch.setattr(
        teach_pairs, "pair_records", lambda r, k, g: [{**r, "completion": _honest()}]
    )
    record = {"id": "p", "level": 1, "ops": ["relu"], "source": task_source("add_relu")}
    (pair,) = teach_pairs._work((record, 1, False))
    assert pair["retry"] is True and "status" not in pair


def test_cli_reports_not_judged_without_a_traceback(
    harness_out_of_memory: None, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from drtriton.cli import main

    task, candidate = tmp_path / "task.py", tmp_path / "candidate.py"
    task.write_text(task_source("add_relu"))
    candidate.write_text(_honest())
    assert main(["verify", str(task), str(candidate), "--json"]) == 2
    err = capsys.readouterr().err
    assert "not judged" in err and "ran out of GPU memory" in err and "Traceback" not in err


def test_the_workers_own_out_of_memory_is_not_the_candidates_crash() -> None:
    # Only the worker (DRT_VERIFY_DIR is its private directory) fails to draw the inputs, as a
    # 1.75 GB input set did in six processes on one H200: that is the harness's failure, not
    # a `crashed` verdict against an honest candidate.
    task = task_source("add_relu").replace(
        "def get_inputs():\n",
        "def get_inputs():\n"
        "    import os\n"
        "    if os.environ.get('DRT_VERIFY_DIR'):\n"
        "        raise torch.OutOfMemoryError('CUDA out of memory. Tried to allocate 1.75 GiB.')\n",
    )
    with pytest.raises(ResourceError, match="in the worker's correctness call: CUDA out of memory"):
        verify(task, _honest(), device="cpu", timeout=60)

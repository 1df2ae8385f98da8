"""`drtriton eval kernelbench`: the runner with a fake optimizer (resume, crashes, hangs, the
time budget), its user errors, and one end-to-end run with the real optimizer on the CPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from drtriton.cli import main
from drtriton.evaluate.kernelbench import (
    RunConfig,
    load_problems,
    problem_timeout_s,
    run_kernelbench,
)
from drtriton.evaluate.store import read_results

HERE = Path(__file__).resolve().parent
FAKE = "eval_fake_optimize:optimize_source"


def problem(level: int, pid: int, marker: str = "") -> dict:
    code = f"# problem {level}/{pid} {marker}\nimport torch\n# time_ms=1.0\n# eager_ms=2.0\n# compile_ms=0.5\n"
    return {"level": level, "problem_id": pid, "name": f"{pid}_{marker or 'ok'}", "code": code}


def write_problems(path: Path, problems: list[dict]) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in problems))
    return path


def fake_config(**kw: object) -> RunConfig:
    return RunConfig(optimizer=FAKE, extra_pythonpath=[str(HERE)], **kw)  # type: ignore[arg-type]


def admit_with_a_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gives every device a memory budget (the CPU has none, so nothing would run alone):
    every problem needs 1 of 100 bytes."""
    from drtriton.evaluate import kernelbench, memory

    monkeypatch.setattr(kernelbench, "_admission",
                        lambda devices, cfg: memory.Admission({d: 100 for d in devices},
                                                              lambda p: 1))  # fmt: skip


def calls(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_results_resume_and_failures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "calls.txt"
    monkeypatch.setenv("EVAL_FAKE_CALLS", str(log))
    problems = [
        problem(1, 1),
        problem(1, 2, "CRASH"),
        problem(2, 5, "RAISE"),
        problem(2, 6, "HANG"),
    ]
    out = tmp_path / "run"
    # Each problem is a child process that imports torch and drtriton: 4 s was too short for the
    # honest fake on a loaded 2-core CI machine (it timed out as well as HANG did).
    outcome = run_kernelbench(problems, out, fake_config(problem_timeout=15.0), progress=False)
    assert (outcome.ran, outcome.results, outcome.not_run) == (4, 4, 0)
    by_id = {r["id"]: r for r in read_results(out / "results.jsonl")}
    ok = by_id["L1_1"]
    assert ok["status"] == "correct" and ok["correct"] is True
    assert ok["speedup"] == pytest.approx(2.0) and ok["speedup_vs_compile"] == pytest.approx(0.5)
    assert (ok["n_ops"], ok["fused_segments"], ok["opaque_ops"]) == (2, 1, 1)
    assert (out / ok["kernel"]).read_text().startswith("class ModelNew")
    assert by_id["L1_2"]["status"] == "crashed" and not by_id["L1_2"]["correct"]
    assert "exited with code" in by_id["L1_2"]["error"]
    assert by_id["L2_5"]["status"] == "optimize_error"
    assert "the fake optimizer failed" in by_id["L2_5"]["error"]
    assert by_id["L2_6"]["status"] == "timeout"
    assert "problem timeout of 15 s" in by_id["L2_6"]["error"]
    assert by_id["L2_6"]["seconds"] < 15.0 + 12.0  # killed, not waited for
    assert by_id["L2_6"]["timeout_s"] == 15.0  # no tensors read on meta: nothing added
    assert len(calls(log)) == 4
    summary = (out / "summary.md").read_text()
    assert "| 1 | 2 | 2 | 0 | 1 | 50.0% | 1 | 0 |" in summary
    assert "crashed 1" in summary and "timeout 1" in summary

    # A rerun skips every finished problem (none is optimized again); a new one is run.
    outcome = run_kernelbench([*problems, problem(2, 7)], out, fake_config(), progress=False)
    assert (outcome.ran, outcome.results) == (1, 5)
    assert [c.split()[2] for c in calls(log)[4:]] == ["2/7"]


def test_rerun_oom_runs_only_the_out_of_memory_failures_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "calls.txt"
    monkeypatch.setenv("EVAL_FAKE_CALLS", str(log))
    monkeypatch.setenv("EVAL_FAKE_OOM", "1")
    problems = [problem(1, 1), problem(1, 2, "OOM"), problem(2, 3, "RAISE")]
    out = tmp_path / "run"
    run_kernelbench(problems, out, fake_config(), progress=False)
    assert read_results(out / "results.jsonl")[1]["status"] == "optimize_error"
    monkeypatch.delenv("EVAL_FAKE_OOM")  # the GPU has room now
    outcome = run_kernelbench(problems, out, fake_config(), progress=False)
    assert outcome.ran == 0  # a plain resume keeps every record
    outcome = run_kernelbench(problems, out, fake_config(rerun_oom=True), progress=False)
    assert outcome.ran == 1 and [c.split()[2] for c in calls(log)[3:]] == ["1/2"]
    by_id = {r["id"]: r for r in read_results(out / "results.jsonl")}
    assert by_id["L1_2"]["correct"] is True and by_id["L2_3"]["status"] == "optimize_error"


def test_a_problem_out_of_memory_beside_others_runs_once_more_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    admit_with_a_budget(monkeypatch)
    log = tmp_path / "calls.txt"
    monkeypatch.setenv("EVAL_FAKE_CALLS", str(log))
    monkeypatch.setenv("EVAL_FAKE_OOM", "1")  # the OOM problem fails alone too
    problems = [problem(1, 1), problem(1, 2, "OOM"), problem(1, 3)]
    out = tmp_path / "run"
    outcome = run_kernelbench(problems, out, fake_config(workers=2), progress=False)
    assert outcome.ran == 3  # one record each: the retry's replaces nothing, it is the record
    ran = [c.split()[2] for c in calls(log)]
    assert sorted(ran) == ["1/1", "1/2", "1/2", "1/3"]
    by_id = {r["id"]: r for r in read_results(out / "results.jsonl")}
    assert by_id["L1_2"]["status"] == "optimize_error" and by_id["L1_3"]["correct"] is True


def test_a_correct_problem_that_lost_a_candidate_to_memory_runs_once_more_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    admit_with_a_budget(monkeypatch)
    log = tmp_path / "calls.txt"
    monkeypatch.setenv("EVAL_FAKE_CALLS", str(log))
    monkeypatch.setenv("EVAL_FAKE_OOM", "1")  # the candidate is lost alone too
    problems = [problem(2, 1), problem(2, 2, "LOSTMEM")]
    outcome = run_kernelbench(problems, tmp_path / "run", fake_config(workers=2), progress=False)
    assert outcome.ran == 2
    assert sorted(c.split()[2] for c in calls(log)) == ["2/1", "2/2", "2/2"]
    by_id = {r["id"]: r for r in read_results(tmp_path / "run" / "results.jsonl")}
    assert by_id["L2_2"]["correct"] is True  # the second run's record, still correct

    # Without the time for a whole run alone, the first correct record stands.
    log.unlink()
    cfg = fake_config(workers=2, time_budget=60.0, problem_timeout=600.0)
    outcome = run_kernelbench(problems, tmp_path / "short", cfg, progress=False)
    assert outcome.ran == 2 and sorted(c.split()[2] for c in calls(log)) == ["2/1", "2/2"]


def test_each_problem_keeps_its_search_verdicts_in_the_output_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A problem stopped part way and run again by the resumed evaluation reads back the
    verdicts its first attempt stored (search.VerdictCache)."""
    configs = tmp_path / "configs.jsonl"
    monkeypatch.setenv("EVAL_FAKE_CONFIGS", str(configs))
    run_kernelbench([problem(1, 3), problem(2, 7)], tmp_path / "out", fake_config(), progress=False)
    files = sorted(json.loads(line)["verdicts_file"] for line in configs.read_text().splitlines())
    assert files == [
        str(tmp_path / "out" / "verdicts" / f"{pid}.jsonl") for pid in ("L1_3", "L2_7")
    ]


def test_the_timeout_grows_with_the_bytes_a_problem_moves() -> None:
    # 2^28 floats in (1 GiB) and as many out: 2.147 GB moved.
    code = (
        "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
        "    def forward(self, x):\n        return x * 2\n\n"
        "def get_inputs():\n    return [torch.rand(1024, 1024, 256)]\n\n"
        "def get_init_inputs():\n    return []\n"
    )
    big = {"level": 1, "problem_id": 1, "name": "1_big", "code": code}
    moved_gb = 2 * 4 * 1024 * 1024 * 256 / 1e9
    cfg = RunConfig(problem_timeout=240.0, timeout_s_per_gb=25.0)
    assert problem_timeout_s(big, cfg) == pytest.approx(240.0 + 25.0 * moved_gb)
    assert problem_timeout_s(big, RunConfig(problem_timeout=240.0, timeout_s_per_gb=0)) == 240.0
    # A problem whose shapes cannot be read on meta keeps the plain timeout.
    assert problem_timeout_s(problem(1, 2), cfg) == 240.0


def test_time_budget_leaves_the_rest_not_run(tmp_path: Path) -> None:
    problems = [problem(1, i) for i in range(1, 4)]
    out = tmp_path / "run"
    # A zero budget is spent before the first start: everything is listed as not run.
    outcome = run_kernelbench(problems, out, fake_config(time_budget=0.0), progress=False)
    assert (outcome.ran, outcome.results, outcome.not_run) == (0, 0, 3)
    text = (out / "summary.md").read_text()
    assert "Not run (3)" in text and "L1 1_ok" in text
    assert "| 1 | 3 | 0 | 3 |" in text


def test_workers_spread_over_devices_and_torn_lines_are_redone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "calls.txt"
    monkeypatch.setenv("EVAL_FAKE_CALLS", str(log))
    out = tmp_path / "run"
    out.mkdir()
    done = {"id": "L1_1", "level": 1, "problem_id": 1, "name": "1_ok", "status": "correct",
            "correct": True}  # fmt: skip
    (out / "results.jsonl").write_text(json.dumps(done) + '\n{"id": "L1_2", "lev')  # torn
    problems = [problem(1, i) for i in range(1, 5)]
    outcome = run_kernelbench(problems, out, fake_config(workers=2), progress=False)
    assert (outcome.ran, outcome.results) == (3, 4)
    assert sorted(c.split()[2] for c in calls(log)) == ["1/2", "1/3", "1/4"]
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len([ln for ln in lines if ln.startswith("{") and ln.endswith("}")]) == 4


def test_cli_user_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In process (drtriton.cli.main): the exit code and the message, no traceback."""

    def drtriton(*args: str) -> subprocess.CompletedProcess:
        code = main(list(args))
        return subprocess.CompletedProcess(args, code, "", capsys.readouterr().err)

    missing = drtriton("eval", "kernelbench", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    assert "Traceback" not in missing.stderr
    problems = write_problems(tmp_path / "p.jsonl", [problem(1, 1)])
    bad = drtriton("eval", "kernelbench", str(problems), "--out", str(tmp_path / "o"),
                   "--levels", "one")  # fmt: skip
    assert bad.returncode == 2 and "--levels" in bad.stderr
    absent = drtriton("eval", "kernelbench", str(problems), "--out", str(tmp_path / "o"),
                      "--levels", "3")  # fmt: skip
    assert absent.returncode == 2 and "no problems of level [3]" in absent.stderr
    nodir = drtriton("eval", "summarize", str(tmp_path / "missing"))
    assert nodir.returncode == 2 and "not a directory" in nodir.stderr
    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text('{"level": 1}\n')
    malformed = drtriton("eval", "kernelbench", str(bad_json), "--out", str(tmp_path / "o"))
    assert malformed.returncode == 2 and "bad.jsonl:1" in malformed.stderr


def test_load_problems_selects_levels_and_limits_per_level(tmp_path: Path) -> None:
    path = write_problems(tmp_path / "p.jsonl",
                          [problem(2, 3), problem(1, 9), problem(1, 2), problem(2, 1)])  # fmt: skip
    chosen = load_problems(path, [1, 2], limit=1, order="level")
    assert [(p["level"], p["problem_id"]) for p in chosen] == [(1, 2), (2, 1)]
    assert [p["problem_id"] for p in load_problems(path, [2])] == [1, 3]


def test_problems_are_interleaved_by_level_unless_asked_otherwise(tmp_path: Path) -> None:
    path = write_problems(tmp_path / "p.jsonl",
                          [problem(1, 1), problem(1, 2), problem(1, 3), problem(2, 1),
                           problem(3, 5), problem(3, 4)])  # fmt: skip
    ids = [(p["level"], p["problem_id"]) for p in load_problems(path)]
    assert ids == [(1, 1), (2, 1), (3, 4), (1, 2), (3, 5), (1, 3)]
    by_level = [(p["level"], p["problem_id"]) for p in load_problems(path, order="level")]
    assert by_level == sorted(by_level)


RELU_TANH = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.tanh(torch.relu(x))


def get_inputs():
    return [torch.randn(4, 64)]


def get_init_inputs():
    return []
"""

LINEAR_RELU = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.linear = nn.Linear(n_in, n_out)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return [32, 16]
"""


def test_end_to_end_on_the_cpu(tmp_path: Path) -> None:
    problems = write_problems(tmp_path / "tiny.jsonl", [
        {"level": 1, "problem_id": 1, "name": "1_ReLU_Tanh", "code": RELU_TANH},
        {"level": 2, "problem_id": 1, "name": "1_Linear_ReLU", "code": LINEAR_RELU},
    ])  # fmt: skip
    out = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "drtriton", "eval", "kernelbench", str(problems), "--out", str(out),
         "--device", "cpu", "--problem-timeout", "500", "--no-progress"],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    records = {r["id"]: r for r in read_results(out / "results.jsonl")}
    assert set(records) == {"L1_1", "L2_1"}
    for r in records.values():  # two operators each: fusing them saves a round trip
        assert r["status"] == "correct", r
        assert r["n_ops"] == 2 and r["fused_segments"] >= 1
        assert r["time_ms"] is None  # the CPU judges correctness only
        assert "class ModelNew" in (out / r["kernel"]).read_text()
    summary = (out / "summary.md").read_text()
    assert "| 1 | 1 | 1 | 0 | 1 | 100.0% | 0 | 0 |" in summary
    assert "1_Linear_ReLU" in summary
    # Each problem's log shows where its time went, stage by stage.
    log = (out / "logs" / "L2_1.log").read_text()
    assert "] search 1/1 done:" in log and "] verified: correct" in log


def test_no_batch_norm_kernels_reaches_the_optimizer_and_the_summary(tmp_path: Path) -> None:
    out = tmp_path / "run"
    config = fake_config(problem_timeout=15.0, batch_norm_kernels=False)
    outcome = run_kernelbench([problem(1, 1)], out, config, progress=False)
    assert outcome.results == 1  # the worker built OptimizeConfig with the flag
    assert read_results(out / "results.jsonl")[0]["status"] == "correct"
    summary = (out / "summary.md").read_text()
    assert "--no-batch-norm-kernels: batch norm's batch statistics stayed" in summary
    # Left unset, OptimizeConfig's default (on) applies and the summary says nothing of it.
    default = tmp_path / "default"
    run_kernelbench([problem(1, 1)], default, fake_config(problem_timeout=15.0), progress=False)
    assert "batch-norm-kernels" not in (default / "summary.md").read_text()

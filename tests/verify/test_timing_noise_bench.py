"""benchmarks/timing_noise.py on the CPU: the four fairness kernels are judged correct, part a's
selection spreads dev-split kernels over decades of estimated time and its batch resumes, part
c's arithmetic, the spread and pass rules by hand, and usage errors exit 2 before any work."""

from __future__ import annotations

import json
import math
import pathlib
from collections.abc import Callable
from types import ModuleType

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNELBENCH = ROOT.parent / "shared" / "kernelbench"


@pytest.fixture(scope="module")
def tool(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("timing_noise.py")


def test_cpu_part_b_judges_the_four_kernels_correct(tool, tmp_path, capsys):
    out = tmp_path / "noise.json"
    assert tool.main(["--device", "cpu", "--parts", "b", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["b"]
    assert [r["op"] for r in rows] == ["relu", "mul", "row_sum", "softmax"]  # no A/A rows
    assert all(r["status"] == "correct" and r["pass"] for r in rows), rows
    assert all(r["time_ms"] is None for r in rows)  # the interpreter does not time
    printed = capsys.readouterr().out
    assert printed.count(" correct ") == 4 and "(c)" not in printed


def test_the_a_a_task_is_the_candidates_own_kernel(tool):
    for op, (_, kernel) in tool.FAIR_OPS.items():
        task = tool.fair_task(op, (4, 64), same_kernel=True)
        assert "def fused_operator(x0):" in task and "triton_fused_operator" not in task
        assert task.replace("def fused_operator(", "def triton_fused_operator(").startswith(kernel)
        assert "torch.randn(4, 64)" in task


def test_fairness_tasks_and_kernels_read_like_the_tutorials(tool):
    for op, (line, kernel) in tool.FAIR_OPS.items():
        task = tool.fair_task(op, (256, 1024))
        assert f"t0 = {line}" in task and "torch.randn(256, 1024)" in task
        assert "@triton.jit" in kernel and "def triton_fused_operator(x0):" in kernel
        assert "_ptr" in kernel and "BLOCK: tl.constexpr" in kernel and "mask=" in kernel
    assert math.prod(tool.GPU_SHAPES["1MB"]) * 4 == 1 << 20
    assert math.prod(tool.GPU_SHAPES["256MB"]) * 4 == 256 << 20


def test_fair_row_ratios_and_pass(tool):
    verdict = {"status": "correct", "time_ms": 0.100, "eager_ms": 0.102,
               "graph_ms": 0.090, "eager_graph_ms": 0.045}  # fmt: skip
    row = tool.fair_row("relu", "256MB", verdict, cuda=True)
    assert row["events_ratio"] == pytest.approx(1.02) and row["graph_ratio"] == pytest.approx(0.5)
    assert row["pass"] is True
    slow = tool.fair_row("relu", "1MB", {**verdict, "eager_ms": 0.05}, cuda=True)
    assert slow["pass"] is False
    untimed = tool.fair_row("relu", "1MB", {"status": "correct"}, cuda=True)
    assert untimed["events_ratio"] is None and untimed["pass"] is False
    assert tool.fair_row("relu", "4x64", {"status": "correct"}, cuda=False)["pass"] is True


def test_time_bins_and_estimate(tool):
    assert tool.time_bin(0.01, 12) == 0 and tool.time_bin(10.0, 12) == 11
    assert tool.time_bin(0.009, 12) is None and tool.time_bin(11.0, 12) is None
    assert tool.time_bin(0.1, 12) == 4  # one decade up: 4 of 12 bins of a quarter decade
    # 3 GB at 3e12 B/s plus 2e10 FLOP at 2e13 FLOP/s plus the 5 us launch
    assert tool.estimate_ms(2e10, 3e9) == pytest.approx(1.0 + 1.0 + 0.005)


@pytest.mark.skipif(not KERNELBENCH.is_dir(), reason="no KernelBench dev split")
def test_selection_spreads_dev_split_kernels_over_decades(tool):
    # A subset keeps this under half a minute on two cores (the full scan, 12 kernels up to
    # 2 GB of inputs, takes about 45 s; the GPU run does that once).
    picks = tool.select(KERNELBENCH, kernels=12, limit=40, max_input_gb=0.5, progress=False)
    assert len(picks) >= 10, [p.id for p in picks]
    assert len({p.id for p in picks}) == len(picks) == len({p.task for p in picks})
    assert len({p.id.partition("@")[0] for p in picks}) == len(picks)  # one bin per problem
    estimates = [p.estimate_ms for p in picks]
    assert estimates == sorted(estimates) and max(estimates) / min(estimates) >= 100
    assert len({tool.time_bin(e, 12) for e in estimates}) == len(picks)
    for p in picks:
        assert "@triton.jit" in p.candidate and "def triton_fused_operator" in p.candidate
        assert "def fused_operator" in p.task and 0 < p.input_bytes <= 0.5e9
        assert p.cap is None or p.id.endswith(f"@cap{p.cap}")


def test_pairs_repeat_each_kernel(tool, tmp_path):
    pick = tool.Pick("L1_19@cap64", "19_ReLU", 64, 0.02, 0.0, 1.0, 4, "task", "kernel")
    path = tmp_path / "pairs.jsonl"
    tool.write_pairs([pick], 3, path)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["id"] for r in records] == ["L1_19@cap64#0", "L1_19@cap64#1", "L1_19@cap64#2"]
    assert all(r["task"] == "task" and r["candidate"] == "kernel" for r in records)


def test_kernel_stats_by_hand(tool):
    def verdicts(times: list[float], status: str = "correct") -> list[dict]:
        return [{"status": status, "time_ms": t, "eager_ms": 2 * t, "speedup": 2.0} for t in times]

    steady = tool.kernel_stats("k", verdicts([1.00, 1.02, 1.04]))
    assert steady["median_ms"] == pytest.approx(1.02)
    assert steady["time_ratio"] == pytest.approx(1.04)
    assert steady["eager_ratio"] == pytest.approx(1.04) and steady["speedup_ratio"] == 1.0
    assert steady["graph_ratio"] is None and steady["pass"] is True
    assert tool.kernel_stats("k", verdicts([1.0, 1.1]))["pass"] is False  # >= 0.05 ms: 1.05
    assert tool.kernel_stats("k", verdicts([0.010, 0.011]))["pass"] is True  # small: 1.15
    assert tool.kernel_stats("k", verdicts([0.010, 0.012]))["pass"] is False
    mixed = tool.kernel_stats("k", [*verdicts([1.0]), {"status": "timeout", "time_ms": None}])
    assert mixed["all_correct"] is False and mixed["pass"] is None
    assert mixed["statuses"] == ["correct", "timeout"]
    errored = tool.kernel_stats("k", [{"id": "k#0", "error": "no task"}])
    assert errored["statuses"] == ["error: no task"] and errored["pass"] is None


def test_part_c_throughput_from_a_results_file(tool, tmp_path, capsys):
    records = [
        {"id": "L1_1", "status": "correct", "started_at": 1000.0, "finished_at": 1100.0},
        {"id": "L1_2", "status": "no_kernel", "started_at": 1010.0, "finished_at": 1130.0},
        {"id": "L1_3", "status": "timeout", "started_at": 1050.0, "finished_at": 1240.0},
        {"id": "L1_4", "status": "correct"},  # an older record: no times
        {"id": "L1_2", "status": "correct", "started_at": 1020.0, "finished_at": 1180.0},
    ]
    (tmp_path / "results.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records) + '{"id": "L1_5", "sta'  # torn
    )
    out = tmp_path / "noise.json"
    assert tool.main(["--parts", "c", "--eval-dir", str(tmp_path), "--out", str(out)]) == 0
    c = json.loads(out.read_text())["c"]
    # L1_2's later record wins; 3 stamped records from 1000 s to 1240 s: 4 minutes
    assert c["records"] == 4 and c["stamped"] == 3 and c["span_s"] == pytest.approx(240.0)
    assert c["per_minute"] == pytest.approx(3 / 4)
    assert c["statuses"] == {"correct": 3, "timeout": 1}
    assert "0.750 problems/minute" in capsys.readouterr().out
    assert tool.main(["--parts", "c"]) == 0  # no --eval-dir: skipped with a note
    assert "(c) skipped" in capsys.readouterr().out


def test_part_c_splits_a_resumed_file_into_its_runs(tool):
    # Run 1: two problems over 1000-1200 s; an idle hour; run 2: three over 5000-5120 s, the
    # third starting when the first finished while the second was still running.
    records = [
        {"status": "correct", "started_at": 1000.0, "finished_at": 1200.0},
        {"status": "timeout", "started_at": 1000.0, "finished_at": 1150.0},
        {"status": "correct", "started_at": 5000.0, "finished_at": 5060.0},
        {"status": "correct", "started_at": 5000.0, "finished_at": 5090.0},
        {"status": "correct", "started_at": 5060.0, "finished_at": 5120.0},
    ]
    c = tool.throughput(records)
    assert [(r["records"], r["span_s"]) for r in c["runs"]] == [(2, 200.0), (3, 120.0)]
    assert [r["per_minute"] for r in c["runs"]] == pytest.approx([0.6, 1.5])
    # all five over the runs' 320 s, not over the 4,120 s from first start to last finish
    assert c["span_s"] == pytest.approx(320.0) and c["per_minute"] == pytest.approx(5 / (320 / 60))


@pytest.mark.parametrize(
    "argv",
    [
        ["--parts", "a,x"],
        ["--parts", "c", "--eval-dir", "/nonexistent/eval"],
        ["--parts", "c", "--out", "/nonexistent/dir/noise.json"],
        ["--parts", "a", "--device", "cpu", "--kernelbench", "/nonexistent/kb"],
        ["--parts", "b", "--device", "tpu"],
        ["--parts", "a", "--device", "cpu", "--repeats", "0"],
    ],
)
def test_usage_errors_exit_2_with_one_line(tool, argv, capsys):
    assert tool.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("timing_noise: ") and captured.err.count("\n") == 1
    assert captured.out == ""


@pytest.mark.skipif(not KERNELBENCH.is_dir(), reason="no KernelBench dev split")  # --kernelbench
def test_cpu_part_a_end_to_end_on_one_small_kernel(tool, tmp_path, monkeypatch, capsys):
    task = tool.fair_task("relu", (4, 64))
    pick = tool.Pick("L1_19@cap64", "19_ReLU", 64, 0.005, 0.0, 2048.0, 1024, task,
                     tool.FAIR_OPS["relu"][1])  # fmt: skip
    monkeypatch.setattr(tool, "select", lambda *args, **kwargs: [pick])
    out, work = tmp_path / "noise.json", tmp_path / "work"
    argv = ["--device", "cpu", "--parts", "a", "--kernelbench", str(KERNELBENCH), "--repeats",
            "2", "--workers", "1", "--work", str(work), "--out", str(out)]  # fmt: skip
    assert tool.main(argv) == 0
    a = json.loads(out.read_text())["a"]
    kernel = a["kernels"]["L1_19@cap64"]
    assert kernel["statuses"] == ["correct", "correct"] and kernel["all_correct"]
    assert kernel["pass"] is None and a["judged"] == 0  # the CPU does not time
    assert len((work / "results.jsonl").read_text().splitlines()) == 2
    assert tool.main(argv) == 0  # resumed: nothing verified again
    assert len((work / "results.jsonl").read_text().splitlines()) == 2
    assert "L1_19@cap64" in capsys.readouterr().out

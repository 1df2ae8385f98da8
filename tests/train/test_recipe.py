"""The small-model recipe (`drtriton train-recipe`): held-out evaluation statistics, the
before/after-RL evaluation path on a tiny model, time budgets, and the whole run on the CPU
with a fake verifier (the real one is exercised in test_rl and on the GPU)."""

import json
import math

import pytest

from drtriton.errors import UserError
from drtriton.policy.hf import HFPolicy, SamplingConfig, load_model
from drtriton.train.budget import Budget
from drtriton.train.evaluate import evaluate_policy, summarize
from drtriton.train.recipe import RecipeConfig, run
from drtriton.train.rewards import Reward

from .conftest import TASKS, task


class LevelVerifier:
    """Judges by the task alone: level-1 tasks (no `t1 =` line, see `_level2`) correct with
    log speed-ups 0.5 and -0.5 in turn; level-2 tasks wrong. Records what it was asked."""

    def __init__(self):
        self.calls = []

    def judge(self, tasks, codes):
        self.calls.append((list(tasks), list(codes)))
        out, solved = [], 0
        for t in tasks:
            ok = "t1 =" not in t
            out.append(Reward(ok, (0.5 if solved % 2 == 0 else -0.5) if ok else None, "fake"))
            solved += ok
        return out


def _level2(op: str) -> str:
    return task(op).replace("    return t0", "    t1 = torch.neg(t0)\n    return t1")


def _programs(path, per_level=2, tag=""):
    """Programs of levels 1 and 2; a `tag` (a comment) makes their sources differ from the
    untagged ones (held-out programs must: the recipe drops those it trained on)."""
    ops = list(TASKS)
    suffix = f"\n# {tag}\n" if tag else ""
    with path.open("w") as f:
        for i in range(per_level * 2):
            op = ops[i % len(ops)]
            for level, source in ((1, task(op)), (2, _level2(op))):
                f.write(json.dumps({"id": f"l{level}-{i}", "level": level, "ops": [op] * level,
                                    "source": source + suffix}) + "\n")  # fmt: skip
    return path


def test_summarize_hand_computed():
    rewards = [Reward(True, math.log(2.0)), Reward(True, math.log(0.5)), Reward(True, None),
               Reward(False, None)]  # fmt: skip
    s = summarize(rewards)
    assert s["n"] == 4 and s["pass@1"] == 0.75 and s["timed"] == 2
    assert s["mean_log_speedup"] == pytest.approx(0.0)
    assert s["geomean_speedup"] == pytest.approx(1.0)
    assert s["mean_speedup"] == pytest.approx(1.25)  # (2 + 0.5) / 2
    assert s["fast1"] == 0.25  # one of four correct and faster than eager
    empty = summarize([])
    assert empty["pass@1"] == 0.0 and empty["mean_speedup"] is None


def test_evaluate_before_and_after_on_tiny_model(tiny_model, tmp_path):
    records = [json.loads(x) for x in _programs(tmp_path / "p.jsonl").read_text().splitlines()]
    model, tok = load_model(tiny_model)
    policy = HFPolicy(model, tok, SamplingConfig(temperature=1.0, max_new_tokens=5))
    verifier = LevelVerifier()
    before = evaluate_policy(policy, verifier, records)
    [(tasks, codes)] = verifier.calls
    assert tasks == [r["source"] for r in records] and len(codes) == len(records)
    assert before["n"] == len(records) and before["pass@1"] == pytest.approx(0.5)
    assert before["per_level"]["1"]["pass@1"] == 1.0 and before["per_level"]["2"]["pass@1"] == 0
    # Level-1 verdicts alternate +0.5/-0.5: two of each among the four level-1 programs.
    assert before["per_level"]["1"]["mean_log_speedup"] == pytest.approx(0.0)
    assert before["per_level"]["1"]["mean_speedup"] == pytest.approx(math.cosh(0.5))
    assert 0 < before["mean_completion_tokens"] <= 5 and before["gen_tokens_per_s"] > 0
    assert before["decode_ms_per_step"] > 0
    # The same path after a (here: no-op) RL stage: an independent second call.
    after = evaluate_policy(policy, verifier, records)
    assert len(verifier.calls) == 2 and after["pass@1"] == before["pass@1"]


def test_sampled_evaluation_judges_every_answer(tiny_model, tmp_path):
    """--eval-samples k: k answers per program, each judged; pass@1 is their mean."""
    from drtriton.train.recipe import answers, run_eval

    records = [json.loads(x) for x in _programs(tmp_path / "p.jsonl").read_text().splitlines()]
    assert answers(records, 1) is records
    cfg = RecipeConfig(pairs="", programs="", heldout="", out="", eval_samples=3,
                       eval_temperature=1.0)  # fmt: skip
    verifier = LevelVerifier()
    result = run_eval(cfg, tiny_model, records, 4, "cpu", verifier, tmp_path / "s.jsonl")
    [(tasks, codes)] = verifier.calls
    assert tasks == [r["source"] for r in records for _ in range(3)] and len(codes) == len(tasks)
    assert result["n"] == 3 * len(records) and result["per_level"]["1"]["n"] == 3 * 4
    assert result["pass@1"] == pytest.approx(0.5)
    ids = [json.loads(x)["id"] for x in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert ids[:3] == ["l1-0#0", "l1-0#1", "l1-0#2"] and len(set(ids)) == len(ids)


def test_budget_stops_and_predicts():
    assert not Budget(0).spent(ahead=1e9)  # no budget: never spent
    b = Budget(1.0)
    assert not b.spent() and b.spent(ahead=61.0)
    assert 0 <= b.fraction() < 0.1


def test_sft_time_budget_stops_early(tiny_model, pairs_file, tmp_path):
    from drtriton.train.sft import SFTConfig, train

    out = tmp_path / "sft"
    cfg = SFTConfig(model=str(tiny_model), data=str(pairs_file), out=str(out), max_steps=100000,
                    batch_size=2, max_len=2048, log_every=1000, max_minutes=0.05)  # fmt: skip
    metrics = train(cfg)
    assert metrics["timed_out"] and 0 < metrics["steps"] < 100000
    assert (out / "config.json").is_file() and metrics["train_tokens_per_s"] > 0
    assert (out / f"checkpoint-{metrics['steps']}" / "state.json").is_file()


def test_recipe_end_to_end_cpu(pairs_file, tmp_path, monkeypatch):
    programs = _programs(tmp_path / "programs.jsonl", per_level=4)
    heldout = _programs(tmp_path / "heldout.jsonl", per_level=1, tag="held out")
    out, work = tmp_path / "out", tmp_path / "work"
    # Extra pairs (prepare_l2_pairs.sh's level-2 chains): SFT reads both files' pairs.
    extra = tmp_path / "extra.jsonl"
    base = pairs_file.read_text().splitlines()
    extra.write_text("".join(json.dumps({**json.loads(x), "id": f"x{i}", "level": 2}) + "\n"
                             for i, x in enumerate(base[:2])))  # fmt: skip
    cfg = RecipeConfig(pairs=str(pairs_file), programs=str(programs), heldout=str(heldout),
                       extra_pairs=str(extra),
                       out=str(out), work=str(work), minutes=0.4, device="cpu", sft_share=0.15,
                       vocab_size=600, hidden_size=32, layers=1, heads=2, kv_heads=1,
                       intermediate_size=64, sft_batch=2, prompts_per_step=2, group_size=2,
                       eval_per_level=2, max_new_tokens=6)  # fmt: skip
    verifier = LevelVerifier()
    data = run(cfg, verifier=verifier)
    saved = json.loads((out / "summary.json").read_text())
    assert saved["finished_stage"] == "headline" and saved["sft"]["steps"] > 0
    assert saved["setup"]["data"]["sft_pairs"] == len(base) + 2
    assert saved["setup"]["data"]["heldout_dropped_as_trained"] == 0
    assert len((work / "sft_pairs.jsonl").read_text().splitlines()) == len(base) + 2
    assert saved["rl"]["step"] >= 1 and saved["rl"]["rollouts"] >= 4
    assert saved["rl"]["timed_out"]  # 100000 steps asked: the time budget ended RL
    head = data["headline"]
    head_n = saved["before_rl"]["n"]
    assert saved["before_rl"]["statuses"] == {"fake": head_n}
    # Held-out pass@1 follows the verifier, before and after RL: level 1 solved, level 2 not.
    assert head["per_level_pass@1"] == {"before_rl": {"1": 1.0, "2": 0.0},
                                        "after_rl": {"1": 1.0, "2": 0.0}}  # fmt: skip
    assert saved["rl"]["start_level"] == 2  # level 1 above 50% before RL: the curriculum skips
    # Only small files come back to OUT; the models stay in the work directory.
    assert sorted(p.name for p in out.iterdir()) == [
        "eval_after_rl.jsonl", "eval_before_rl.jsonl", "metrics.jsonl", "metrics.svg",
        "sft_metrics.jsonl", "summary.json"]  # fmt: skip
    # One line per held-out program and evaluation, with the verifier's status.
    lines = (out / "eval_before_rl.jsonl").read_text().splitlines()
    assert len(lines) == head_n and all(json.loads(x)["status"] == "fake" for x in lines)
    assert (work / "rl" / "config.json").is_file()

    # A second run continues from the first one's RL model: no SFT, RL and both evaluations;
    # its RL takes the GRPO loss (the ablation), the recipe's speed margin and its levels.
    import drtriton.train.rl as rl_module

    losses, rl_train = [], rl_module.train
    monkeypatch.setattr(rl_module, "train",
                        lambda c, **kw: losses.append((c.loss, c.speed_margin, c.levels))
                        or rl_train(c, **kw))  # fmt: skip
    second = RecipeConfig(**{**cfg.__dict__, "init_model": str(work / "rl"),
                             "work": str(tmp_path / "work2"), "out": str(tmp_path / "out2"),
                             "minutes": 0.3, "rl_loss": "grpo", "speed_margin": 0.25,
                             "rl_levels": "1,2"})  # fmt: skip
    data2 = run(second, verifier=LevelVerifier())
    assert losses == [("grpo", 0.25, "1,2")]
    assert data2["sft"] == {"skipped": f"--init-model {work / 'rl'}"}
    assert data2["model"]["params"] == saved["model"]["params"]
    assert data2["rl"]["step"] >= 1 and "after_rl" in data2
    assert (tmp_path / "work2" / "rl" / "config.json").is_file()
    assert not (tmp_path / "out2" / "sft_metrics.jsonl").exists()
    with pytest.raises(UserError, match="needs --eval-temperature"):
        run(RecipeConfig(**{**second.__dict__, "eval_samples": 3}), verifier=LevelVerifier())
    with pytest.raises(UserError, match="own RL output"):
        run(RecipeConfig(**{**second.__dict__, "init_model": str(tmp_path / "work2" / "rl")}),
            verifier=LevelVerifier())  # fmt: skip


def test_heldout_programs_the_model_trained_on_are_dropped():
    from drtriton.train.recipe import _heldout

    held = [{"source": f"p{i}", "level": 1 + i % 2} for i in range(6)]
    trained = [{"source": "p0", "completion": "..."}, {"source": "p3"}]
    chosen, dropped = _heldout(held, 2, trained)
    assert dropped == 2
    assert [r["source"] for r in chosen] == ["p2", "p4", "p1", "p5"]  # level 1, then level 2
    assert _heldout(held, 1)[1] == 0

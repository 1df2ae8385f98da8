"""`drtriton rl` on a tiny model: a fake verifier makes some rollouts correct so that the DRPO
update, the curriculum and resume all run; one real-verifier call checks the reward plumbing."""

import json
import math
from pathlib import Path

import pytest
import torch

from drtriton.policy.hf import load_model
from drtriton.train import curriculum
from drtriton.train.rewards import BatchVerifier, Reward
from drtriton.train.rl import RLConfig, train

from .conftest import TASKS, task


class FakeVerifier:
    """Two of every three rollouts correct, with different speeds: mixed groups (pass@1 2/3)."""

    def __init__(self):
        self.calls = 0

    def judge(self, tasks, codes):
        self.calls += 1
        return [Reward(i % 3 != 2, 0.1 * (i % 3), "fake") for i in range(len(codes))]


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    path = tmp_path_factory.mktemp("programs") / "programs.jsonl"
    with path.open("w") as f:
        for level in (1, 2):
            for i, op in enumerate(TASKS):
                record = {"id": f"l{level}-{i}", "level": level, "ops": [op] * level,
                          "source": task(op)}  # fmt: skip
                f.write(json.dumps(record) + "\n")
    return path


def _cfg(tiny_model, programs, out, **kw):
    base = dict(model=str(tiny_model), programs=str(programs), out=str(out), levels="1-2",
                steps=3, prompts_per_step=2, group_size=3, max_new_tokens=6, lr=1e-3,
                heldout_per_level=1, eval_every=2, eval_size=1, save_every=1, micro_batch=4)  # fmt: skip
    base.update(kw)
    return RLConfig(**base)


def _lines(out):
    return [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]


def test_drpo_steps_curriculum_and_resume(tiny_model, programs, tmp_path):
    out = tmp_path / "rl"
    before, _ = load_model(tiny_model)
    result = train(_cfg(tiny_model, programs, out, steps=2), verifier=FakeVerifier())
    lines = _lines(out)
    steps = [d for d in lines if not d.get("eval")]
    assert [d["step"] for d in steps] == [1, 2]
    assert steps[0]["groups_used"] == 2 and steps[0]["pass@1"] == pytest.approx(2 / 3)
    assert all(d["kl"] == 0.0 for d in steps)  # one update per batch: on-policy
    assert all(d["kl_after"] > 0.0 for d in steps)  # the drift each step caused
    evals = [d for d in lines if d.get("eval")]
    assert evals[0]["eval_pass@1"] == 1.0 and evals[0]["next_level"] == 2  # held-out: 1 program
    assert result["curriculum"] == {"level": 2, "best": -1.0, "stale": 0, "done": False}
    after, _ = load_model(out)
    assert any(not torch.equal(a, b) for a, b in zip(before.parameters(), after.parameters(),
                                                     strict=True))  # fmt: skip
    assert (out / "metrics.svg").read_text().startswith("<svg")
    train(_cfg(tiny_model, programs, out, steps=3, resume=True), verifier=FakeVerifier())
    steps = [d for d in _lines(out) if not d.get("eval")]
    assert [(d["step"], d["level"]) for d in steps] == [(1, 1), (2, 1), (3, 2)]


def test_a_run_from_an_rl_model_draws_the_next_programs(tiny_model, programs, tmp_path,
                                                        monkeypatch):  # fmt: skip
    import drtriton.train.rl as rl

    drawn, pick = [], rl._pick
    monkeypatch.setattr(rl, "_pick", lambda pool, k, seed, step, rank:
                        drawn.append(step) or pick(pool, k, seed, step, rank))  # fmt: skip
    first = tmp_path / "first"
    train(_cfg(tiny_model, programs, first, steps=2), verifier=FakeVerifier())
    assert drawn == [0, 1]
    assert json.loads((first / "config.json").read_text())["drtriton_rl_steps"] == 2
    drawn.clear()
    second = tmp_path / "second"
    train(_cfg(first, programs, second, steps=2), verifier=FakeVerifier())
    assert drawn == [2, 3]  # not the first run's batches again
    assert [d["step"] for d in _lines(second) if not d.get("eval")] == [1, 2]  # this run's own
    assert json.loads((second / "config.json").read_text())["drtriton_rl_steps"] == 4


def test_grpo_and_several_updates_per_batch(tiny_model, programs, tmp_path):
    out = tmp_path / "grpo"
    cfg = _cfg(tiny_model, programs, out, loss="grpo", steps=1, heldout=str(programs))
    train(cfg, verifier=FakeVerifier())
    step, evaluation = _lines(out)
    assert step["groups_used"] == 2 and evaluation["eval_heldout"] is True
    out = tmp_path / "drpo2"
    train(_cfg(tiny_model, programs, out, steps=1, updates_per_batch=2, lr=1e-2),
          verifier=FakeVerifier())  # fmt: skip
    assert _lines(out)[0]["kl"] > 0.0  # the second update measures its drift from pi_old


def test_curriculum_advances_and_stops_at_plateau():
    s = curriculum.CurriculumState(1)
    s = curriculum.update(s, 0.6, [1, 2], 0.5, patience=2, min_delta=0.01)
    assert (s.level, s.done) == (2, False)
    s = curriculum.update(s, 0.3, [1, 2], 0.5, 2, 0.01)
    s = curriculum.update(s, 0.305, [1, 2], 0.5, 2, 0.01)
    assert not s.done
    s = curriculum.update(s, 0.3, [1, 2], 0.5, 2, 0.01)
    assert s.done and s.level == 2
    assert curriculum.update(s, 0.9, [1, 2], 0.5, 2, 0.01).done  # the last level passed


def test_real_verifier_rewards():
    try:
        from drtriton.teach import emit

        good = emit(task("relu"))
    except Exception as exc:
        pytest.skip(f"no teacher: {exc}")
    rewards = BatchVerifier(workers=1).judge([task("relu")] * 3, [good, "import torch\n", ""])
    assert [r.correct for r in rewards] == [True, False, False]
    assert rewards[2].status == "no_code" and rewards[0].log_speedup is None  # CPU: no timing


def test_identical_rollouts_share_one_verification(monkeypatch):
    import drtriton.verify.batch as batch

    sent: list[list[dict]] = []

    def fake_run_batch(pairs, out, opts, progress=True, pools=None):  # records what is sent
        lines = [json.loads(x) for x in Path(pairs).read_text().splitlines()]
        sent.append(lines)
        verdicts = [{"id": x["id"], "correct": x["completion"] == "good", "status": "s",
                     "speedup": 2.0} for x in lines]  # fmt: skip
        Path(out).write_text("".join(json.dumps(v) + "\n" for v in verdicts))

    monkeypatch.setattr(batch, "run_batch", fake_run_batch)
    verifier = BatchVerifier()
    tasks = ["t1", "t1", "t1", "t2", "t1", "t1"]
    codes = ["good", "bad", "good", "good", "", "bad"]
    rewards = verifier.judge(tasks, codes)
    # (t1, good), (t1, bad), (t2, good): the same code for another task is verified again
    assert sorted((x["source"], x["completion"]) for x in sent[0]) == [
        ("t1", "bad"), ("t1", "good"), ("t2", "good")]  # fmt: skip
    assert verifier.last_distinct == 3
    assert [r.correct for r in rewards] == [True, False, True, True, False, False]
    assert rewards[4].status == "no_code"
    assert rewards[2] is not rewards[0] and rewards[2].log_speedup == pytest.approx(math.log(2))


def test_verifier_timing_runs():
    assert BatchVerifier("cuda", runs=10).opts.runs == 10  # RL's speed reward: fewer calls
    assert BatchVerifier("cuda").opts.runs == 30  # reported figures keep the verifier's count


def test_cli_user_errors_and_tiny_model(tiny_model, programs, pairs_file, tmp_path, capsys):
    from drtriton.cli import main

    assert main(["rl", "--model", str(tmp_path), "--programs", str(programs), "--out", "o"]) == 2
    assert "not a model checkpoint" in capsys.readouterr().err
    bad = ["rl", "--model", str(tiny_model), "--programs", str(programs), "--out",
           str(tmp_path / "o"), "--loss", "ppo"]  # fmt: skip
    assert main(bad) == 2 and "drpo, grpo" in capsys.readouterr().err
    out = tmp_path / "tiny"
    assert main(["tiny-model", str(pairs_file), "--out", str(out), "--vocab-size", "300"]) == 0
    assert (out / "config.json").is_file() and (out / "tokenizer.json").is_file()


def test_learning_rate_warms_up_from_a_fresh_optimizer(tiny_model, programs, tmp_path):
    """A fresh AdamW's first step moves every weight with a gradient by the full learning rate
    (m / sqrt(v) = sign(g)); the warm-up scales that first step down to lr / warmup."""
    out = tmp_path / "warm"
    before, _ = load_model(tiny_model)
    train(_cfg(tiny_model, programs, out, steps=1, lr=1e-3, warmup_updates=4, eval_every=9),
          verifier=FakeVerifier())  # fmt: skip
    after, _ = load_model(out)
    with torch.no_grad():
        moved = max(float((a - b).abs().max())
                    for a, b in zip(after.parameters(), before.parameters(), strict=True))  # fmt: skip
    assert 0.0 < moved <= 1e-3 / 4 * 1.001
    out = tmp_path / "warm2"
    train(_cfg(tiny_model, programs, out, steps=2, lr=1e-3, warmup_updates=4, eval_every=9),
          verifier=FakeVerifier())  # fmt: skip
    lrs = [d["lr"] for d in _lines(out) if not d.get("eval")]
    assert lrs == pytest.approx([1e-3 * 2 / 4, 1e-3 * 3 / 4])  # after updates 1 and 2


class PatternVerifier:
    """A rollout is correct when its text holds the letter "p" (about a third of the tiny
    model's samples): a reward the policy can learn within a few steps."""

    def judge(self, tasks, texts):
        return [Reward("p" in text, 0.0, "fake") for text in texts]


@pytest.mark.parametrize("loss", ["drpo", "grpo"])
def test_rl_raises_the_rate_of_rewarded_rollouts(tiny_model, programs, tmp_path, monkeypatch,
                                                 loss):  # fmt: skip
    """The whole loop (sampling, rewards, the loss's sign, the update) moves the policy toward
    what the verifier accepts: a flipped sign or rewards paired with the wrong rollouts fail."""
    import drtriton.policy.prompts as prompts
    import drtriton.train.rl as rl

    # The tiny model writes no code block; the verifier judges the raw text instead.
    monkeypatch.setattr(rl, "_judge",
                        lambda v, r: v.judge(None, [c.text for c in r.completions]))  # fmt: skip
    # The task text alone as the prompt: 61 tokens instead of the synthetic prompt's 730, so
    # each step's forwards and backward cost a tenth (about 40 s to 3 s per run on one core).
    # What is learnt does not depend on the prompt: over seeds 0-4 at 14 steps both losses
    # gained 0.52-0.65 in pass@1 (the bar is 0.3), and with the loss's sign flipped 0.24-0.40
    # was lost instead.
    monkeypatch.setattr(prompts, "prompt_for", lambda record: record["source"])
    # DRPO's trust region is enforced on every update (update.py): at the paper's bound of
    # 0.001 the halved steps of this toy gained 0.26 in 14 steps, under the bar; at 0.03 the
    # steps are still halved (one unconstrained step here moves KL by ~0.3) and seeds 0-4 pass.
    out = tmp_path / loss
    cfg = _cfg(tiny_model, programs, out, levels="1", steps=14, prompts_per_step=4,
               group_size=8, max_new_tokens=8, lr=1e-2, warmup_updates=0, micro_batch=32,
               heldout_per_level=0, eval_every=1000, save_every=1000, loss=loss,
               delta=0.03)  # fmt: skip
    train(cfg, verifier=PatternVerifier())
    rates = [d["pass@1"] for d in _lines(out) if "pass@1" in d]
    assert len(rates) == 14
    assert sum(rates[-3:]) / 3 > sum(rates[:3]) / 3 + 0.3, str(rates)


class CtrlCVerifier(FakeVerifier):
    """Ctrl-C during the `at`-th verification."""

    def __init__(self, at):
        super().__init__()
        self.at = at

    def judge(self, tasks, codes):
        if self.calls + 1 == self.at:
            raise KeyboardInterrupt
        return super().judge(tasks, codes)


def test_ctrl_c_saves_a_checkpoint_and_resume_logs_each_step_once(tiny_model, programs,
                                                                  tmp_path):  # fmt: skip
    out = tmp_path / "rl"
    cfg = _cfg(tiny_model, programs, out, steps=3, save_every=10)
    with pytest.raises(KeyboardInterrupt):  # calls: step 1, step 2, its evaluation, step 3
        train(cfg, verifier=CtrlCVerifier(at=4))
    saved = json.loads((out / "checkpoint-2" / "state.json").read_text())
    assert saved["step"] == 2 and saved["curriculum"]["level"] == 2  # after step 2's evaluation
    train(_cfg(tiny_model, programs, out, steps=3, save_every=10, resume=True),
          verifier=FakeVerifier())  # fmt: skip
    lines = _lines(out)
    assert [(d["step"], bool(d.get("eval"))) for d in lines] == [
        (1, False), (2, False), (2, True), (3, False), (3, True)]  # fmt: skip


def test_resume_with_no_checkpoint_is_a_user_error(tiny_model, programs, tmp_path):
    from drtriton.errors import UserError

    with pytest.raises(UserError, match="no checkpoint in"):
        train(_cfg(tiny_model, programs, tmp_path / "none", resume=True), verifier=FakeVerifier())


def test_rollouts_are_verified_in_the_programs_precision(tmp_path):
    """Issue 21 item 4: the programs' mode (fp32 without the field) is the verifier's, one for
    the training and the held-out programs."""
    from drtriton.errors import UserError
    from drtriton.train.rl import programs_precision

    half, old = tmp_path / "half.jsonl", tmp_path / "old.jsonl"
    half.write_text(json.dumps({"id": "a", "level": 1, "source": "x", "precision": "fp16"}) + "\n")
    old.write_text(json.dumps({"id": "b", "level": 1, "source": "y"}) + "\n")
    assert programs_precision(RLConfig(model="m", programs=str(half), out="o")) == "fp16"
    assert programs_precision(RLConfig(model="m", programs=str(old), out="o")) == "fp32"
    with pytest.raises(UserError, match="several precisions"):
        programs_precision(RLConfig(model="m", programs=str(half), out="o", heldout=str(old)))

"""Held-out evaluation with a policy that cannot be weak: it answers every held-out program with
the teacher's own kernel, written exactly as the SFT targets are (`target_text`), and the answer
reaches the real verifier (CPU interpreter) through HFPolicy's whole text path: prompt rendering,
left padding, the decode loop, trimming at EOS, decoding with the recipe's kind of tokenizer,
and code extraction. pass@1 must be 1; the same answers given to the wrong programs must fail.
If the pipeline (prompt, answer format, extraction, task text, entry point) broke, a trained
model would score 0 for reasons that have nothing to do with the model (issue 7's 0/48)."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import torch

from drtriton.jsonl import read_jsonl
from drtriton.policy.extract import extract_code
from drtriton.policy.hf import HFPolicy, SamplingConfig, render_prompt
from drtriton.policy.prompts import prompt_for
from drtriton.train.curriculum import by_level
from drtriton.train.data import target_text
from drtriton.train.evaluate import evaluate_policy

DATA = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train" / "data"
PER_LEVEL = 2  # 4 programs: ~20 s of CPU verification on 2 workers


def _teacher() -> Any:
    from drtriton.errors import UserError
    from drtriton.policy.template import TemplatePolicy

    try:
        return TemplatePolicy()
    except UserError as exc:
        pytest.skip(f"teacher unavailable: {exc}")


@pytest.fixture(scope="module")
def gold() -> list[dict[str, Any]]:
    """Held-out records (levels 1 and 2) with the teacher's answer as `completion`."""
    pytest.importorskip("triton")
    teacher = _teacher()
    records = [r for _, rs in sorted(by_level(list(read_jsonl(DATA / "heldout.jsonl"))).items())
               for r in rs[:PER_LEVEL]]  # fmt: skip
    answers = teacher.generate([prompt_for(r) for r in records], 1)
    out = [{**r, "completion": g[0].code} for r, g in zip(records, answers, strict=True)]
    assert all(r["completion"] for r in out), "the teacher supports every operator"
    return out


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from drtriton.train.tiny import corpus_from_records, train_tokenizer

    pairs = list(read_jsonl(DATA / "sft_pairs.jsonl"))[::10]  # the recipe's corpus, thinned
    return train_tokenizer(corpus_from_records(pairs), 1024)


class ScriptedLM(torch.nn.Module):
    """A causal LM that emits a fixed token script per prompt, then EOS: its logits put a
    margin of 100 on the scripted token, so sampling at any usual temperature picks it."""

    def __init__(self, scripts: dict[tuple[int, ...], list[int]], vocab: int, eos: int) -> None:
        super().__init__()
        self.anchor = torch.nn.Parameter(torch.zeros(1))  # dtype and device for HFPolicy
        self.scripts, self.vocab, self.eos = scripts, vocab, eos
        self.rows: list[list[int]] = []
        self.step = 0

    @property
    def device(self) -> torch.device:
        return self.anchor.device

    def forward(self, input_ids, attention_mask, past_key_values=None, **_: Any) -> Any:
        if input_ids.shape[1] > 1 or not self.rows:  # prefill: find each row's script
            self.rows = [self.scripts[tuple(ids[m.bool()].tolist())] + [self.eos]
                         for ids, m in zip(input_ids, attention_mask, strict=True)]  # fmt: skip
            self.step = 0
        elif input_ids.shape[0] != len(self.rows):  # the n copies of each prompt
            k = input_ids.shape[0] // len(self.rows)
            self.rows = [row for row in self.rows for _ in range(k)]
        nxt = [row[min(self.step, len(row) - 1)] for row in self.rows]
        self.step += 1
        logits = torch.zeros((len(nxt), 1, self.vocab))
        logits[torch.arange(len(nxt)), 0, torch.tensor(nxt)] = 100.0
        return type("Out", (), {"logits": logits})()


def _scripted_policy(tok: Any, records: list[dict], answers: list[dict]) -> HFPolicy:
    """HFPolicy whose model answers each record's prompt with `target_text` of one answer."""
    scripts = {}
    for record, answer in zip(records, answers, strict=True):
        prompt = tuple(tok(render_prompt(tok, prompt_for(record)), add_special_tokens=False)
                       ["input_ids"])  # fmt: skip
        scripts[prompt] = tok(target_text(answer), add_special_tokens=False)["input_ids"]
    longest = max(len(s) for s in scripts.values()) + 8
    model = ScriptedLM(scripts, len(tok), tok.eos_token_id)
    return HFPolicy(model, tok, SamplingConfig(0.7, 1.0, longest, batch_size=len(records)))


def test_every_sft_target_extracts_to_its_completion():
    for pair in read_jsonl(DATA / "sft_pairs.jsonl"):
        assert extract_code(target_text(pair)) == pair["completion"].strip("\n") + "\n"


def test_teacher_answers_pass_the_heldout_evaluation(gold, tokenizer, tmp_path):
    from drtriton.train.rewards import BatchVerifier

    policy = _scripted_policy(tokenizer, gold, gold)
    samples = tmp_path / "samples.jsonl"
    result = evaluate_policy(policy, BatchVerifier("cpu", workers=2), gold, str(samples))
    assert result["no_code"] == 0 and result["truncated"] == 0
    assert result["statuses"] == {"correct": len(gold)}, result["statuses"]
    assert result["pass@1"] == 1.0
    assert {lv: s["pass@1"] for lv, s in result["per_level"].items()} == {"1": 1.0, "2": 1.0}
    lines = list(read_jsonl(samples))
    assert [line["id"] for line in lines] == [r["id"] for r in gold]
    assert [line["code"] for line in lines] == [extract_code(target_text(r)) for r in gold]


def test_teacher_answers_to_the_wrong_programs_fail(gold, tokenizer):
    from drtriton.train.rewards import BatchVerifier

    records = [gold[0], gold[PER_LEVEL]]  # a level-1 and a level-2 program, answers swapped
    policy = _scripted_policy(tokenizer, records, records[::-1])
    result = evaluate_policy(policy, BatchVerifier("cpu", workers=2), records)
    assert result["no_code"] == 0
    assert result["pass@1"] == 0.0, result["statuses"]

"""`drtriton sft` end to end on a tiny model: masking, checkpoints, resume, LoRA."""

import json

import torch

from drtriton.cli import main
from drtriton.policy.hf import load_model
from drtriton.train.data import IGNORE, encode_pair


def test_prompt_tokens_are_masked(tiny_model):
    _, tok = load_model(tiny_model)
    enc = encode_pair(tok, "PROMPT text", "answer", max_len=512)
    n_prompt = len(tok("PROMPT text")["input_ids"])
    assert enc["labels"][:n_prompt] == [IGNORE] * n_prompt
    assert enc["labels"][n_prompt:] == enc["input_ids"][n_prompt:]
    assert enc["input_ids"][-1] == tok.eos_token_id


def _metrics(out):
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_sft_learns_checkpoints_and_resumes(tiny_model, pairs_file, tmp_path):
    out = tmp_path / "sft"
    common = ["sft", "--model", str(tiny_model), "--data", str(pairs_file), "--out", str(out),
              "--lr", "3e-3", "--batch-size", "2", "--log-every", "1", "--save-every", "2",
              "--warmup", "0"]  # fmt: skip
    assert main([*common, "--max-steps", "6"]) == 0
    first = _metrics(out)
    assert [m["step"] for m in first] == [1, 2, 3, 4, 5, 6]
    assert first[-1]["loss"] < first[0]["loss"]
    assert (out / "checkpoint-6" / "state.json").is_file()
    model, _ = load_model(out)  # the final model loads like any checkpoint
    assert main([*common, "--max-steps", "8", "--resume"]) == 0
    assert [m["step"] for m in _metrics(out)][6:] == [7, 8]
    again, _ = load_model(out)
    assert any(not torch.equal(a, b) for a, b in zip(model.parameters(), again.parameters(),
                                                     strict=True))  # fmt: skip


def test_sft_lora_merges_into_a_plain_checkpoint(tiny_model, pairs_file, tmp_path):
    out = tmp_path / "lora"
    args = ["sft", "--model", str(tiny_model), "--data", str(pairs_file), "--out", str(out),
            "--max-steps", "1", "--lora", "--lora-r", "4", "--save-every", "0"]  # fmt: skip
    assert main(args) == 0
    model, _ = load_model(out)
    assert not any("lora" in name for name, _ in model.named_parameters())


def test_user_errors_exit_2(tmp_path, capsys):
    assert main(["sft", "--model", str(tmp_path), "--data", "x", "--out", "y"]) == 2
    assert "not a model checkpoint" in capsys.readouterr().err

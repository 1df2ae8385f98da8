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


def _sft_args(tiny_model, pairs_file, out, *extra):
    return ["sft", "--model", str(tiny_model), "--data", str(pairs_file), "--out", str(out),
            "--lr", "3e-3", "--batch-size", "2", "--log-every", "1", "--save-every", "2",
            "--warmup", "0", *extra]  # fmt: skip


def test_resume_with_no_checkpoint_is_a_user_error(tiny_model, pairs_file, tmp_path, capsys):
    out = tmp_path / "empty"
    assert main(_sft_args(tiny_model, pairs_file, out, "--max-steps", "2", "--resume")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no checkpoint in" in err and str(out) in err
    assert not (out / "metrics.jsonl").exists()  # it did not start over


def test_ctrl_c_saves_a_checkpoint_that_resume_continues(tiny_model, pairs_file, tmp_path,
                                                         monkeypatch, capsys):  # fmt: skip
    import drtriton.policy.hf as hf

    load, calls = hf.load_model, []

    def ctrl_c_at_step_4(*args, **kwargs):
        model, tokenizer = load(*args, **kwargs)

        def forward(_module, _inputs):
            calls.append(1)
            if len(calls) == 4:  # one micro-batch per step: the 4th step's forward
                raise KeyboardInterrupt

        model.register_forward_pre_hook(forward)
        return model, tokenizer

    monkeypatch.setattr(hf, "load_model", ctrl_c_at_step_4)
    out = tmp_path / "sft"
    assert main(_sft_args(tiny_model, pairs_file, out, "--max-steps", "6")) == 130
    assert "saved" in capsys.readouterr().err
    state = json.loads((out / "checkpoint-3" / "state.json").read_text())
    assert state == {"step": 3, "micro": 3}
    assert not list(out.glob(".checkpoint-*"))  # written aside, then renamed into place
    monkeypatch.setattr(hf, "load_model", load)
    assert main(_sft_args(tiny_model, pairs_file, out, "--max-steps", "6", "--resume")) == 0
    assert [m["step"] for m in _metrics(out)] == [1, 2, 3, 4, 5, 6]


def test_resume_does_not_log_steps_twice(tiny_model, pairs_file, tmp_path):
    import shutil

    out = tmp_path / "sft"
    assert main(_sft_args(tiny_model, pairs_file, out, "--max-steps", "6")) == 0
    shutil.rmtree(out / "checkpoint-6")  # as if killed after logging steps 5 and 6
    assert main(_sft_args(tiny_model, pairs_file, out, "--max-steps", "6", "--resume")) == 0
    assert [m["step"] for m in _metrics(out)] == [1, 2, 3, 4, 5, 6]  # 5, 6 re-run, not re-logged
    assert (out / "checkpoint-6" / "state.json").is_file()

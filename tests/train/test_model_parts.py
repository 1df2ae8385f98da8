"""benchmarks/h200/model_parts.py: a checkpoint cut into parts and joined again loads with its
weights rounded to bfloat16 (stochastically, unbiased) and its tokenizer; missing parts are a
user error, not a traceback."""

import json
import pathlib
import shutil

import pytest
import torch

from drtriton.policy.hf import load_model


def test_pack_unpack_round_trip(tiny_model, tmp_path, monkeypatch, capsys, benchmark_script):
    tool = benchmark_script("h200/model_parts.py")
    monkeypatch.setattr(tool, "PART_BYTES", 64 << 10)  # several parts from a tiny model
    parts = tool.pack(str(tiny_model), str(tmp_path / "out" / "model"))
    assert len(parts) > 1 and all(pathlib.Path(p).stat().st_size <= 64 << 10 for p in parts)
    assert tool.main(["unpack", str(tmp_path / "out" / "model"), str(tmp_path / "back")]) == 0
    original, tok = load_model(tiny_model)
    back, tok_back = load_model(tmp_path / "back")
    for (name, a), (_, b) in zip(
        original.state_dict().items(), back.state_dict().items(), strict=True
    ):
        # One of the two bfloat16 neighbours of each float32 weight (a step is 2^-7 relative).
        assert b.dtype == torch.bfloat16, name
        assert bool(((b.float() - a).abs() <= a.abs() * 2**-7 + 1e-30).all()), name
    assert tok_back("def f(x): return x")["input_ids"] == tok("def f(x): return x")["input_ids"]
    assert tool.main(["unpack", str(tmp_path / "none"), str(tmp_path / "x")]) == 2
    assert "no parts" in capsys.readouterr().err


def test_pack_keeps_the_rl_step_count(tiny_model, tmp_path, benchmark_script):
    """The count of RL steps behind a model (drpo's program draw goes on from it) travels."""
    src = tmp_path / "src"
    shutil.copytree(tiny_model, src)
    config = json.loads((src / "config.json").read_text())
    (src / "config.json").write_text(json.dumps({**config, "drtriton_rl_steps": 7}))
    tool = benchmark_script("h200/model_parts.py")
    tool.pack(str(src), str(tmp_path / "model"))
    tool.unpack(str(tmp_path / "model"), str(tmp_path / "back"))
    assert json.loads((tmp_path / "back" / "config.json").read_text())["drtriton_rl_steps"] == 7


def test_stochastic_rounding_is_unbiased_and_exact_on_bfloat16_values(benchmark_script):
    tool = benchmark_script("h200/model_parts.py")
    gen = torch.Generator().manual_seed(0)
    exact = torch.tensor([1.0, -0.5, 0.0, 3.0 + 2**-6], dtype=torch.float32)
    assert torch.equal(tool.round_stochastic(exact, gen).float(), exact)
    # 1 + 2^-10 lies 1/8 of the way from 1 to the next bfloat16 value, 1 + 2^-7.
    for x in (1 + 2**-10, -(1 + 2**-10)):
        draws = tool.round_stochastic(torch.full((40000,), x), gen).float()
        sign = 1.0 if x > 0 else -1.0
        assert set(draws.unique().tolist()) == {sign * 1.0, sign * (1 + 2**-7)}
        assert float((draws.abs() != 1.0).float().mean()) == pytest.approx(1 / 8, abs=0.01)
        assert float(draws.mean()) == pytest.approx(x, abs=6e-5)  # 4.5 sd
    # Rounding to the nearest would take every one of these back to 1.0.
    assert torch.full((8,), 1 + 2**-10).to(torch.bfloat16).float().eq(1.0).all()

"""benchmarks/h200/model_parts.py: a checkpoint cut into parts and joined again loads with the
same (bfloat16) weights and tokenizer; missing parts are a user error, not a traceback."""

import importlib.util
import json
import pathlib
import shutil

import torch

from drtriton.policy.hf import load_model

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _tool():
    path = ROOT / "benchmarks" / "h200" / "model_parts.py"
    spec = importlib.util.spec_from_file_location("model_parts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pack_unpack_round_trip(tiny_model, tmp_path, monkeypatch, capsys):
    tool = _tool()
    monkeypatch.setattr(tool, "PART_BYTES", 64 << 10)  # several parts from a tiny model
    parts = tool.pack(str(tiny_model), str(tmp_path / "out" / "model"))
    assert len(parts) > 1 and all(pathlib.Path(p).stat().st_size <= 64 << 10 for p in parts)
    assert tool.main(["unpack", str(tmp_path / "out" / "model"), str(tmp_path / "back")]) == 0
    original, tok = load_model(tiny_model)
    back, tok_back = load_model(tmp_path / "back")
    for (name, a), (_, b) in zip(
        original.state_dict().items(), back.state_dict().items(), strict=True
    ):
        assert b.dtype == torch.bfloat16 and torch.equal(a.to(torch.bfloat16), b), name
    assert tok_back("def f(x): return x")["input_ids"] == tok("def f(x): return x")["input_ids"]
    assert tool.main(["unpack", str(tmp_path / "none"), str(tmp_path / "x")]) == 2
    assert "no parts" in capsys.readouterr().err


def test_pack_keeps_the_rl_step_count(tiny_model, tmp_path):
    """The count of RL steps behind a model (drpo's program draw goes on from it) travels."""
    src = tmp_path / "src"
    shutil.copytree(tiny_model, src)
    config = json.loads((src / "config.json").read_text())
    (src / "config.json").write_text(json.dumps({**config, "drtriton_rl_steps": 7}))
    tool = _tool()
    tool.pack(str(src), str(tmp_path / "model"))
    tool.unpack(str(tmp_path / "model"), str(tmp_path / "back"))
    assert json.loads((tmp_path / "back" / "config.json").read_text())["drtriton_rl_steps"] == 7

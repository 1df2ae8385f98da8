"""Checkpoints shared by SFT and RL: `OUT/checkpoint-<step>/` holds accelerate's state
(model, optimizer, scheduler, RNG) plus `state.json` (step and loop-specific fields); the final
model is saved to `OUT/` in the Hugging Face layout, loadable by `from_pretrained`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any


def latest(out: str | Path) -> Path | None:
    steps = [(int(p.name.split("-")[1]), p) for p in Path(out).glob("checkpoint-*")
             if p.name.split("-")[1].isdigit() and (p / "state.json").is_file()]  # fmt: skip
    return max(steps)[1] if steps else None


def save(
    accelerator: Any, out: str | Path, step: int, state: dict[str, Any], keep: int = 2
) -> Path:
    """Saves the training state at `step` and keeps the newest `keep` checkpoints."""
    path = Path(out) / f"checkpoint-{step}"
    accelerator.save_state(str(path))
    if accelerator.is_main_process:
        # state.json last: a checkpoint without it is torn and `latest` ignores it.
        (path / "state.json").write_text(json.dumps({"step": step, **state}))
        olds = sorted(Path(out).glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
        for old in olds[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    accelerator.wait_for_everyone()
    return path


def load(accelerator: Any, path: Path) -> dict[str, Any]:
    accelerator.load_state(str(path))
    return json.loads((path / "state.json").read_text())


def save_final(accelerator: Any, model: Any, tokenizer: Any, out: str | Path) -> None:
    """The trained model in the HF layout; a LoRA model is merged so that it loads alone.
    Every process must call it: under FSDP the full state dict is gathered from all ranks."""
    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    if hasattr(unwrapped, "merge_and_unload"):  # LoRA (one device or DDP: weights are whole)
        if accelerator.is_main_process:
            unwrapped.merge_and_unload().save_pretrained(str(out))
            tokenizer.save_pretrained(str(out))
        accelerator.wait_for_everyone()
        return
    state = accelerator.get_state_dict(model)
    if accelerator.is_main_process:
        unwrapped.save_pretrained(str(out), state_dict=state)
        tokenizer.save_pretrained(str(out))
    accelerator.wait_for_everyone()


class MetricsLog:
    """Appends one JSON object per line (a torn tail from a crash is fine to resume after)."""

    def __init__(self, path: str | Path, enabled: bool = True) -> None:
        self.path = Path(path)
        self.enabled = enabled
        if enabled:
            self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, record: dict[str, Any]) -> None:
        if self.enabled:
            with self.path.open("a") as f:
                f.write(json.dumps(record) + "\n")

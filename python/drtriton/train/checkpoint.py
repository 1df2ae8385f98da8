"""Checkpoints shared by SFT and RL: `OUT/checkpoint-<step>/` holds accelerate's state
(model, optimizer, scheduler, RNG) plus `state.json` (step and loop-specific fields); the final
model is saved to `OUT/` in the Hugging Face layout, loadable by `from_pretrained`."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from drtriton.errors import UserError


def _step(path: Path) -> int | None:
    """The step of a `checkpoint-<step>` folder; None for any other name."""
    tail = path.name.split("-", 1)[1] if path.name.startswith("checkpoint-") else ""
    return int(tail) if tail.isdigit() else None


def latest(out: str | Path) -> Path | None:
    steps = [(step, p) for p in Path(out).glob("checkpoint-*")
             if (step := _step(p)) is not None and (p / "state.json").is_file()]  # fmt: skip
    return max(steps)[1] if steps else None


def resume_point(out: str | Path) -> Path:
    """The checkpoint an explicit --resume continues from. None there is the user's mistake
    (a wrong --out, say): starting over instead would train again and log the steps twice."""
    last = latest(out)
    if last is None:
        raise UserError(f"--resume: no checkpoint in {Path(out)} (looked for "
                        "checkpoint-<step>/state.json); run without --resume to start fresh")  # fmt: skip
    return last


def save(
    accelerator: Any, out: str | Path, step: int, state: dict[str, Any], keep: int = 2
) -> Path:
    """Saves the training state at `step` and keeps the newest `keep` checkpoints.

    The state goes to a hidden `.checkpoint-<step>.partial/` renamed into place once whole, so
    a save cut short (a second Ctrl-C, a killed job) leaves no torn checkpoint to resume from."""
    out = Path(out)
    path, partial = out / f"checkpoint-{step}", out / f".checkpoint-{step}.partial"
    if accelerator.is_main_process:
        shutil.rmtree(partial, ignore_errors=True)  # left by a save killed earlier
    accelerator.wait_for_everyone()
    accelerator.save_state(str(partial))
    accelerator.wait_for_everyone()  # every rank's files are in before the rename
    if accelerator.is_main_process:
        (partial / "state.json").write_text(json.dumps({"step": step, **state}))
        if path.exists():  # this step saved before (a resumed run re-ran it): the new one wins
            shutil.rmtree(path)
        os.replace(partial, path)
        olds = sorted((p for p in out.glob("checkpoint-*") if _step(p) is not None), key=_step)
        for old in olds[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    accelerator.wait_for_everyone()
    return path


class Interrupts:
    """Ctrl-C during a training loop: `saving` saves the last whole step on the way out, so
    that --resume continues from it.

    Inside `held()` (an optimizer step and the counters that name it) a Ctrl-C waits until the
    block ends: saved mid-step, the weights would be half-updated under the previous step's
    number. A second Ctrl-C there interrupts at once; nothing is saved then (`torn`)."""

    def __init__(self, accelerator: Any, out: str | Path) -> None:
        self.accelerator = accelerator
        self.out = Path(out)
        self.torn = False

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        pending: list[int] = []

        def hold(signum: int, _frame: Any) -> None:
            if pending:
                raise KeyboardInterrupt
            pending.append(signum)

        # Signal handlers can only be installed from the main thread; elsewhere Ctrl-C is not
        # delivered to this code anyway.
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, hold) if main else None
        try:
            yield
        except BaseException:
            self.torn = True
            raise
        finally:
            if main:
                signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
        if pending:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def saving(self, progress: Callable[[], tuple[int, dict[str, Any]]]) -> Iterator[None]:
        """`progress()` gives the last whole step and its state.json fields, read at the
        interrupt (the loop's counters move on after this block is entered)."""
        try:
            yield
        except KeyboardInterrupt:
            self._save(*progress())
            raise

    def _save(self, step: int, state: dict[str, Any]) -> None:
        path = self.out / f"checkpoint-{step}"
        if self.torn:
            last = latest(self.out)
            note = f"not saved (interrupted inside an optimizer step); last checkpoint: {last}"
        elif step == 0:
            note = "no step finished, nothing saved"
        else:
            if not (path / "state.json").is_file():
                save(self.accelerator, self.out, step, state)
            note = f"saved {path} (continue with --resume)"
        if self.accelerator.is_main_process:
            print(f"interrupted at step {step}: {note}", file=sys.stderr, flush=True)


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


def _key(record: dict[str, Any]) -> tuple[Any, bool]:
    # RL logs a step's line and its evaluation's line under one step number.
    return record.get("step"), bool(record.get("eval"))


class MetricsLog:
    """Appends one JSON object per line. A torn last line (a crash mid-append) is dropped.

    With `resume`, lines already in the file are not written again: a run resumed from
    checkpoint-4 after an earlier one logged steps 5 and 6 re-runs those steps."""

    def __init__(self, path: str | Path, enabled: bool = True, resume: bool = False) -> None:
        self.path = Path(path)
        self.enabled = enabled
        self.logged: set[tuple[Any, bool]] = set()
        if not enabled:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_file():
            self._drop_torn_tail()
            if resume:
                self.logged = {_key(r) for r in self._records()}

    def _drop_torn_tail(self) -> None:
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with self.path.open("r+b") as f:
                f.truncate(data.rfind(b"\n") + 1)

    def _records(self) -> Iterator[dict[str, Any]]:
        for line in self.path.read_text().splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                record = json.loads(line)
                if isinstance(record, dict):
                    yield record

    def write(self, record: dict[str, Any]) -> None:
        if not self.enabled or _key(record) in self.logged:
            return
        self.logged.add(_key(record))
        with self.path.open("a") as f:
            f.write(json.dumps(record) + "\n")

"""Checkpoint helpers shared by SFT and RL: Ctrl-C held through an update, idempotent metrics
on resume, and --resume with nothing to resume."""

import json
import os
import signal

import pytest

from drtriton.errors import UserError
from drtriton.train import checkpoint


def test_ctrl_c_inside_an_update_waits_for_its_end(tmp_path):
    # The handler the process had (SIG_IGN in a shell's background job, Python's default in a
    # terminal) is the one put back.
    before = signal.getsignal(signal.SIGINT)
    interrupts = checkpoint.Interrupts(accelerator=None, out=tmp_path)
    finished = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.held():
            os.kill(os.getpid(), signal.SIGINT)
            finished.append(True)  # the block runs to its end before the interrupt
    assert finished == [True] and not interrupts.torn
    assert signal.getsignal(signal.SIGINT) is before  # handler restored


def test_a_second_ctrl_c_interrupts_at_once_and_marks_the_state_torn(tmp_path):
    interrupts = checkpoint.Interrupts(accelerator=None, out=tmp_path)
    finished = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.held():
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
            finished.append(True)
    assert finished == [] and interrupts.torn


def test_resume_with_no_checkpoint_names_the_folder(tmp_path):
    (tmp_path / "checkpoint-3").mkdir()  # torn: no state.json
    with pytest.raises(UserError, match=str(tmp_path)):
        checkpoint.resume_point(tmp_path)


def test_resumed_metrics_skip_logged_steps_and_a_torn_tail(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1}\n{"step": 2}\n{"step": 2, "eval": true}\n{"step": 3, "lo')
    log = checkpoint.MetricsLog(path, resume=True)
    for record in ({"step": 2, "loss": 9.0}, {"step": 2, "eval": True}, {"step": 3}):
        log.write(record)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines == [{"step": 1}, {"step": 2}, {"step": 2, "eval": True}, {"step": 3}]

"""The worker's replies carry its GPU allocator's reserved peak; the channel keeps the largest
(the verdict's peak_gb, which memory admission's estimates are checked against)."""

from __future__ import annotations

import json
import time

import pytest

from drtriton.errors import ResourceError
from drtriton.verify.channel import OUT_OF_MEMORY, WorkerChannel


def channel_with(*replies: dict) -> WorkerChannel:
    """A channel whose pipe already holds `replies` (no worker process)."""
    channel = object.__new__(WorkerChannel)
    channel._buffer = b"".join(json.dumps(r).encode() + b"\n" for r in replies)
    channel.deadline = time.monotonic() + 60
    channel.phase = "run"
    channel.peak_bytes = 0
    return channel


def test_the_largest_peak_of_the_replies_is_kept():
    channel = channel_with({"ok": True, "peak_bytes": 5}, {"ok": True, "peak_bytes": 3},
                           {"ok": True})  # fmt: skip
    for _ in range(3):
        channel._read_reply()
    assert channel.peak_bytes == 5


def test_a_reply_that_ran_out_of_memory_still_reports_its_peak():
    channel = channel_with({"ok": False, "status": OUT_OF_MEMORY, "reason": "CUDA out of memory",
                            "peak_bytes": 7 << 30})  # fmt: skip
    with pytest.raises(ResourceError, match="ran out of GPU memory"):
        channel._read_reply()
    assert channel.peak_bytes == 7 << 30


def test_a_peak_that_is_not_an_integer_is_ignored():
    channel = channel_with({"ok": True, "peak_bytes": "lots"})
    channel._read_reply()
    assert channel.peak_bytes == 0


def test_the_harness_resets_its_peak_only_once_cuda_is_initialized(monkeypatch):
    # torch's reset raises before CUDA is initialized: a pooled harness's first verification
    # on the H200 failed that way, so the reset waits for an initialized CUDA.
    import torch

    from drtriton.verify import harness

    resets: list[str] = []
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", resets.append)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    harness._reset_peak_memory("cuda:0")
    assert resets == []
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    harness._reset_peak_memory("cuda:0")
    assert resets == ["cuda:0"]

"""The worker computes in strict float32, like the references (precision.py)."""

from __future__ import annotations

from conftest import HERE, task_source

from drtriton.verify import verify

HONEST = (HERE / "honest" / "add_relu.py").read_text()

# Reads the switches (static checks off: a real candidate may not even name torch.backends).
PROBE = HONEST.replace(
    "def triton_fused_operator(",
    "def _probe():\n"
    "    if torch.backends.cudnn.allow_tf32 or torch.backends.cuda.matmul.allow_tf32:\n"
    "        raise RuntimeError('TF32 is on in the worker')\n\n\n"
    "def triton_fused_operator(",
)


def test_tf32_is_off_in_the_worker() -> None:
    probe = PROBE.replace("    return ", "    _probe()\n    return ", 1)
    assert "_probe()\n    return" in probe
    verdict = verify(task_source("add_relu"), probe, static_checks=False)
    assert verdict.correct, verdict.to_json()


def test_the_probe_would_see_tf32() -> None:
    # The same probe fails when the flag is on: the test above can fail.
    flipped = PROBE.replace(
        "def _probe():\n", "def _probe():\n    torch.backends.cudnn.allow_tf32 = True\n"
    )
    probe = flipped.replace("    return ", "    _probe()\n    return ", 1)
    verdict = verify(task_source("add_relu"), probe, static_checks=False)
    assert verdict.status == "runtime_error", verdict.to_json()

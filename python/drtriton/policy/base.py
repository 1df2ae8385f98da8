"""The policy interface, shared by training (rollouts) and the test-time search.

A policy maps prompts to `n` sampled completions each. Every completion carries its text, the
extracted code, and token counts (tokens/s metrics; 0 where a backend cannot count).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from drtriton.policy.extract import extract_code


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"  # "stop" | "length"
    code: str = field(default="")

    def __post_init__(self) -> None:
        if not self.code:
            self.code = extract_code(self.text)


@runtime_checkable
class Policy(Protocol):
    name: str

    def generate(self, prompts: list[str], n: int = 1) -> list[list[Completion]]:
        """`n` completions for each prompt, in prompt order."""
        ...


class PolicyCandidates:
    """Any Policy as a candidate source for the test-time search (drtriton.search's protocol:
    `candidates(task_source, k)`): prompts with the task's template, samples k completions,
    returns the distinct non-empty extracted codes."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def candidates(self, task_source: str, k: int, amplified: Sequence[str] = ()) -> list[str]:
        """`amplified` is not in the prompt: the model writes for the task as the verifier
        judges it."""
        from drtriton.policy.prompts import prompt_for

        [group] = self.policy.generate([prompt_for(task_source)], k)
        return list(dict.fromkeys(c.code for c in group if c.code))

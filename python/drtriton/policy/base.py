"""The policy interface, shared by training (rollouts) and the test-time search.

A policy maps prompts to `n` sampled completions each. Every completion carries its text, the
extracted code, and token counts (tokens/s metrics; 0 where a backend cannot count).
"""

from __future__ import annotations

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

"""LLM policies, prompts and code extraction, shared by training and the test-time search.

    from drtriton.policy import prompt_for, extract_code, HFPolicy, TemplatePolicy, OpenAIPolicy
    policy = HFPolicy.from_pretrained("ckpt/")
    groups = policy.generate([prompt_for(record)], n=8)   # list[list[Completion]]
    groups[0][0].code                                     # the extracted candidate

One file per backend: template.py (the C++ teacher), hf.py (transformers, local checkpoints),
openai_compat.py (any OpenAI-compatible endpoint). Backends import their heavy dependencies
lazily, so `import drtriton.policy` is cheap.
"""

from __future__ import annotations

from drtriton.policy.base import Completion, Policy, PolicyCandidates
from drtriton.policy.extract import extract_code
from drtriton.policy.hf import HFPolicy, SamplingConfig
from drtriton.policy.openai_compat import OpenAIConfig, OpenAIPolicy
from drtriton.policy.prompts import kernelbench_prompt, prompt_for, synthetic_prompt
from drtriton.policy.template import TemplatePolicy

__all__ = [
    "Completion",
    "HFPolicy",
    "OpenAIConfig",
    "OpenAIPolicy",
    "Policy",
    "PolicyCandidates",
    "SamplingConfig",
    "TemplatePolicy",
    "extract_code",
    "kernelbench_prompt",
    "prompt_for",
    "synthetic_prompt",
]

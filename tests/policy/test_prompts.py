from drtriton.policy import kernelbench_prompt, prompt_for, synthetic_prompt
from drtriton.policy.template import task_from_prompt

TASK = """import torch

def fused_operator(x0):
    t0 = torch.relu(x0)
    return t0

def get_inputs():
    return [torch.randn(64)]
"""

MODULE = """import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""


def test_synthetic_prompt_states_the_paper_rules():
    p = synthetic_prompt(TASK)
    for needle in ("exactly one @triton.jit kernel", "triton_fused_operator", "<triton_code>",
                   "masked loads", "torch.randn(128)", "t0 = torch.relu(x0)"):  # fmt: skip
        assert needle in p
    assert p.count("<triton_code>") == 2  # the rule and the worked example


def test_kernelbench_prompt_asks_for_modelnew():
    p = kernelbench_prompt(MODULE)
    assert "ModelNew" in p and "class Model(torch.nn.Module)" in p


def test_prompt_for_picks_template_and_task_round_trips():
    assert "ModelNew" in prompt_for(MODULE)
    assert "triton_fused_operator" in prompt_for({"source": TASK})
    assert task_from_prompt(prompt_for(TASK)).strip() == TASK.strip()

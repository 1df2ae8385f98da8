import pytest

from drtriton.policy import TemplatePolicy, prompt_for

TASK = """import torch

def fused_operator(x0, x1):
    t0 = torch.add(x0, x1)
    t1 = torch.relu(t0)
    return t1

def get_inputs():
    return [torch.randn(64, 32), torch.randn(64, 32)]
"""


def test_teacher_samples_n_kernels():
    try:
        policy = TemplatePolicy()
    except Exception as exc:  # the extension may be missing in a partial build
        pytest.skip(str(exc))
    [group] = policy.generate([prompt_for(TASK)], n=3)
    assert len(group) == 3
    assert all("def triton_fused_operator" in c.code and "@triton.jit" in c.code for c in group)
    assert "<triton_code>" in group[0].text


def test_missing_teacher_is_a_clear_error(monkeypatch):
    import sys

    import drtriton
    from drtriton.errors import UserError

    monkeypatch.setitem(sys.modules, "drtriton._core", None)  # as if the extension were absent
    monkeypatch.delattr(drtriton, "_core", raising=False)
    with pytest.raises(UserError, match="TemplatePolicy needs the teacher"):
        TemplatePolicy()

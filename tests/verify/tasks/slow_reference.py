import time

import torch


def fused_operator(x0, x1):
    time.sleep(4.0)  # the harness's work per input set (test_timeout_reason.py)
    return torch.relu(torch.add(x0, x1))


def get_inputs():
    return [torch.randn(4, 300), torch.randn(4, 300)]

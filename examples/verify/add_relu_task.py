import torch


def fused_operator(x0, x1):
    t0 = torch.add(x0, x1)
    t1 = torch.relu(t0)
    return t1


def get_inputs():
    return [torch.randn(4, 300), torch.randn(4, 300)]

import torch


def fused_operator(x0):
    t0 = torch.mul(x0, 4096.0)
    t1 = torch.add(t0, 1.0)
    t2 = torch.sub(t1, t0)
    return t2


def get_inputs():
    return [torch.randn(4, 300)]

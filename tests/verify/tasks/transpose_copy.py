import torch


def fused_operator(x0):
    t0 = x0.t().contiguous()
    return t0


def get_inputs():
    return [torch.randn(16, 24)]

import torch
import torch.nn.functional as F

def fused_operator(x0, x1, x2):
    t0 = F.conv2d(x0, x1, None, 1, 1)
    t1 = torch.relu(t0)
    t2 = torch.add(t1, x2)
    return t2

def get_inputs():
    return [torch.randn(16, 3, 32, 32), torch.randn(8, 3, 3, 3), torch.randn(1, 8, 1, 1)]

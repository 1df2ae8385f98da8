"""A stored operand of one element loads as a scalar in a contraction's K loop
(core/codegen/emit_contraction.cc OperandTile); it is masked like a tile, or a transposed
convolution's lanes outside the window read it. Found by the tiny-preset acceptance run: a
synthetic log -> matmul -> conv_transpose1d of a (1, 1, 1) input had every output wrong."""

from __future__ import annotations

from teach_tasks import DEVICE

from drtriton.teach import emit
from shared_verifier import verify

PROGRAM = """import torch
import torch.nn.functional as F

def fused_operator(x0, x1, x2):
    t0 = torch.log(x0)
    t1 = torch.matmul(t0, x0)
    t2 = F.conv_transpose1d(t1, x1, x2)
    return t2

def get_inputs():
    return [torch.rand(1, 1, 1), torch.randn(1, 5, 2), torch.randn(5)]
"""


def test_a_one_element_operand_is_masked_outside_the_window() -> None:
    candidate = emit(PROGRAM)
    assert candidate.count("a = tl.where(mask_a, ") == 2, candidate
    verdict = verify(PROGRAM, candidate, device=DEVICE, input_seed=0)
    assert verdict.correct, f"{verdict.status}: {verdict.reason}"

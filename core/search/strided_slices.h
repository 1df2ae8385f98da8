// Strided slices among a hybrid's PyTorch lines.  The catalog has no slice with a step, so
// the frontend spells `x[:, 1::2]` as narrow, a zero pad up to a multiple of the step, a
// reshape that splits the dim into (n, step) and a select of one phase (frontend/aten.py).
// In a kernel that is index arithmetic; run line by line in PyTorch the pad writes a copy
// of the whole tensor.  KernelBench L3 29 (SwinMLP) takes four such slices of a 10 x 56 x
// 56 x 96 activation in each patch merging, two of them through a pad each.
#pragma once

#include <vector>

#include "ir/program.h"
#include "search/cover.h"

namespace drtriton::search {

// `plan` (PlanHybrid's) with each run of consecutive one-line PyTorch segments that chains
// narrow, trailing zero pads, one-dim splitting reshapes and selects from one value into a
// strided view of it joined into one segment of one line: `t9 = x[:, 1::2, 0::2]`.  A run
// joins only where each of its intermediate values is read by the next line alone, every
// padded element is selected away, and the view keeps the value's dims in order.
std::vector<PlannedSegment> JoinStridedSlices(const Program& program,
                                              std::vector<PlannedSegment> plan);

}  // namespace drtriton::search

// Concatenations among a hybrid's PyTorch lines.  The frontend spells torch.cat as a sum of
// zero-padded parts (frontend/aten.py _cat): in a kernel that is index arithmetic, but run
// line by line in PyTorch each part's pad writes the whole output and each add reads two
// outputs and writes one, about 4k - 3 output-sized passes for k parts against a cat's 2.
// KernelBench L3 14 (DenseNet's block concatenates all earlier features after each of six
// layers) moved about 15 GB that way against eager's 1.7 GB in bf16 and ran 0.61x eager on
// an H100 (2026-12-07) although each of its kernels beat the lines it replaced.
#pragma once

#include <vector>

#include "ir/program.h"
#include "search/cover.h"

namespace drtriton::search {

// `plan` (PlanHybrid's, one PyTorch segment per node) with each run of consecutive PyTorch
// segments that sums zero-padded parts lying side by side along one dim joined into one
// segment of one line: `t = torch.cat([a, b], d)`, wrapped in F.pad where the parts leave
// the dim's ends uncovered (the rest of the sum is added by a fused fragment after it).
// A run joins only where none of its intermediate values is read outside it.
std::vector<PlannedSegment> JoinPaddedSums(const Program& program,
                                           std::vector<PlannedSegment> plan);

}  // namespace drtriton::search

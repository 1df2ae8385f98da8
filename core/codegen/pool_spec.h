// Private to codegen/: a pooling node's parameters, shared by the two pool kernels
// (emit_pool.cc: one lane per window tap; emit_pool_strips.cc: strips along the last dim).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/sizes.h"
#include "ir/program.h"

namespace drtriton::codegen {

struct PoolSpec {
  enum Kind { kMax, kAvg, kAdaptive } kind = kMax;
  size_t nsp = 1;
  Shape in_sp, out_sp;
  std::vector<int64_t> kernel, stride, pad, dil;
  bool count_include_pad = true;
  Shape window;  // lanes per output: the kernel, or the largest adaptive bin
  Dims in_dims;  // in_sp as text (sizes.h): literals, or runtime sizes in generic mode
  // The window as text: the kernel, the largest adaptive bin, or in generic mode a bound on
  // the adaptive bin for a runtime length L over O bins: L // O + 2 (a bin spans
  // ceil((o+1) L / O) - floor(o L / O) < L / O + 2 elements; lanes past its end are masked).
  Dims window_dims;
};

PoolSpec PoolSpecOf(const GroupContext& ctx, const Node& node);

// The strip kernel (emit_pool_strips.cc) for a max or average pool of literal sizes whose
// unrolled taps stay small; nullopt where it does not apply (the caller emits the window
// kernel instead).
std::optional<EmittedKernel> EmitPoolStrips(const GroupContext& ctx, const PoolSpec& s);

}  // namespace drtriton::codegen

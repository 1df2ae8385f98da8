// Private to codegen/: a pooling node's parameters, shared by the two pool kernels
// (emit_pool.cc: one lane per window tap; emit_pool_strips.cc: strips along the last dim).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
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

// torch's average-pool divisor along dim `d` for windows starting at `start` (text): the
// window end clipped to in + pad, and for count_include_pad=False to the input, with the
// start clipped to 0.  Runtime sizes in generic mode.
std::string AvgDivisorTerm(const GroupContext& ctx, const PoolSpec& s, size_t d,
                           const std::string& start);

// The strip kernel (emit_pool_strips.cc) for a max or average pool of literal sizes whose
// unrolled taps stay small; nullopt where it does not apply (the caller emits the window
// kernel instead).
std::optional<EmittedKernel> EmitPoolStrips(const GroupContext& ctx, const PoolSpec& s);

}  // namespace drtriton::codegen

// Sliding windows, shared by conv (op_rules_conv.cc) and pooling (op_rules_pool.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "synth/op_rules_context.h"

namespace drtriton::synth::rules {

// Window attributes of conv and pool: a kernel-size variable per spatial dim and a padding
// variable with 2 * padding <= dilation * (kernel - 1) + 1 (PyTorch's pooling limit; also
// used for conv so that padding never only adds zeros).
struct Window {
  std::vector<VarId> kernel, padding;
  std::vector<int64_t> dilation;  // fixed per spatial dim
};

// Samples dilation and posts kernel and padding for `n` spatial dims (padding set on the
// node).  nullopt when the catalog's choices leave no kernel or padding within the bounds.
std::optional<Window> MakeWindow(Ctx& c, int n, bool pool);

// out = floor((in + 2p - dil * (k - 1) - 1) / s) + 1 for spatial dim `k` of the window;
// stride 0 means stride = kernel (pool's stride=None).
void PostWindowOutput(Ctx& c, const Window& w, size_t k, int64_t stride, VarId in, VarId out);

// prod(dims) * prod(kernel): the FLOPs dims of a window applied at every `dims` position.
std::vector<VarId> TimesKernel(std::vector<VarId> dims, const Window& w);

}  // namespace drtriton::synth::rules

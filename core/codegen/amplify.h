// Which contractions feed an operator that magnifies their rounding (the catalog's
// kAmplifiesError: softmax, log_softmax, exp, cumprod), and so take bf16x6, the split that
// carries float32's 24 bits, instead of fp16x3's 22 (emit_contraction.cc, ContractionPrecision).
#pragma once

#include <string>
#include <vector>

#include "ir/program.h"

namespace drtriton::codegen {

// Per value of `program`: whether its rounding reaches an error amplifier, i.e. a reader of it
// amplifies, or passes the error on (elementwise, layout, channelwise and pooling operators,
// and contractions, whose products scale it: L3 43's q/k/v linear feeds q @ k^T, then a
// softmax) to a value that does.  Reductions and norms end a path.  A program output named in
// `amplified_outputs` counts as read by an amplifier: the test-time search builds fragments
// of a larger program (search/fragments.h), and a fragment's output may feed a softmax that
// another fragment computes.  One pass over the nodes in reverse (program order is
// topological), so a DenseNet's thousands of reconverging paths cost nothing extra.
std::vector<bool> AmplifiedValues(const Program& program,
                                  const std::vector<std::string>& amplified_outputs = {});

}  // namespace drtriton::codegen

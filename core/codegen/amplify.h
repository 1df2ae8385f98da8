// Which contractions feed an operator that magnifies their rounding (the catalog's
// kAmplifiesError: softmax, log_softmax, exp, cumprod), and so take bf16x6, the split that
// carries float32's 24 bits, instead of fp16x3's 22 (emit_contraction.cc, ContractionPrecision);
// and which intermediates must stay float32 between kernels in the half modes.
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

// Per value: whether rounding it to bf16 or fp16 between kernels could fail the verifier,
// i.e. it reaches, through operators that pass rounding on unmagnified (elementwise, layout,
// channelwise, pooling), a normalization (a conv output rounded before a group norm is off by
// 2^-9 of ~9 on uniform inputs, which the norm blew up to 0.27 against 0.29: 511 of 2,048
// elements past 1e-2), an error amplifier, a sum or running sum (the catalog's kAddsUpError),
// or an index or bool result (a rounding decides a near-tie).  A mean, a max or a min ends a
// path: its result's error is no larger than one input's.  So does a contraction: in the half
// modes its tl.dot rounds its operands to that dtype anyway (emit_contraction.cc,
// WriteDotStep).  The wrapper stores every other
// floating intermediate in the inputs' dtype (wrapper.cc, StoredDtype).
std::vector<bool> RoundingSensitiveValues(const Program& program);

}  // namespace drtriton::codegen

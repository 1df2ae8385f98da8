// The candidate of a one-operator program, for the codegen tests that check emitted text.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen.h"
#include "ir/parse_for_tests.h"

namespace drtriton::codegen {

// `t0 = <call>` over the input x0 built by `inputs`; "" (and a test failure) when it does not
// emit.  `generic`: shape-generic mode.
inline std::string EmitOneOp(const std::string& call, const std::string& inputs,
                             bool generic = false) {
  const Program p =
      MustParse("def fused_operator(x0):\n    t0 = " + call + "\n    return t0\n", inputs);
  CodegenOptions options;
  options.generic_shapes = generic;
  auto c = EmitCandidate(p, options);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().ToString());
  return c.ok() ? c.value() : "";
}

}  // namespace drtriton::codegen

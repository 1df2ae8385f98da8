// The template Triton generator (the teacher): turns a functional task (a Program) into a
// candidate file whose `triton_fused_operator` computes the program with `@triton.jit`
// kernels, one kernel per fused group (codegen/fusion.h).  Its candidates are SFT data,
// the first policy of the test-time search and the fallback when a model fails.
#pragma once

#include <string>
#include <vector>

#include "ir/program.h"
#include "util/result.h"

namespace drtriton::codegen {

struct CodegenOptions {
  // 0 = the heuristic configuration; k > 0 = the k-th alternative (other block sizes,
  // warps, or no epilogue fusion), see heuristics.h.  Every variant is a valid candidate.
  int variant = 0;
  // Fuse elementwise consumers into the kernel of the anchor that feeds them.
  bool fuse_epilogue = true;
};

// The candidate text, or an error naming the first operator or shape it cannot emit.
Result<std::string> EmitCandidate(const Program& program, const CodegenOptions& options = {});

// Up to `k` distinct candidates (variant 0, 1, ...); duplicates are dropped, so fewer may
// come back for programs with little to vary.  Empty when the program is unsupported.
std::vector<std::string> EmitVariants(const Program& program, int k);

// Catalog names of the program's operators (or operator configurations) that the
// generator cannot emit yet, each once, in program order.  Empty = fully supported.
std::vector<std::string> UnsupportedOps(const Program& program);

}  // namespace drtriton::codegen

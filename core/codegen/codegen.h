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
  // Emit a candidate for every shape of the program's rank and broadcast pattern: the
  // wrapper reads sizes from its inputs (`x0_s0, x0_s1 = x0.shape`), allocates and sizes
  // grids from them and passes them to kernels, whose index math, masks and loop bounds
  // use them; block sizes do not depend on the shapes (rows kernels size theirs in the
  // wrapper with triton.next_power_of_2).  Output lengths of convolutions and pools are
  // wrapper lines of torch's formula with the call's own numbers; adaptive pools loop
  // over a runtime bound on their bins.  Program constants
  // (eps, dims, group counts, kernel sizes of pools) stay literal.  Programs
  // GenericUnsupportedOps lists get the specialized candidate.
  bool generic_shapes = false;
  // Names of program outputs that an operator outside the program magnifies the rounding of
  // (a search fragment whose output feeds another fragment's softmax): contractions reaching
  // them take the full-precision split (amplify.h).
  std::vector<std::string> amplified_outputs;
  // Training batch norms take their statistics from the contractions' tiles where they fit
  // (fusion.h Group::column_stats): not by default, since they cost the contraction's kernel
  // as much as they save (fusion.h says what was measured).  EmitVariants adds it as variant 0's
  // alternative where it changes the candidate.
  bool column_stats = false;
};

// The candidate text, or an error naming the first operator or shape it cannot emit.
Result<std::string> EmitCandidate(const Program& program, const CodegenOptions& options = {});

// Up to `k` distinct candidates (variant 0, 1, ...); duplicates are dropped, so fewer may
// come back for programs with little to vary.  Empty when the program is unsupported.
std::vector<std::string> EmitVariants(const Program& program, int k, bool generic_shapes = false,
                                      const std::vector<std::string>& amplified_outputs = {});

// Catalog names of the program's operators (or operator configurations) that the
// generator cannot emit yet, each once, in program order.  Empty = fully supported.
std::vector<std::string> UnsupportedOps(const Program& program);

// Why generic_shapes falls back to the specialized candidate for this program: "2^31
// elements" for programs that need int64 index math, a size the rules of sizes.cc cannot
// express ("x0_s0 is a value name", "<op>(sizes)"), or a reduction over a convolution's
// spatial dims (reassociate.h rewrites it at the program's sizes only).  Empty = generic
// emission applies.
std::vector<std::string> GenericUnsupportedOps(const Program& program);

}  // namespace drtriton::codegen

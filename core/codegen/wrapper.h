// Private to codegen/: the candidate file around the emitted kernels (wrapper.cc).
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "codegen/sizes.h"
#include "ir/program.h"

namespace drtriton::codegen {

// One kernel launch and the stored value it writes (allocated just before it).
struct Launch {
  EmittedKernel kernel;
  ValueId output;
  // Allocated before this launch's kernels: a later group's output that its kernel may write
  // (EmittedKernel::computes_pool_when); invalid = none.  That group's launch then has
  // `allocated` set and allocates nothing.  Where the kernel computes that pool, its own
  // output is allocated only where the flag does not hold, just before the kernel (the
  // launches before it bind the flag).
  ValueId also_allocates;
  bool allocated = false;
  // Valid: `output` is a view of this value (codegen.cc RowMajorViewSource), bound in the
  // wrapper with no kernel; `kernel` is empty.
  ValueId view_of;
};

// `syms` (generic-shape mode): the wrapper reads the sizes from its inputs and allocates
// from them; null: it asserts the program's shapes and allocates literal shapes.
std::string AssembleCandidate(const Program& program, const std::vector<Launch>& launches,
                              const SizeSyms* syms = nullptr);

}  // namespace drtriton::codegen

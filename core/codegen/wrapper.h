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
  // Allocated with this launch's output, before its kernels: a later group's output that its
  // kernel may write (EmittedKernel::computes_pool_when); invalid = none.  That group's
  // launch then has `allocated` set and allocates nothing.
  ValueId also_allocates;
  bool allocated = false;
  // A wrapper flag under which no kernel of this launch writes its output (the pool tail's
  // TMA kernel writes the pool group's instead): the output is then allocated after the
  // launches before the last, only where the flag does not hold.  "" = always, first.
  std::string output_unless;
};

// `syms` (generic-shape mode): the wrapper reads the sizes from its inputs and allocates
// from them; null: it asserts the program's shapes and allocates literal shapes.
std::string AssembleCandidate(const Program& program, const std::vector<Launch>& launches,
                              const SizeSyms* syms = nullptr);

}  // namespace drtriton::codegen

// Private to codegen/: the candidate file around the emitted kernels (wrapper.cc).
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "ir/program.h"

namespace drtriton::codegen {

// One kernel launch and the stored value it writes (allocated just before it).
struct Launch {
  EmittedKernel kernel;
  ValueId output;
};

std::string AssembleCandidate(const Program& program, const std::vector<Launch>& launches);

}  // namespace drtriton::codegen

// Error-amplifier paths through a program (see amplify.h).
#include "codegen/amplify.h"

#include <algorithm>

#include "catalog/catalog.h"

namespace drtriton::codegen {
namespace {

bool PassesRounding(const OpInfo& op) {
  return op.has(kElementwise) || op.has(kLayout) || op.has(kChannelwise) || op.has(kPooling) ||
         op.has(kContraction) || op.has(kConv) || op.has(kConvTranspose);
}

}  // namespace

std::vector<bool> AmplifiedValues(const Program& program,
                                  const std::vector<std::string>& amplified_outputs) {
  std::vector<bool> amplified(program.values().size(), false);
  for (ValueId out : program.outputs()) {
    const std::string& name = program.value(out).name;
    if (std::find(amplified_outputs.begin(), amplified_outputs.end(), name) !=
        amplified_outputs.end())
      amplified[out.index] = true;
  }
  const auto& nodes = program.nodes();
  for (auto n = nodes.rbegin(); n != nodes.rend(); ++n) {
    const OpInfo& op = GetOp(n->op);
    const bool passed = PassesRounding(op) && amplified[n->result.index];
    if (!op.has(kAmplifiesError) && !passed) continue;
    for (ValueId t : n->tensors)
      if (t.valid()) amplified[t.index] = true;
  }
  return amplified;
}

}  // namespace drtriton::codegen

// Error-amplifier paths through a program (see amplify.h).
#include "codegen/amplify.h"

#include <algorithm>

#include "catalog/catalog.h"

namespace drtriton::codegen {

bool FeedsErrorAmplifier(const Program& program, ValueId v,
                         const std::vector<std::string>& amplified_outputs) {
  const auto& outs = program.outputs();
  const bool output = std::find(outs.begin(), outs.end(), v) != outs.end();
  const std::string& name = program.value(v).name;
  if (output && std::find(amplified_outputs.begin(), amplified_outputs.end(), name) !=
                    amplified_outputs.end())
    return true;
  for (const Node& n : program.nodes()) {
    if (std::find(n.tensors.begin(), n.tensors.end(), v) == n.tensors.end()) continue;
    const OpInfo& op = GetOp(n.op);
    if (op.has(kAmplifiesError)) return true;
    const bool passes = op.has(kElementwise) || op.has(kLayout) || op.has(kChannelwise) ||
                        op.has(kPooling) || op.has(kContraction) || op.has(kConv) ||
                        op.has(kConvTranspose);
    if (passes && FeedsErrorAmplifier(program, n.result, amplified_outputs)) return true;
  }
  return false;
}

}  // namespace drtriton::codegen

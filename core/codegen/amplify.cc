// Error-amplifier paths through a program (see amplify.h).
#include "codegen/amplify.h"

#include <algorithm>

#include "catalog/catalog.h"

namespace drtriton::codegen {
namespace {

// Operators that carry an input's rounding into their result without magnifying it.
bool PassesOn(const OpInfo& op) {
  return op.has(kElementwise) || op.has(kLayout) || op.has(kChannelwise) || op.has(kPooling);
}

bool PassesRounding(const OpInfo& op) {
  return PassesOn(op) || op.has(kContraction) || op.has(kConv) || op.has(kConvTranspose);
}

// Marks, in `reaching` (seeded with the outputs that count as reaching), every value that a
// `sink` operator reads, or that a `passes` operator reads where its result reaches one.  One
// pass over the nodes in reverse: program order is topological.
template <typename Sink, typename Passes>
void MarkReaching(const Program& program, std::vector<bool>& reaching, Sink sink, Passes passes) {
  const auto& nodes = program.nodes();
  for (auto n = nodes.rbegin(); n != nodes.rend(); ++n) {
    const OpInfo& op = GetOp(n->op);
    if (!sink(op) && !(passes(op) && reaching[n->result.index])) continue;
    for (ValueId t : n->tensors)
      if (t.valid()) reaching[t.index] = true;
  }
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
  MarkReaching(
      program, amplified, [](const OpInfo& op) { return op.has(kAmplifiesError); },
      PassesRounding);
  return amplified;
}

std::vector<bool> RoundingSensitiveValues(const Program& program) {
  std::vector<bool> sensitive(program.values().size(), false);
  MarkReaching(
      program, sensitive,
      [](const OpInfo& op) {
        return op.has(kAmplifiesError) || op.has(kNormalization) || op.has(kAddsUpError) ||
               op.has(kIndexResult) || op.has(kBoolResult);
      },
      PassesOn);
  return sensitive;
}

}  // namespace drtriton::codegen

// One constraint model per catalog ShapeRule: the structural choices an operator needs
// (which inputs, ranks, broadcast pattern, reduced dim, fixed strides) and the constraints
// its shape rule imposes (catalog/shape_rules.cc is the same rule, as inference).
// op_rules.cc holds the entry points and the dispatch; each rule family has its own
// op_rules_<family>.cc, sharing the steps in op_rules_context.h.
#pragma once

#include <vector>

#include "synth/dag.h"

namespace drtriton::synth {

// Ranks the operator's first input may have under `bounds` (empty: never applicable).
std::vector<int> PrimaryRanks(const OpInfo& op, const SynthBounds& bounds);

// Cheap structural test, before any constraint is posted.
Reject Precheck(const OpInfo& op, bool last, const Dag& dag, const SynthBounds& bounds);

}  // namespace drtriton::synth

// What the reassociating rewrites (reassociate.h) share: which steps a sum or mean may be
// moved through, and fresh value names.
#pragma once

#include <cstddef>
#include <string>

#include "ir/program.h"

namespace drtriton::codegen {

// One step between a product and a reduction over `dim` of its output: `n` maps its first
// operand as kScalesInput (or, for a mean, kShiftsInput) says, with every other operand
// constant along `dim` and the shape unchanged.
bool CommutesWith(const Program& p, const Node& n, bool mean, size_t dim);

// A name neither program has: `base`, else base2, base3, ...
std::string FreshName(const Program& a, const Program& b, const std::string& base);

}  // namespace drtriton::codegen

// What the reassociating rewrites (reassociate.h) share: which steps a sum or mean may be
// moved through, and fresh value names.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/program.h"

namespace drtriton::codegen {

// One step between a product and a reduction over `dim` of its output: `n` maps its first
// operand as kScalesInput (or, for a mean, kShiftsInput) says, with every other operand
// constant along `dim` and the shape unchanged.
bool CommutesWith(const Program& p, const Node& n, bool mean, size_t dim);

// The dim `n` reduces where it is a sum, mean, max or min over a dim of size 1 (the identity,
// or a squeeze without keepdim).
std::optional<size_t> IdentityReductionDim(const Program& p, const Node& n);

// A name neither program has: `base`, else base2, base3, ...
std::string FreshName(const Program& a, const Program& b, const std::string& base);

// A node's stand-in in the program being rebuilt: given the node, its index and its tensors
// (already the new program's values), the value that replaces its result (added to `out`),
// nullopt to copy the node as it is, or an invalid id where the rewrite fails.
using NodeRewrite = std::function<std::optional<ValueId>(
    size_t index, const Node& node, std::vector<ValueId>& tensors, Program& out)>;

// `program` copied node by node through `rewrite`: the same inputs, and the outputs' stand-ins
// as outputs; nullopt where a rewrite or a copy fails.
std::optional<Program> Rebuild(const Program& program, const NodeRewrite& rewrite);

}  // namespace drtriton::codegen

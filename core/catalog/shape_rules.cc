// Shape inference, FLOPs and bytes per shape rule.  The synthesizer posts the same rules
// as constraints (synth/), so a change here is a change there too.
#include <algorithm>
#include <string>

#include "catalog/catalog.h"

namespace drtriton {
namespace {

std::string ShapeText(const Shape& s) {
  std::string t = "(";
  for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + (s.size() == 1 ? ",)" : ")");
}

Result<Shape> BroadcastShapes(const OpInfo& op, const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes) {
    const size_t offset = rank - s.size();
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& o = out[offset + k];
      if (s[k] == o || s[k] == 1) continue;
      if (o != 1) {
        return MakeError(op.name + ": shapes " + ShapeText(shapes[0]) + " and " +
                         ShapeText(s) + " do not broadcast");
      }
      o = s[k];
    }
  }
  return out;
}

Result<int64_t> NormalizeDim(const OpInfo& op, int64_t dim, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (dim < -r || dim >= r) {
    return MakeError(op.name + ": dim " + std::to_string(dim) + " out of range for rank " +
                     std::to_string(rank));
  }
  return dim < 0 ? dim + r : dim;
}

}  // namespace

Result<Shape> InferShape(const OpInfo& op, const OpArgs& args) {
  std::vector<Shape> shapes;
  for (const auto& t : args.tensors)
    if (t) shapes.push_back(*t);
  switch (op.rule) {
    case ShapeRule::kCreate: return args.attrs.at(0).ints;
    case ShapeRule::kBroadcast: return BroadcastShapes(op, shapes);
    case ShapeRule::kReduce: {
      const Shape& in = shapes.at(0);
      auto dim = NormalizeDim(op, args.attrs.at(0).i, in.size());
      if (!dim) return dim.error();
      Shape out = in;
      if (args.attrs.at(1).b) {
        out[static_cast<size_t>(dim.value())] = 1;
      } else {
        out.erase(out.begin() + dim.value());
      }
      return out;
    }
    default: break;
  }
  return MakeError(op.name + ": shape rule not implemented");
}

double CountFlops(const OpInfo& op, const OpArgs& args, const Shape& out) {
  if (op.has(kReduction) || op.has(kScan) || op.has(kNormalization))
    return op.flops_per_element * static_cast<double>(NumElements(*args.tensors.at(0)));
  return op.flops_per_element * static_cast<double>(NumElements(out));
}

double CountBytes(const OpInfo& /*op*/, const OpArgs& args, const Shape& out, int elem_bytes) {
  double elems = static_cast<double>(NumElements(out));
  for (const auto& t : args.tensors)
    if (t) elems += static_cast<double>(NumElements(*t));
  return elems * elem_bytes;
}

std::string_view ShapeRuleName(ShapeRule rule) {
  switch (rule) {
    case ShapeRule::kCreate: return "create";
    case ShapeRule::kBroadcast: return "broadcast";
    case ShapeRule::kReduce: return "reduce";
    case ShapeRule::kReduceAll: return "reduce_all";
    case ShapeRule::kSameAsInput: return "same_as_input";
    case ShapeRule::kMatmul: return "matmul";
    case ShapeRule::kBmm: return "bmm";
    case ShapeRule::kLinear: return "linear";
    case ShapeRule::kTranspose: return "transpose";
    case ShapeRule::kConv: return "conv";
    case ShapeRule::kConvTranspose: return "conv_transpose";
    case ShapeRule::kPool: return "pool";
    case ShapeRule::kAdaptivePool: return "adaptive_pool";
  }
  return "unknown";
}

std::string_view ShapeRuleConstraints(ShapeRule rule) {
  switch (rule) {
    case ShapeRule::kBroadcast:
      return "inputs right-aligned; each dim equal or 1; output dim = max";
    case ShapeRule::kReduce:
      return "dim in [-rank, rank); output drops dim, or keeps it as 1 with keepdim";
    default: return "";
  }
}

std::vector<std::string> TraitNames(uint32_t traits) {
  static const std::pair<Trait, const char*> kNames[] = {
      {kElementwise, "elementwise"}, {kUnary, "unary"},
      {kBinary, "binary"},           {kActivation, "activation"},
      {kReduction, "reduction"},     {kScan, "scan"},
      {kContraction, "contraction"}, {kNormalization, "normalization"},
      {kPooling, "pooling"},         {kConv, "conv"},
      {kConvTranspose, "conv_transpose"}, {kLayout, "layout"},
      {kIndexResult, "index_result"}, {kPositiveInput, "positive_input"},
      {kCreateTrait, "create"},
  };
  std::vector<std::string> names;
  for (const auto& [t, n] : kNames)
    if (traits & t) names.emplace_back(n);
  return names;
}

}  // namespace drtriton

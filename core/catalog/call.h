// Private to catalog/: one operator application's arguments, looked up by parameter name,
// so that shape rules read `call.Int("groups", 1)` whatever the parameter order.
// Valid after CheckCall() has accepted the arguments (counts, types, dims).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"

namespace drtriton::catalog_internal {

std::string ShapeText(const Shape& shape);
// Dims in [1, 2^30] and at most 1e15 elements: beyond, int64 arithmetic could overflow.
bool SizeIsSane(const Shape& shape);

class Call {
 public:
  Call(const OpInfo& op, const OpArgs& args) : op_(op), args_(args) {}

  const OpInfo& op() const { return op_; }
  const OpArgs& args() const { return args_; }
  // The first tensor argument (CheckCall guarantees it is present for compute ops).
  const Shape& input() const;
  // The tensor of the named parameter, or nullptr when it is None or not a parameter.
  const Shape* tensor(std::string_view name) const;
  // The named attribute, or nullptr when the operator has no such attribute.
  const AttrValue* attr(std::string_view name) const;

  bool Bool(std::string_view name, bool fallback) const;
  int64_t Int(std::string_view name, int64_t fallback) const;
  // A per-spatial-dim attribute as spatial_dims ints; `fallback` when absent or None.
  std::vector<int64_t> PerDim(std::string_view name, int64_t fallback) const;

  // "conv2d: <message> [input (1, 3, 8, 8), weight (4, 2, 3, 3)]".
  Error Fail(const std::string& message) const;

 private:
  const OpInfo& op_;
  const OpArgs& args_;
};

// Counts, presence, dims >= 1, rank bounds, attribute types, dims and strict choices.
std::optional<Error> CheckCall(const Call& call);

// Shape rules of conv and pool (shape_rules_spatial.cc).
Result<Shape> InferConv(const Call& call);
Result<Shape> InferConvTranspose(const Call& call);
Result<Shape> InferPool(const Call& call);
Result<Shape> InferAdaptivePool(const Call& call);
// Shape rules of the layout operators (shape_rules_layout.cc).
Result<Shape> InferReshape(const Call& call);
Result<Shape> InferPermute(const Call& call);
Result<Shape> InferNarrow(const Call& call);
Result<Shape> InferSelect(const Call& call);
Result<Shape> InferPad(const Call& call);
Result<Shape> InferExpand(const Call& call);
// flip: dims distinct and in range (flip uses the same-as-input rule).
std::optional<Error> CheckFlipDims(const Call& call);
// Sum over output positions of the adaptive window volume, per (sample, channel).
double AdaptiveWindowVolume(const Shape& input, const Shape& out, int spatial_dims);

}  // namespace drtriton::catalog_internal

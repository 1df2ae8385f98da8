// Argument access by name and the checks every shape rule relies on.
#include "catalog/call.h"

#include <string>

namespace drtriton::catalog_internal {
namespace {

// Dims and attribute ints beyond these bounds cannot come from a real program and would
// overflow the int64 arithmetic of the rules (products of two stay below 2^60; the
// synthesizer's dims stay below 2^15).
constexpr int64_t kMaxDim = int64_t{1} << 30;
constexpr double kMaxElements = 1e15;
constexpr int64_t kMaxAttrInt = int64_t{1} << 30;
constexpr size_t kMaxRank = 8;

std::string TypeName(const AttrSpec& spec) {
  switch (spec.type) {
    case AttrType::kNone:
      return "None";
    case AttrType::kBool:
      return "a bool";
    case AttrType::kInt:
      return spec.int_or_list ? "an int or a list of ints" : "an int";
    case AttrType::kFloat:
      return "a float";
    case AttrType::kIntList:
      return "a list of ints";
    case AttrType::kString:
      return "a string";
  }
  return "?";
}

std::optional<Error> CheckTensor(const Call& call, const Param& param, const Shape& shape) {
  if (shape.size() > kMaxRank)
    return call.Fail("tensor '" + param.name + "' has rank " + std::to_string(shape.size()) +
                     " > " + std::to_string(kMaxRank));
  double elements = 1;
  for (int64_t d : shape) {
    if (d < 1 || d > kMaxDim)
      return call.Fail("tensor '" + param.name + "' has a dim of size " + std::to_string(d) +
                       " (sizes must be in [1, 2^30])");
    elements *= static_cast<double>(d);
  }
  if (elements > kMaxElements) return call.Fail("tensor '" + param.name + "' is too large");
  return std::nullopt;
}

std::optional<Error> CheckTensors(const Call& call) {
  const OpInfo& op = call.op();
  const auto& tensors = call.args().tensors;
  if (tensors.size() != static_cast<size_t>(op.max_arity()))
    return call.Fail("expects " + std::to_string(op.max_arity()) + " tensor arguments, got " +
                     std::to_string(tensors.size()));
  const std::vector<int> params = op.tensor_param_indices();
  for (size_t k = 0; k < params.size(); ++k) {
    const Param& p = op.params[static_cast<size_t>(params[k])];
    if (!tensors[k]) {
      if (p.kind == ParamKind::kTensor) return call.Fail("missing tensor '" + p.name + "'");
      continue;
    }
    if (auto err = CheckTensor(call, p, *tensors[k])) return err;
  }
  if (op.kind == OpKind::kCreate || tensors.empty()) return std::nullopt;
  const auto rank = static_cast<int>(tensors[0]->size());
  if (rank < op.min_rank || rank > op.max_rank)
    return call.Fail("input rank " + std::to_string(rank) + " outside [" +
                     std::to_string(op.min_rank) + ", " + std::to_string(op.max_rank) + "]");
  return std::nullopt;
}

std::optional<Error> CheckIntsBounded(const Call& call, const Param& p, const AttrValue& v) {
  std::vector<int64_t> ints = v.type == AttrType::kInt ? std::vector<int64_t>{v.i} : v.ints;
  for (int64_t x : ints)
    if (x > kMaxAttrInt || x < -kMaxAttrInt)
      return call.Fail("attribute '" + p.name + "' = " + std::to_string(x) + " out of range");
  return std::nullopt;
}

std::optional<Error> CheckAttr(const Call& call, const Param& p, const AttrValue& v) {
  const AttrSpec& spec = p.attr;
  if (v.is_none() && !spec.nullable) return call.Fail("missing attribute '" + p.name + "'");
  if (!spec.Accepts(v))
    return call.Fail("attribute '" + p.name + "' expects " + TypeName(spec) + ", got " +
                     v.ToPython());
  if (auto err = CheckIntsBounded(call, p, v)) return err;
  const auto n = static_cast<size_t>(call.op().spatial_dims);
  if (spec.int_or_list && v.type == AttrType::kIntList && n > 0 && v.ints.size() != 1 &&
      v.ints.size() != n)
    return call.Fail("attribute '" + p.name + "' = " + v.ToPython() + " needs 1 or " +
                     std::to_string(n) + " values");
  if (spec.domain == AttrDomain::kDim && !v.is_none()) {
    const auto rank = static_cast<int>(call.args().tensors.empty() || !call.args().tensors[0]
                                           ? 0
                                           : call.args().tensors[0]->size());
    if (!spec.InDomain(v, rank))
      return call.Fail("dim " + v.ToPython() + " out of range for rank " + std::to_string(rank));
  }
  if (spec.strict && !spec.InDomain(v, 0)) {
    std::string allowed;
    for (const auto& c : spec.choices) allowed += (allowed.empty() ? "" : ", ") + c.ToPython();
    return call.Fail("attribute '" + p.name + "' = " + v.ToPython() + " not one of {" + allowed +
                     "}");
  }
  return std::nullopt;
}

// Relations between attributes that PyTorch checks (clamp needs a bound, hardtanh's
// bounds are ordered).
std::optional<Error> CheckAttrRelations(const Call& call) {
  const AttrValue* lo = call.attr("min");
  const AttrValue* hi = call.attr("max");
  if (lo && hi && lo->is_none() && hi->is_none())
    return call.Fail("at least one of min and max must not be None");
  const AttrValue* min_val = call.attr("min_val");
  const AttrValue* max_val = call.attr("max_val");
  if (min_val && max_val && min_val->AsFloat() > max_val->AsFloat())
    return call.Fail("min_val " + min_val->ToPython() + " > max_val " + max_val->ToPython());
  return std::nullopt;
}

}  // namespace

std::string ShapeText(const Shape& s) {
  std::string t = "(";
  for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + (s.size() == 1 ? ",)" : ")");
}

bool SizeIsSane(const Shape& shape) {
  double elements = 1;
  for (int64_t d : shape) {
    if (d < 1 || d > kMaxDim) return false;
    elements *= static_cast<double>(d);
  }
  return shape.size() <= kMaxRank && elements <= kMaxElements;
}

const Shape& Call::input() const { return *args_.tensors.at(0); }

const Shape* Call::tensor(std::string_view name) const {
  const std::vector<int> params = op_.tensor_param_indices();
  for (size_t k = 0; k < params.size() && k < args_.tensors.size(); ++k) {
    if (op_.params[static_cast<size_t>(params[k])].name != name) continue;
    return args_.tensors[k] ? &*args_.tensors[k] : nullptr;
  }
  return nullptr;
}

const AttrValue* Call::attr(std::string_view name) const {
  const int k = op_.attr_index(name);
  if (k < 0 || static_cast<size_t>(k) >= args_.attrs.size()) return nullptr;
  return &args_.attrs[static_cast<size_t>(k)];
}

bool Call::Bool(std::string_view name, bool fallback) const {
  const AttrValue* v = attr(name);
  return v && v->type == AttrType::kBool ? v->b : fallback;
}

int64_t Call::Int(std::string_view name, int64_t fallback) const {
  const AttrValue* v = attr(name);
  return v && v->type == AttrType::kInt ? v->i : fallback;
}

std::vector<int64_t> Call::PerDim(std::string_view name, int64_t fallback) const {
  const auto n = static_cast<size_t>(op_.spatial_dims);
  const AttrValue* v = attr(name);
  if (!v || v->is_none()) return std::vector<int64_t>(n, fallback);
  return v->AsInts(n);
}

Error Call::Fail(const std::string& message) const {
  std::string shapes;
  const std::vector<int> params = op_.tensor_param_indices();
  for (size_t k = 0; k < params.size() && k < args_.tensors.size(); ++k) {
    if (!args_.tensors[k]) continue;
    shapes += (shapes.empty() ? "" : ", ") + op_.params[static_cast<size_t>(params[k])].name + " " +
              ShapeText(*args_.tensors[k]);
  }
  return MakeError(op_.name + ": " + message + (shapes.empty() ? "" : " [" + shapes + "]"));
}

std::optional<Error> CheckCall(const Call& call) {
  if (auto err = CheckTensors(call)) return err;
  const OpInfo& op = call.op();
  const auto& attrs = call.args().attrs;
  if (attrs.size() != static_cast<size_t>(op.num_attrs()))
    return call.Fail("expects " + std::to_string(op.num_attrs()) + " attributes, got " +
                     std::to_string(attrs.size()));
  const std::vector<int> params = op.attr_param_indices();
  for (size_t k = 0; k < params.size(); ++k) {
    if (auto err = CheckAttr(call, op.params[static_cast<size_t>(params[k])], attrs[k])) return err;
  }
  return CheckAttrRelations(call);
}

}  // namespace drtriton::catalog_internal

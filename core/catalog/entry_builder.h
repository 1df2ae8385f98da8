// Private to catalog/: a small DSL so that one catalog entry reads as a few lines of data.
//
//   out.push_back(Entry("relu", "torch.relu", "torch.relu")
//                     .Alias("F.relu").Params({Tensor("input")}).Rule(ShapeRule::kBroadcast)
//                     .Traits(kElementwise | kUnary).Flops(1).Doc("max(x, 0)")
//                     .Example({{2, 3}}));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "catalog/catalog.h"

namespace drtriton::catalog_internal {

// --- Parameters. ------------------------------------------------------------------------

inline Param Tensor(std::string name, AuxShape aux = AuxShape::kFree) {
  Param p;
  p.name = std::move(name);
  p.aux = aux;
  return p;
}
inline Param PositiveTensor(std::string name, AuxShape aux = AuxShape::kFree) {
  Param p = Tensor(std::move(name), aux);
  p.positive = true;
  return p;
}
inline Param BoolTensor(std::string name) {
  Param p = Tensor(std::move(name));
  p.dtype = "bool";
  return p;
}
// int64 indices into dim `dim` of tensor input `of` (nll_loss's class targets: dim 1 of the
// first; an embedding's rows: dim 0 of the second, its weight).
inline Param IndexTensor(std::string name, int dim, int of = 0) {
  Param p = Tensor(std::move(name));
  p.dtype = "int64";
  p.index_dim = dim;
  p.index_of = of;
  return p;
}
inline Param OptionalTensor(std::string name, AuxShape aux = AuxShape::kFree) {
  Param p = Tensor(std::move(name), aux);
  p.kind = ParamKind::kOptionalTensor;
  return p;
}
inline Param PositiveOptionalTensor(std::string name, AuxShape aux = AuxShape::kFree) {
  Param p = OptionalTensor(std::move(name), aux);
  p.positive = true;
  return p;
}
inline Param Attr(std::string name, AttrSpec spec) {
  Param p;
  p.name = std::move(name);
  p.kind = ParamKind::kAttr;
  p.attr = std::move(spec);
  return p;
}
inline Param KeywordAttr(std::string name, AttrSpec spec) {
  Param p = Attr(std::move(name), std::move(spec));
  p.keyword_only = true;
  return p;
}

// --- Attribute specs. -------------------------------------------------------------------

inline AttrSpec DimAttr() {
  AttrSpec s;
  s.type = AttrType::kInt;
  s.domain = AttrDomain::kDim;
  return s;
}
inline AttrSpec BoolAttr(bool def) {
  AttrSpec s;
  s.type = AttrType::kBool;
  s.domain = AttrDomain::kChoices;
  s.default_value = AttrValue::Bool(def);
  s.choices = {AttrValue::Bool(false), AttrValue::Bool(true)};
  return s;
}
// A bool PyTorch accepts both ways but the IR supports one way only (training=False).
inline AttrSpec FixedBoolAttr(bool value) {
  AttrSpec s = BoolAttr(value);
  s.choices = {AttrValue::Bool(value)};
  s.strict = true;
  return s;
}
inline AttrSpec FloatChoices(std::vector<double> values, std::optional<double> def) {
  AttrSpec s;
  s.type = AttrType::kFloat;
  s.domain = AttrDomain::kChoices;
  if (def) s.default_value = AttrValue::Float(*def);
  for (double v : values) s.choices.push_back(AttrValue::Float(v));
  return s;
}
// A float that may also be None (clamp's min and max); None is one of the choices.
inline AttrSpec NullableFloatChoices(std::vector<double> values) {
  AttrSpec s = FloatChoices(std::move(values), std::nullopt);
  s.choices.insert(s.choices.begin(), AttrValue::None());
  s.nullable = true;
  return s;
}
inline AttrSpec StringChoices(std::vector<std::string> values, std::string def) {
  AttrSpec s;
  s.type = AttrType::kString;
  s.domain = AttrDomain::kChoices;
  s.default_value = AttrValue::String(std::move(def));
  for (auto& v : values) s.choices.push_back(AttrValue::String(std::move(v)));
  s.strict = true;  // PyTorch rejects any other string
  return s;
}
inline AttrSpec IntRange(int64_t lo, int64_t hi, std::optional<int64_t> def) {
  AttrSpec s;
  s.type = AttrType::kInt;
  s.domain = AttrDomain::kIntRange;
  s.min = lo;
  s.max = hi;
  if (def) s.default_value = AttrValue::Int(*def);
  return s;
}
inline AttrSpec IntChoices(std::vector<int64_t> values, std::optional<int64_t> def) {
  AttrSpec s;
  s.type = AttrType::kInt;
  s.domain = AttrDomain::kChoices;
  if (def) s.default_value = AttrValue::Int(*def);
  for (int64_t v : values) s.choices.push_back(AttrValue::Int(v));
  return s;
}
// Per-spatial-dim arguments of conv and pool: an int or a list of spatial_dims ints.
inline AttrSpec PerDim(AttrSpec s) {
  s.int_or_list = true;
  return s;
}
inline AttrSpec IntListAttr() {
  AttrSpec s;
  s.type = AttrType::kIntList;
  s.domain = AttrDomain::kFree;
  return s;
}

// --- The entry. -------------------------------------------------------------------------

class Entry {
 public:
  Entry(std::string name, std::string torch, std::string spelling) {
    op_.name = std::move(name);
    op_.torch = std::move(torch);
    op_.spelling = std::move(spelling);
  }
  Entry& Create() {
    op_.kind = OpKind::kCreate;
    return *this;
  }
  Entry& Alias(std::vector<std::string> aliases) {
    for (auto& a : aliases) op_.aliases.push_back(std::move(a));
    return *this;
  }
  Entry& Params(std::vector<Param> params) {
    op_.params = std::move(params);
    return *this;
  }
  Entry& Rule(ShapeRule rule, int spatial_dims = 0) {
    op_.rule = rule;
    op_.spatial_dims = spatial_dims;
    return *this;
  }
  Entry& Rank(int lo, int hi) {
    op_.min_rank = lo;
    op_.max_rank = hi;
    return *this;
  }
  Entry& Traits(uint32_t traits) {
    op_.traits = traits;
    return *this;
  }
  Entry& Flops(double per_element) {
    op_.flops_per_element = per_element;
    return *this;
  }
  Entry& Doc(std::string doc) {
    op_.doc = std::move(doc);
    return *this;
  }
  // The Triton spelling of an elementwise operator (catalog/lowering.h).
  Entry& Lower(ElementwiseLowering lowering) {
    op_.lowering = lowering;
    return *this;
  }
  Entry& Row(RowKind row) {
    op_.row = row;
    return *this;
  }
  Entry& Keeps(Triangle triangle) {
    op_.triangle = triangle;
    return *this;
  }
  Entry& Example(std::vector<Shape> inputs, std::vector<AttrValue> attrs = {}) {
    op_.example = OpExample{std::move(inputs), std::move(attrs)};
    return *this;
  }
  operator OpInfo() const& { return op_; }  // NOLINT: an Entry is written where an OpInfo goes
  operator OpInfo() && { return std::move(op_); }  // NOLINT

 private:
  OpInfo op_;
};

// Literals for examples.
inline AttrValue I(int64_t v) { return AttrValue::Int(v); }
inline AttrValue F(double v) { return AttrValue::Float(v); }
inline AttrValue B(bool v) { return AttrValue::Bool(v); }
inline AttrValue S(std::string v) { return AttrValue::String(std::move(v)); }
inline AttrValue L(std::vector<int64_t> v) { return AttrValue::IntList(std::move(v)); }
inline AttrValue None() { return AttrValue::None(); }

// Families, one function per catalog file.
void AddCreateOps(std::vector<OpInfo>& out);
void AddElementwiseOps(std::vector<OpInfo>& out);
void AddReductionOps(std::vector<OpInfo>& out);
void AddLinalgOps(std::vector<OpInfo>& out);
void AddNormalizationOps(std::vector<OpInfo>& out);
void AddConvPoolOps(std::vector<OpInfo>& out);
void AddLayoutOps(std::vector<OpInfo>& out);

}  // namespace drtriton::catalog_internal

// Binds the operator catalog as plain dicts: the CLI prints them as JSON and the Python
// tests walk them, so plain data beats wrapped C++ objects here.
#include <string>

#include <nanobind/stl/string.h>

#include "bindings.h"
#include "catalog/catalog.h"
#include "convert.h"

namespace nb = nanobind;

namespace drtriton {
namespace {

const char* ParamKindName(ParamKind kind) {
  switch (kind) {
    case ParamKind::kTensor: return "tensor";
    case ParamKind::kOptionalTensor: return "optional_tensor";
    case ParamKind::kAttr: return "attr";
  }
  return "attr";
}

const char* AttrTypeName(AttrType type) {
  switch (type) {
    case AttrType::kNone: return "none";
    case AttrType::kBool: return "bool";
    case AttrType::kInt: return "int";
    case AttrType::kFloat: return "float";
    case AttrType::kIntList: return "int_list";
    case AttrType::kString: return "str";
  }
  return "none";
}

const char* DomainName(AttrDomain domain) {
  switch (domain) {
    case AttrDomain::kChoices: return "choices";
    case AttrDomain::kIntRange: return "range";
    case AttrDomain::kDim: return "dim";
    case AttrDomain::kFree: return "free";
  }
  return "free";
}

const char* AuxShapeName(AuxShape aux) {
  switch (aux) {
    case AuxShape::kFree: return "free";
    case AuxShape::kChannels: return "channels";
    case AuxShape::kNormalized: return "normalized";
  }
  return "free";
}

nb::dict ParamToDict(const Param& p) {
  nb::dict d;
  d["name"] = p.name;
  d["kind"] = ParamKindName(p.kind);
  if (p.kind != ParamKind::kAttr) {
    d["required"] = p.kind == ParamKind::kTensor;
    d["positive"] = p.positive;
    d["boolean"] = p.dtype == "bool";
    d["dtype"] = p.dtype;
    d["index_dim"] = p.index_dim;
    d["index_of"] = p.index_of;
    d["aux"] = AuxShapeName(p.aux);
    return d;
  }
  const AttrSpec& a = p.attr;
  d["type"] = AttrTypeName(a.type);
  d["domain"] = DomainName(a.domain);
  d["default"] = AttrToPython(a.default_value);
  nb::list choices;
  for (const auto& c : a.choices) choices.append(AttrToPython(c));
  d["choices"] = choices;
  if (a.domain == AttrDomain::kIntRange) {
    d["min"] = a.min;
    d["max"] = a.max;
  }
  d["nullable"] = a.nullable;
  // An attribute without a default must be given: a None default on a non-nullable attribute.
  d["required"] = a.default_value.is_none() && !a.nullable;
  d["strict"] = a.strict;
  d["int_or_list"] = a.int_or_list;
  d["keyword_only"] = p.keyword_only;
  return d;
}

nb::dict ExampleToDict(const OpExample& example) {
  nb::list inputs, attrs;
  for (const auto& s : example.inputs) inputs.append(ShapeToPython(s));
  for (const auto& a : example.attrs) attrs.append(AttrToPython(a));
  nb::dict d;
  d["inputs"] = inputs;
  d["attrs"] = attrs;
  return d;
}

nb::dict OpToDict(const OpInfo& op) {
  nb::dict d;
  d["name"] = op.name;
  d["kind"] = op.kind == OpKind::kCompute ? "compute" : "create";
  d["arity"] = op.arity();
  d["max_arity"] = op.max_arity();
  d["torch"] = op.torch;
  d["spelling"] = op.spelling;
  nb::list aliases;
  for (const auto& a : op.aliases) aliases.append(a);
  d["aliases"] = aliases;
  nb::list params;
  for (const auto& p : op.params) params.append(ParamToDict(p));
  d["params"] = params;
  d["rule"] = std::string(ShapeRuleName(op.rule));
  d["rule_constraints"] = std::string(ShapeRuleConstraints(op.rule));
  d["spatial_dims"] = op.spatial_dims;
  d["min_rank"] = op.min_rank;
  d["max_rank"] = op.max_rank;
  nb::list traits;
  for (const auto& t : TraitNames(op.traits)) traits.append(t);
  d["traits"] = traits;
  d["flops_per_element"] = op.flops_per_element;
  d["doc"] = op.doc;
  d["example"] = ExampleToDict(op.example);
  return d;
}

}  // namespace

nb::object AttrToPython(const AttrValue& value) {
  switch (value.type) {
    case AttrType::kNone: return nb::none();
    case AttrType::kBool: return nb::bool_(value.b);
    case AttrType::kInt: return nb::int_(value.i);
    case AttrType::kFloat: return nb::float_(value.f);
    case AttrType::kString: return nb::str(value.s.c_str());
    case AttrType::kIntList: return ShapeToPython(value.ints);
  }
  return nb::none();
}

nb::list ShapeToPython(const Shape& shape) {
  nb::list out;
  for (int64_t d : shape) out.append(d);
  return out;
}

void BindCatalog(nb::module_& m) {
  m.def(
      "ops",
      [] {
        nb::list out;
        for (const auto& op : Catalog()) out.append(OpToDict(op));
        return out;
      },
      "The operator catalog: one dict per operator.");
}

}  // namespace drtriton

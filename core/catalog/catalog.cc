// The operator table.  Each entry reads: name, kind, PyTorch callable and spelling,
// parameters in PyTorch's positional order, shape rule, rank bounds, traits, FLOPs factor.
#include "catalog/catalog.h"

#include <unordered_map>
#include <utility>

namespace drtriton {
namespace {

// --- Small builders so that one entry reads as one line of data. ---------------------

Param Tensor(std::string name) { return Param{std::move(name), ParamKind::kTensor, {}, false}; }
Param PositiveTensor(std::string name) {
  return Param{std::move(name), ParamKind::kTensor, {}, true};
}
Param OptionalTensor(std::string name) {
  return Param{std::move(name), ParamKind::kOptionalTensor, {}, false};
}
Param Attr(std::string name, AttrSpec spec) {
  return Param{std::move(name), ParamKind::kAttr, std::move(spec), false};
}
AttrSpec DimAttr(AttrValue def = AttrValue::None()) {
  AttrSpec s; s.type = AttrType::kInt; s.domain = AttrDomain::kDim; s.default_value = def;
  return s;
}
AttrSpec BoolAttr(bool def) {
  AttrSpec s; s.type = AttrType::kBool; s.domain = AttrDomain::kChoices;
  s.default_value = AttrValue::Bool(def);
  s.choices = {AttrValue::Bool(false), AttrValue::Bool(true)};
  return s;
}

OpInfo Unary(std::string name, std::string torch, std::string spelling, uint32_t extra_traits,
             double flops, std::string doc) {
  OpInfo op;
  op.name = std::move(name);
  op.torch = std::move(torch);
  op.spelling = std::move(spelling);
  op.params = {Tensor("input")};
  op.rule = ShapeRule::kBroadcast;
  op.min_rank = 1;
  op.max_rank = 5;
  op.traits = kElementwise | kUnary | extra_traits;
  op.flops_per_element = flops;
  op.doc = std::move(doc);
  return op;
}

OpInfo Binary(std::string name, std::string torch, std::string spelling, double flops,
              std::string doc) {
  OpInfo op = Unary(std::move(name), std::move(torch), std::move(spelling), 0, flops,
                    std::move(doc));
  op.params = {Tensor("input"), Tensor("other")};
  op.traits = kElementwise | kBinary;
  return op;
}

OpInfo Create(std::string name, std::string torch, std::string spelling, std::string doc) {
  OpInfo op;
  op.name = std::move(name);
  op.kind = OpKind::kCreate;
  op.torch = std::move(torch);
  op.spelling = std::move(spelling);
  AttrSpec size; size.type = AttrType::kIntList; size.domain = AttrDomain::kFree;
  op.params = {Attr("size", size)};
  op.rule = ShapeRule::kCreate;
  op.traits = kCreateTrait;
  op.flops_per_element = 0;
  op.doc = std::move(doc);
  return op;
}

std::vector<OpInfo> BuildCatalog() {
  std::vector<OpInfo> ops;
  // Create operators: program inputs in get_inputs().
  ops.push_back(Create("randn", "torch.randn", "torch.randn", "standard normal tensor"));
  ops.push_back(Create("rand", "torch.rand", "torch.rand",
                       "uniform [0, 1) tensor; used where an input must be positive"));
  // Elementwise.
  ops.push_back(Binary("add", "torch.add", "torch.add", 1, "input + other, broadcast"));
  ops.push_back(Unary("relu", "torch.relu", "torch.relu", kActivation, 1, "max(x, 0)"));
  {
    OpInfo op;
    op.name = "sum";
    op.torch = "torch.sum";
    op.spelling = "torch.sum";
    op.params = {Tensor("input"), Attr("dim", DimAttr()), Attr("keepdim", BoolAttr(false))};
    op.rule = ShapeRule::kReduce;
    op.min_rank = 1;
    op.max_rank = 5;
    op.traits = kReduction;
    op.doc = "sum over one dimension";
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace

const std::vector<OpInfo>& Catalog() {
  static const std::vector<OpInfo> kCatalog = BuildCatalog();
  return kCatalog;
}

const OpInfo& GetOp(OpId id) { return Catalog().at(static_cast<size_t>(id)); }

OpId FindOp(std::string_view name_or_spelling) {
  static const std::unordered_map<std::string, OpId> kIndex = [] {
    std::unordered_map<std::string, OpId> index;
    const auto& ops = Catalog();
    for (size_t k = 0; k < ops.size(); ++k) {
      const auto id = static_cast<OpId>(k);
      const OpInfo& op = ops[k];
      index.emplace(op.name, id);
      index.emplace(op.torch, id);
      index.emplace(op.spelling, id);
      for (const auto& alias : op.aliases) index.emplace(alias, id);
    }
    return index;
  }();
  auto it = kIndex.find(std::string(name_or_spelling));
  return it == kIndex.end() ? kInvalidOp : it->second;
}

int OpInfo::arity() const {
  int n = 0;
  for (const auto& p : params) n += p.kind == ParamKind::kTensor;
  return n;
}

int OpInfo::max_arity() const {
  int n = 0;
  for (const auto& p : params) n += p.kind != ParamKind::kAttr;
  return n;
}

int OpInfo::num_attrs() const {
  int n = 0;
  for (const auto& p : params) n += p.kind == ParamKind::kAttr;
  return n;
}

std::vector<int> OpInfo::tensor_param_indices() const {
  std::vector<int> out;
  for (size_t k = 0; k < params.size(); ++k)
    if (params[k].kind != ParamKind::kAttr) out.push_back(static_cast<int>(k));
  return out;
}

std::vector<int> OpInfo::attr_param_indices() const {
  std::vector<int> out;
  for (size_t k = 0; k < params.size(); ++k)
    if (params[k].kind == ParamKind::kAttr) out.push_back(static_cast<int>(k));
  return out;
}

int OpInfo::attr_index(std::string_view attr_name) const {
  int k = 0;
  for (const auto& p : params) {
    if (p.kind != ParamKind::kAttr) continue;
    if (p.name == attr_name) return k;
    ++k;
  }
  return -1;
}

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace drtriton

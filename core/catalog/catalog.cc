// The operator table.  Each entry reads: name, kind, PyTorch callable and spelling,
// parameters in PyTorch's positional order, shape rule, rank bounds, traits, FLOPs factor.
// The entries live in one file per family (ops_*.cc, built with entry_builder.h).
//
// Adding an operator: one Entry with a small example in its family file; its FLOPs factor
// in docs/flops.md (and the table of tests/test_catalog_torch.py, which runs the example
// and random variations of it under torch).  A new shape rule also needs its InferShape
// case, its ShapeRuleConstraints text and the synthesizer's constraint model.
#include "catalog/catalog.h"

#include <string>
#include <unordered_map>
#include <utility>

#include "catalog/entry_builder.h"

namespace drtriton {
namespace catalog_internal {

// Create operators make the program inputs in get_inputs(): torch.randn(2, 3).
void AddCreateOps(std::vector<OpInfo>& out) {
  const std::pair<const char*, const char*> kCreates[] = {
      {"randn", "standard normal tensor"},
      {"rand", "uniform [0, 1) tensor; used where an input must be positive"},
  };
  for (const auto& [name, doc] : kCreates) {
    const std::string torch = std::string("torch.") + name;
    out.push_back(Entry(name, torch, torch)
                      .Create()
                      .Params({Attr("size", IntListAttr())})
                      .Rule(ShapeRule::kCreate)
                      .Rank(0, 8)
                      .Traits(kCreateTrait)
                      .Flops(0)
                      .Doc(doc)
                      .Example({}, {L({2, 3})}));
  }
  // Class indices (nll_loss's target): torch.randint(low, high, size), int64.  Programs draw
  // them from 0; the frontend makes them only where they index (Param::index_dim).
  out.push_back(Entry("randint", "torch.randint", "torch.randint")
                    .Create()
                    .Params({Attr("low", IntRange(0, 0, 0)), Attr("high", IntRange(1, 1 << 30, {})),
                             Attr("size", IntListAttr())})
                    .Rule(ShapeRule::kCreate)
                    .Rank(0, 8)
                    .Traits(kCreateTrait | kIndexResult)
                    .Flops(0)
                    .Doc("int64 tensor uniform in [low, high); the class targets of nll_loss")
                    .Example({}, {I(0), I(4), L({2})}));
}

}  // namespace catalog_internal

namespace {

std::vector<OpInfo> BuildCatalog() {
  using namespace catalog_internal;  // NOLINT: the family functions
  std::vector<OpInfo> ops;
  AddCreateOps(ops);
  AddElementwiseOps(ops);
  AddReductionOps(ops);
  AddLinalgOps(ops);
  AddNormalizationOps(ops);
  AddConvPoolOps(ops);
  AddLayoutOps(ops);
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

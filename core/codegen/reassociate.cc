#include "codegen/reassociate.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "catalog/catalog.h"
#include "codegen/fusion.h"
#include "codegen/kernel.h"
#include "codegen/reassociate_steps.h"

namespace drtriton::codegen {
namespace {

// Whether `other` (right-aligned against a value of `rank` dims) is constant along `dim`.
bool ConstantAlong(const Shape& other, size_t rank, size_t dim) {
  if (other.size() > rank) return false;
  const size_t lead = rank - other.size();
  return dim < lead || other[dim - lead] == 1;
}

}  // namespace

bool CommutesWith(const Program& p, const Node& n, bool mean, size_t dim) {
  const OpInfo& op = GetOp(n.op);
  if (!op.has(kScalesInput) && !(mean && op.has(kShiftsInput))) return false;
  if (n.tensors.empty() || !n.tensors[0].valid()) return false;
  const ValueId from = n.tensors[0];
  const Shape& shape = p.value(from).shape;
  if (p.value(n.result).shape != shape) return false;
  for (size_t i = 1; i < n.tensors.size(); ++i) {
    const ValueId t = n.tensors[i];
    if (!t.valid()) continue;
    if (t == from || !ConstantAlong(p.value(t).shape, shape.size(), dim)) return false;
  }
  return true;
}

std::string FreshName(const Program& a, const Program& b, const std::string& base) {
  std::string name = base;
  for (int i = 2; a.FindValue(name).valid() || b.FindValue(name).valid(); ++i)
    name = base + std::to_string(i);
  return name;
}

std::optional<size_t> IdentityReductionDim(const Program& p, const Node& n) {
  const std::string& name = GetOp(n.op).name;
  if (name != "sum" && name != "mean" && name != "amax" && name != "amin") return std::nullopt;
  if (n.attrs.empty() || n.attrs[0].type != AttrType::kInt) return std::nullopt;
  const Shape& in = p.value(n.tensors[0]).shape;
  const int dim = NormDim(n.attrs[0].i, in.size());
  if (dim < 0 || dim >= static_cast<int>(in.size()) || in[static_cast<size_t>(dim)] != 1)
    return std::nullopt;
  return static_cast<size_t>(dim);
}

std::optional<Program> Rebuild(const Program& program, const NodeRewrite& rewrite) {
  Program out;
  std::vector<ValueId> local(program.values().size());
  for (ValueId in : program.inputs()) {
    const Value& v = program.value(in);
    auto id = out.AddInputLike(v.name, v);
    if (!id) return std::nullopt;
    local[static_cast<size_t>(in.index)] = id.value();
  }
  for (size_t i = 0; i < program.nodes().size(); ++i) {
    const Node& n = program.nodes()[i];
    std::vector<ValueId> tensors;
    for (ValueId t : n.tensors)
      tensors.push_back(t.valid() ? local[static_cast<size_t>(t.index)] : ValueId{});
    std::optional<ValueId> result = rewrite(i, n, tensors, out);
    if (!result) {
      auto id = out.AddNode(n.op, std::move(tensors), n.attrs, program.value(n.result).name);
      result = id ? id.value() : ValueId{};
    }
    if (!result->valid()) return std::nullopt;
    local[static_cast<size_t>(n.result.index)] = *result;
  }
  std::vector<ValueId> outputs;
  for (ValueId o : program.outputs()) outputs.push_back(local[static_cast<size_t>(o.index)]);
  out.SetOutputs(std::move(outputs));
  return out;
}

namespace {

// The contraction whose output columns the reduction `r` sums (or averages) through steps
// that commute with it, or an invalid id.
NodeId ProductBefore(const Program& p, const Node& r,
                     const std::vector<std::vector<NodeId>>& users) {
  const OpInfo& op = GetOp(r.op);
  const bool mean = op.name == "mean";
  if ((op.name != "sum" && !mean) || r.attrs.empty() || r.attrs[0].type != AttrType::kInt)
    return {};
  ValueId v = r.tensors[0];
  const size_t rank = p.value(v).shape.size();
  const int64_t dim = NormDim(r.attrs[0].i, rank);
  // The product's columns: its output's last dim, at least two of them.
  if (dim != static_cast<int64_t>(rank) - 1 || p.value(v).shape.back() < 2) return {};
  while (true) {
    const Value& value = p.value(v);
    if (!value.producer.valid() || users[static_cast<size_t>(v.index)].size() != 1 ||
        IsOutput(p, v))
      return {};
    const Node& n = p.node(value.producer);
    if (GetOp(n.op).has(kContraction)) return value.producer;
    if (!CommutesWith(p, n, mean, static_cast<size_t>(dim))) return {};
    v = n.tensors[0];
  }
}

}  // namespace

std::optional<Program> ReduceBeforeProducts(const Program& program) {
  const std::vector<std::vector<NodeId>> users = Consumers(program);
  // Product node -> the reduction (sum or mean) to take over its columns first.
  std::unordered_map<int32_t, OpId> reduce_first;
  for (const Node& n : program.nodes()) {
    const NodeId product = ProductBefore(program, n, users);
    if (product.valid()) reduce_first.emplace(product.index, n.op);
  }
  if (reduce_first.empty()) return std::nullopt;

  return Rebuild(program, [&](size_t i, const Node& n, std::vector<ValueId>& tensors,
                              Program& out) -> std::optional<ValueId> {
    const auto first = reduce_first.find(static_cast<int32_t>(i));
    if (first == reduce_first.end()) return std::nullopt;
    const std::string& name = program.value(n.result).name;
    auto reduce = [&](ValueId x, int64_t dim, const std::string& base) -> ValueId {
      auto id = out.AddNode(first->second, {x}, {AttrValue::Int(dim), AttrValue::Bool(true)},
                            FreshName(program, out, base));
      return id ? id.value() : ValueId{};
    };
    // linear's weight is (N, K) and its bias (N,); matmul's and bmm's other is (..., K, N).
    const bool linear = GetOp(n.op).name == "linear";
    tensors[1] = reduce(tensors[1], linear ? 0 : -1, name + "_cols");
    if (!tensors[1].valid()) return ValueId{};
    if (linear && tensors.size() > 2 && tensors[2].valid()) {
      tensors[2] = reduce(tensors[2], 0, name + "_bias");
      if (!tensors[2].valid()) return ValueId{};
    }
    auto id = out.AddNode(n.op, std::move(tensors), n.attrs, name);
    return id ? id.value() : ValueId{};
  });
}

namespace {

// The program with every identity reduction a reshape to its result's shape: a layout step
// that kernels inline, where a reduction is a kernel of its own (L2 44's four global means,
// all over one position after the rewrites, were four launches).
std::optional<Program> IdentityReductionsReshaped(const Program& program) {
  return Rebuild(program, [&](size_t, const Node& n, std::vector<ValueId>& tensors,
                              Program& out) -> std::optional<ValueId> {
    if (!IdentityReductionDim(program, n)) return std::nullopt;
    const Value& result = program.value(n.result);
    auto id = out.AddNode(FindOp("reshape"), {tensors[0]}, {AttrValue::IntList(result.shape)},
                          result.name);
    return id ? id.value() : ValueId{};
  });
}

}  // namespace

std::optional<Program> Reassociate(const Program& program, bool generic_shapes) {
  std::optional<Program> rewritten = ReduceBeforeProducts(program);
  if (generic_shapes) return rewritten;
  // One spatial dim of each convolution a round: 3 rounds do all of a 3-D one.
  bool convolutions = false;
  for (int round = 0; round < 3; ++round) {
    std::optional<Program> next = ReduceBeforeConvolutions(rewritten ? *rewritten : program);
    if (!next) break;
    rewritten = std::move(next);
    convolutions = true;
  }
  if (!rewritten) return std::nullopt;
  // A convolution whose every spatial dim was taken apart (sm_90 build of L2 44's: one
  // program, 255 registers, 415 spilled, 288 two-byte loads a step).
  if (convolutions) {
    std::optional<Program> products = PointwiseConvolutionsAsProducts(*rewritten);
    if (products) rewritten = std::move(products);
  }
  return IdentityReductionsReshaped(*rewritten);
}

}  // namespace drtriton::codegen

#include "codegen/reassociate.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "catalog/catalog.h"
#include "codegen/fusion.h"
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
  const int64_t dim = r.attrs[0].i < 0 ? r.attrs[0].i + static_cast<int64_t>(rank) : r.attrs[0].i;
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

  Program out;
  std::vector<ValueId> local(program.values().size());
  for (ValueId in : program.inputs()) {
    const Value& v = program.value(in);
    auto id = out.AddInput(v.name, v.shape, v.create_op, v.range);
    if (!id) return std::nullopt;
    local[static_cast<size_t>(in.index)] = id.value();
  }
  auto reduce = [&](OpId op, ValueId x, int64_t dim, const std::string& base) -> ValueId {
    auto id = out.AddNode(op, {x}, {AttrValue::Int(dim), AttrValue::Bool(true)},
                          FreshName(program, out, base));
    return id ? id.value() : ValueId{};
  };
  for (size_t i = 0; i < program.nodes().size(); ++i) {
    const Node& n = program.nodes()[i];
    std::vector<ValueId> tensors;
    for (ValueId t : n.tensors)
      tensors.push_back(t.valid() ? local[static_cast<size_t>(t.index)] : ValueId{});
    const std::string& name = program.value(n.result).name;
    const auto first = reduce_first.find(static_cast<int32_t>(i));
    if (first != reduce_first.end()) {
      // linear's weight is (N, K) and its bias (N,); matmul's and bmm's other is (..., K, N).
      const bool linear = GetOp(n.op).name == "linear";
      tensors[1] = reduce(first->second, tensors[1], linear ? 0 : -1, name + "_cols");
      if (!tensors[1].valid()) return std::nullopt;
      if (linear && tensors.size() > 2 && tensors[2].valid()) {
        tensors[2] = reduce(first->second, tensors[2], 0, name + "_bias");
        if (!tensors[2].valid()) return std::nullopt;
      }
    }
    auto id = out.AddNode(n.op, std::move(tensors), n.attrs, name);
    if (!id) return std::nullopt;
    local[static_cast<size_t>(n.result.index)] = id.value();
  }
  std::vector<ValueId> outputs;
  for (ValueId o : program.outputs()) outputs.push_back(local[static_cast<size_t>(o.index)]);
  out.SetOutputs(std::move(outputs));
  return out;
}

namespace {

// Whether `n` is a sum, mean, max or min over a dim of size 1: the identity, or a squeeze.
bool IsIdentityReduction(const Program& p, const Node& n) {
  const std::string& name = GetOp(n.op).name;
  if (name != "sum" && name != "mean" && name != "amax" && name != "amin") return false;
  if (n.attrs.empty() || n.attrs[0].type != AttrType::kInt) return false;
  const Shape& in = p.value(n.tensors[0]).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  const int64_t dim = n.attrs[0].i < 0 ? n.attrs[0].i + rank : n.attrs[0].i;
  return dim >= 0 && dim < rank && in[static_cast<size_t>(dim)] == 1;
}

// The program with every identity reduction a reshape to its result's shape: a layout step
// that kernels inline, where a reduction is a kernel of its own (L2 44's four global means,
// all over one position after the rewrites, were four launches).
Program IdentityReductionsReshaped(const Program& program) {
  Program out;
  std::vector<ValueId> local(program.values().size());
  for (ValueId in : program.inputs()) {
    const Value& v = program.value(in);
    local[static_cast<size_t>(in.index)] =
        out.AddInput(v.name, v.shape, v.create_op, v.range).value();
  }
  const OpId reshape = FindOp("reshape");
  for (const Node& n : program.nodes()) {
    std::vector<ValueId> tensors;
    for (ValueId t : n.tensors)
      tensors.push_back(t.valid() ? local[static_cast<size_t>(t.index)] : ValueId{});
    const Value& result = program.value(n.result);
    const bool identity = IsIdentityReduction(program, n);
    local[static_cast<size_t>(n.result.index)] =
        out.AddNode(identity ? reshape : n.op, std::move(tensors),
                    identity ? std::vector<AttrValue>{AttrValue::IntList(result.shape)} : n.attrs,
                    result.name)
            .value();
  }
  std::vector<ValueId> outputs;
  for (ValueId o : program.outputs()) outputs.push_back(local[static_cast<size_t>(o.index)]);
  out.SetOutputs(std::move(outputs));
  return out;
}

}  // namespace

std::optional<Program> Reassociate(const Program& program, bool generic_shapes) {
  std::optional<Program> rewritten = ReduceBeforeProducts(program);
  if (generic_shapes) return rewritten;
  // One spatial dim of each convolution a round: 3 rounds do all of a 3-D one.
  for (int round = 0; round < 3; ++round) {
    std::optional<Program> next = ReduceBeforeConvolutions(rewritten ? *rewritten : program);
    if (!next) break;
    rewritten = std::move(next);
  }
  if (rewritten) return IdentityReductionsReshaped(*rewritten);
  return rewritten;
}

}  // namespace drtriton::codegen

#include "codegen/reassociate.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "catalog/catalog.h"
#include "codegen/fusion.h"

namespace drtriton::codegen {
namespace {

// Whether `other` (right-aligned against a value of `rank` dims) is constant along `dim`.
bool ConstantAlong(const Shape& other, size_t rank, size_t dim) {
  if (other.size() > rank) return false;
  const size_t lead = rank - other.size();
  return dim < lead || other[dim - lead] == 1;
}

// One step between the product and the reduction: `n` maps its first operand, `from`, as
// kScalesInput (or, for a mean, kShiftsInput) says, with every other operand constant along
// `dim` and the shape unchanged.
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

// A name neither program has: `base`, else base2, base3, ...
std::string FreshName(const Program& a, const Program& b, const std::string& base) {
  std::string name = base;
  for (int i = 2; a.FindValue(name).valid() || b.FindValue(name).valid(); ++i)
    name = base + std::to_string(i);
  return name;
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

}  // namespace drtriton::codegen

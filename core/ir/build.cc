#include "ir/build.h"

#include <unordered_map>
#include <utility>
#include <vector>

namespace drtriton {

Result<Program> SingleOpProgram(OpId op_id) {
  if (op_id < 0 || static_cast<size_t>(op_id) >= Catalog().size()) {
    return MakeError("unknown operator id " + std::to_string(op_id));
  }
  const OpInfo& op = GetOp(op_id);
  if (op.kind != OpKind::kCompute) return MakeError(op.name + " is not a compute operator");
  const std::vector<int> tensor_params = op.tensor_param_indices();
  if (op.example.inputs.size() != tensor_params.size()) {
    return MakeError(op.name + ": the catalog example has " +
                     std::to_string(op.example.inputs.size()) + " input shapes for " +
                     std::to_string(tensor_params.size()) + " tensor parameters");
  }
  for (int k : tensor_params) {
    const Param& param = op.params[static_cast<size_t>(k)];
    if (param.dtype == "bool")  // inputs are float32 or int64 indices: a bool is a comparison's
      return MakeError(op.name + ": '" + param.name + "' is bool, which no program input is");
  }
  const OpId randn = FindOp("torch.randn");
  const OpId rand = FindOp("torch.rand");
  const OpId randint = FindOp("torch.randint");
  Program program;
  std::vector<ValueId> tensors;
  for (size_t k = 0; k < tensor_params.size(); ++k) {
    const Param& param = op.params[static_cast<size_t>(tensor_params[k])];
    const Shape& shape = op.example.inputs[k];
    if (shape.empty() && param.kind == ParamKind::kOptionalTensor) {
      tensors.emplace_back();  // None
      continue;
    }
    const bool positive = param.positive || op.has(kPositiveInput);
    const std::string name = "x" + std::to_string(program.inputs().size());
    // Indices (nll_loss's target, an embedding's input) cover the dim they index: [0, size).
    const auto index_dim = static_cast<size_t>(param.index_dim);
    const Shape& indexed = op.example.inputs[static_cast<size_t>(param.index_of)];
    auto id = param.index_dim >= 0 && index_dim < indexed.size()
                  ? program.AddInput(name, shape, randint, {0, indexed[index_dim]})
                  : program.AddInput(name, shape, positive ? rand : randn);
    if (!id) return MakeError(op.name + " example: " + id.error().message);
    tensors.push_back(id.value());
  }
  auto result = program.AddNode(op_id, std::move(tensors), op.example.attrs, "t0");
  if (!result) return MakeError(op.name + " example: " + result.error().message);
  program.SetOutputs({result.value()});
  return program;
}

Program CanonicallyNamed(const Program& program) {
  Program named;
  std::unordered_map<int32_t, ValueId> to;
  for (ValueId id : program.inputs()) {
    const Value& v = program.value(id);
    const std::string name = "x" + std::to_string(named.inputs().size());
    to.emplace(id.index, named.AddInputLike(name, v).value());
  }
  int next = 0;
  for (const Node& node : program.nodes()) {
    std::vector<ValueId> tensors;
    for (ValueId t : node.tensors) tensors.push_back(t.valid() ? to.at(t.index) : ValueId{});
    const std::string name = "t" + std::to_string(next++);
    to.emplace(node.result.index, named.AddNode(node.op, tensors, node.attrs, name).value());
  }
  std::vector<ValueId> outputs;
  for (ValueId id : program.outputs()) outputs.push_back(to.at(id.index));
  named.SetOutputs(outputs);
  return named;
}

std::string CanonicalKey(const Program& program) {
  // Values are numbered by role and order (inputs %0.., then node results), so the key
  // is the program with every name replaced by its number.
  std::unordered_map<int32_t, size_t> number;
  for (ValueId id : program.inputs()) number.emplace(id.index, number.size());
  for (const Node& node : program.nodes()) number.emplace(node.result.index, number.size());
  auto ref = [&](ValueId id) {
    auto it = number.find(id.index);
    return it == number.end() ? std::string("None") : "%" + std::to_string(it->second);
  };

  std::string key;
  for (ValueId id : program.inputs()) {
    const Value& v = program.value(id);
    key += ref(id) + "=" + GetOp(v.create_op).name + "(";
    if (v.dtype == "int64")  // randint's range is part of the task
      key += std::to_string(v.range.low) + ":" + std::to_string(v.range.high) + ";";
    if (v.dtype == "bool") key += "bool;";
    for (int64_t d : v.shape) key += std::to_string(d) + ",";
    key += ");";
  }
  for (const Node& node : program.nodes()) {
    key += ref(node.result) + "=" + GetOp(node.op).name + "(";
    for (ValueId t : node.tensors) key += ref(t) + ",";
    for (const AttrValue& a : node.attrs) key += a.ToPython() + ",";
    key += ");";
  }
  key += "return";
  for (ValueId id : program.outputs()) key += " " + ref(id);
  return key;
}

bool InSynthDomain(const Program& program) {
  for (size_t k = 0; k < program.nodes().size(); ++k) {
    const NodeId id{static_cast<int32_t>(k)};
    if (!InSynthDomain(GetOp(program.node(id).op), program.NodeArgs(id))) return false;
  }
  return true;
}

}  // namespace drtriton

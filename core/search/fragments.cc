#include "search/fragments.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "catalog/catalog.h"
#include "codegen/amplify.h"

namespace drtriton::search {
namespace {

// True when node `node` needs positive values in its tensor operand `k` (running_var, the
// input of log or sqrt): such an operand must come from torch.rand in the fragment task.
bool NeedsPositive(const Node& node, size_t k) {
  const OpInfo& op = GetOp(node.op);
  const std::vector<int> params = op.tensor_param_indices();
  const Param& param = op.params.at(static_cast<size_t>(params.at(k)));
  return param.positive || (k == 0 && op.has(kPositiveInput));
}

// Values read by nodes [start, end) that none of them defines, in first-use order, and
// whether some use needs positive values.
std::vector<std::pair<ValueId, bool>> ExternalInputs(const Program& program, int start, int end) {
  std::unordered_set<int32_t> defined;
  std::unordered_map<int32_t, size_t> position;
  std::vector<std::pair<ValueId, bool>> inputs;
  for (int i = start; i < end; ++i) {
    const Node& node = program.node(NodeId{i});
    for (size_t k = 0; k < node.tensors.size(); ++k) {
      const ValueId t = node.tensors[k];
      if (!t.valid() || defined.count(t.index)) continue;
      auto [it, fresh] = position.emplace(t.index, inputs.size());
      if (fresh) inputs.emplace_back(t, false);
      inputs[it->second].second = inputs[it->second].second || NeedsPositive(node, k);
    }
    defined.insert(node.result.index);
  }
  return inputs;
}

// Values defined in [start, end) that a later node reads or the program returns.
std::vector<ValueId> LiveOutputs(const Program& program, int start, int end) {
  std::unordered_set<int32_t> used_later;
  for (int i = end; i < program.level(); ++i)
    for (ValueId t : program.node(NodeId{i}).tensors)
      if (t.valid()) used_later.insert(t.index);
  for (ValueId id : program.outputs()) used_later.insert(id.index);
  std::vector<ValueId> outputs;
  for (int i = start; i < end; ++i) {
    const ValueId result = program.node(NodeId{i}).result;
    if (used_later.count(result.index)) outputs.push_back(result);
  }
  return outputs;
}

}  // namespace

Result<Fragment> MakeFragment(const Program& program, int start, int end) {
  return MakeFragment(program, start, end, codegen::AmplifiedValues(program));
}

Result<Fragment> MakeFragment(const Program& program, int start, int end,
                              const std::vector<bool>& amplified) {
  if (start < 0 || end > program.level() || start >= end)
    return MakeError("fragment [" + std::to_string(start) + ", " + std::to_string(end) +
                     ") is outside the program's " + std::to_string(program.level()) + " nodes");
  const OpId randn = FindOp("torch.randn");
  const OpId rand = FindOp("torch.rand");
  Fragment fragment;
  fragment.start = start;
  fragment.end = end;
  // Parent value index -> fragment value id.
  std::unordered_map<int32_t, ValueId> local;
  for (const auto& [id, positive] : ExternalInputs(program, start, end)) {
    const Value& value = program.value(id);
    // A program input keeps its create op (randint's indices their range, a mask its dtype);
    // a computed value becomes a float32 input, so computed indices or masks cannot cross a
    // fragment's edge.
    if (value.dtype != "float32" && value.producer.valid())
      return MakeError("fragment reads " + value.name + " of dtype " + value.dtype);
    auto input = value.producer.valid()
                     ? fragment.program.AddInput(value.name, value.shape, positive ? rand : randn)
                     : fragment.program.AddInputLike(value.name, value);
    if (!input) return input.error();
    local.emplace(id.index, input.value());
    fragment.inputs.push_back(value.name);
  }
  for (int i = start; i < end; ++i) {
    const Node& node = program.node(NodeId{i});
    std::vector<ValueId> tensors;
    for (ValueId t : node.tensors) tensors.push_back(t.valid() ? local.at(t.index) : ValueId{});
    auto result = fragment.program.AddNode(node.op, std::move(tensors), node.attrs,
                                           program.value(node.result).name);
    if (!result) return result.error();
    local.emplace(node.result.index, result.value());
  }
  std::vector<ValueId> outputs;
  for (ValueId id : LiveOutputs(program, start, end)) {
    outputs.push_back(local.at(id.index));
    fragment.outputs.push_back(program.value(id).name);
    if (amplified[id.index]) fragment.amplified.push_back(program.value(id).name);
  }
  if (outputs.empty()) return MakeError("fragment computes nothing that is used later");
  fragment.program.SetOutputs(std::move(outputs));
  return fragment;
}

std::vector<Fragment> EnumerateFragments(const Program& program, int max_ops,
                                         const std::vector<bool>& blocked) {
  auto is_blocked = [&](int i) {
    return static_cast<size_t>(i) < blocked.size() && blocked[static_cast<size_t>(i)];
  };
  std::vector<Fragment> fragments;
  const std::vector<bool> amplified = codegen::AmplifiedValues(program);
  const int n = program.level();
  for (int start = 0; start < n; ++start) {
    for (int end = start + 1; end <= n && end - start <= max_ops; ++end) {
      if (is_blocked(end - 1)) break;  // every longer fragment contains it too
      auto fragment = MakeFragment(program, start, end, amplified);
      if (fragment) fragments.push_back(std::move(fragment).value());
    }
  }
  bool any_blocked = false;
  int computing = 0;  // nodes that are not layout operators (fragments.h, kWholeProgramMaxOps)
  for (int i = 0; i < n; ++i) {
    any_blocked = any_blocked || is_blocked(i);
    computing += !GetOp(program.nodes()[static_cast<size_t>(i)].op).has(kLayout);
  }
  if (n > max_ops && computing <= kWholeProgramMaxOps && !any_blocked) {
    auto whole = MakeFragment(program, 0, n, amplified);
    if (whole) fragments.push_back(std::move(whole).value());
  }
  return fragments;
}

}  // namespace drtriton::search

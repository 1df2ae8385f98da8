// Program::Print: the functional task text of DESIGN.md.  The parser reads exactly this
// back, so any change here is a change of the dataset format.
#include <string>
#include <vector>

#include "ir/program.h"

namespace drtriton {
namespace {

// One printed argument and whether the call may leave it out (it equals the default).
struct PrintedArg {
  std::string text;
  bool is_default = false;
};

PrintedArg PrintTensorArg(const Program& program, const Param& param, ValueId id) {
  if (!program.Contains(id)) return {"None", param.kind == ParamKind::kOptionalTensor};
  return {program.value(id).name, false};
}

PrintedArg PrintAttrArg(const Param& param, const AttrValue& value) {
  const AttrValue& def = param.attr.default_value;
  // A required attribute has no default to fall back on, even if it is None.
  const bool has_default = !def.is_none() || param.attr.nullable;
  return {value.ToPython(), has_default && value == def};
}

std::string PrintCall(const Program& program, const Node& node) {
  const OpInfo& op = GetOp(node.op);
  std::vector<PrintedArg> positional;
  std::vector<std::string> keywords;
  size_t tensor_k = 0, attr_k = 0;
  for (const Param& param : op.params) {
    PrintedArg arg;
    if (param.kind == ParamKind::kAttr) {
      if (attr_k >= node.attrs.size()) break;
      arg = PrintAttrArg(param, node.attrs[attr_k++]);
    } else {
      if (tensor_k >= node.tensors.size()) break;
      arg = PrintTensorArg(program, param, node.tensors[tensor_k++]);
    }
    if (!param.keyword_only) {
      positional.push_back(std::move(arg));
    } else if (!arg.is_default) {
      keywords.push_back(param.name + "=" + arg.text);
    }
  }
  // Trailing defaults go; a default followed by a non-default stays (positions matter).
  while (!positional.empty() && positional.back().is_default) positional.pop_back();

  std::string text = op.spelling + "(";
  bool first = true;
  auto append = [&](const std::string& piece) {
    text += (first ? "" : ", ") + piece;
    first = false;
  };
  for (const PrintedArg& arg : positional) append(arg.text);
  for (const std::string& kw : keywords) append(kw);
  return text + ")";
}

std::string PrintCreate(const Value& input) {
  const OpInfo& op = GetOp(input.create_op);
  if (op.has(kIndexResult)) {  // torch.randint(low, high, (sizes,))
    std::string size;
    for (size_t k = 0; k < input.shape.size(); ++k)
      size += (k ? ", " : "") + std::to_string(input.shape[k]);
    return op.spelling + "(" + std::to_string(input.range.low) + ", " +
           std::to_string(input.range.high) + ", (" + size +
           (input.shape.size() == 1 ? ",)" : ")") +
           (input.dtype == "bool" ? ", dtype=torch.bool)" : ")");
  }
  std::string text = op.spelling + "(";
  for (size_t k = 0; k < input.shape.size(); ++k) {
    text += (k ? ", " : "") + std::to_string(input.shape[k]);
  }
  return text + ")";
}

std::string JoinNames(const Program& program, const std::vector<ValueId>& ids) {
  std::string text;
  for (size_t k = 0; k < ids.size(); ++k) {
    text += (k ? ", " : "");
    text += program.Contains(ids[k]) ? program.value(ids[k]).name : "None";
  }
  return text;
}

}  // namespace

std::string Program::Print() const {
  std::string text = "import torch\nimport torch.nn.functional as F\n\n";
  text += "def fused_operator(" + JoinNames(*this, inputs_) + "):\n";
  for (const Node& n : nodes_) {
    text += "    " + value(n.result).name + " = " + PrintCall(*this, n) + "\n";
  }
  // No outputs prints a bare return, which Parse rejects: such a program computes nothing.
  text += outputs_.empty() ? "    return\n" : "    return " + JoinNames(*this, outputs_) + "\n";
  text += "\ndef get_inputs():\n    return [";
  for (size_t k = 0; k < inputs_.size(); ++k) {
    text += (k ? ", " : "") + PrintCreate(value(inputs_[k]));
  }
  return text + "]\n";
}

}  // namespace drtriton

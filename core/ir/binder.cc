#include "ir/binder.h"

#include <utility>

namespace drtriton::ir_internal {
namespace {

bool IsRequired(const Param& param) {
  if (param.kind == ParamKind::kTensor) return true;
  if (param.kind == ParamKind::kOptionalTensor) return false;
  return param.attr.default_value.is_none() && !param.attr.nullable;
}

std::string ArgCountText(const OpInfo& op, const std::string& callee) {
  int required = 0;
  for (const Param& p : op.params) required += IsRequired(p);
  const int total = static_cast<int>(op.params.size());
  std::string text = callee + " expects ";
  text += required == total ? std::to_string(total)
                            : std::to_string(required) + " to " + std::to_string(total);
  return text + (total == 1 ? " argument" : " arguments");
}

std::string ParamList(const OpInfo& op) {
  std::string text;
  for (const Param& p : op.params) text += (text.empty() ? "" : ", ") + p.name;
  return text;
}

int ParamIndex(const OpInfo& op, const std::string& name) {
  for (size_t k = 0; k < op.params.size(); ++k)
    if (op.params[k].name == name) return static_cast<int>(k);
  return -1;
}

// With keyword-only parameters the count alone misleads ("expects 1 to 2, got 2"), so
// name the parameters that must be passed as name=value.
Error TooManyPositional(const OpInfo& op, const std::string& callee, size_t max_positional,
                        const std::vector<ArgExpr>& args, int line) {
  std::string keyword_only;
  for (const Param& p : op.params) {
    if (p.keyword_only) keyword_only += (keyword_only.empty() ? "" : ", ") + p.name;
  }
  if (keyword_only.empty()) {
    return MakeError(ArgCountText(op, callee) + ", got " + std::to_string(args.size()), line);
  }
  size_t positional = 0;
  for (const ArgExpr& a : args) positional += a.keyword.empty();
  return MakeError(callee + " takes " + std::to_string(max_positional) + " positional argument" +
                       (max_positional == 1 ? "" : "s") + ", got " + std::to_string(positional) +
                       " (" + keyword_only + " must be passed by keyword, as name=value)",
                   line);
}

// Python's rule: positional arguments fill the non-keyword-only parameters in order,
// keywords fill by name, and no parameter gets two values.
Result<std::vector<const ArgExpr*>> AssignSlots(const OpInfo& op, const std::string& callee,
                                                const std::vector<ArgExpr>& args, int line) {
  std::vector<const ArgExpr*> slots(op.params.size(), nullptr);
  std::vector<size_t> positional_params;
  for (size_t k = 0; k < op.params.size(); ++k)
    if (!op.params[k].keyword_only) positional_params.push_back(k);

  size_t next_positional = 0;
  bool seen_keyword = false;
  for (const ArgExpr& arg : args) {
    if (arg.keyword.empty()) {
      if (seen_keyword) {
        return MakeError(
            "syntax error: positional argument '" + arg.text + "' follows a keyword argument",
            line);
      }
      if (next_positional >= positional_params.size()) {
        return TooManyPositional(op, callee, positional_params.size(), args, line);
      }
      slots[positional_params[next_positional++]] = &arg;
      continue;
    }
    seen_keyword = true;
    const int k = ParamIndex(op, arg.keyword);
    if (k < 0) {
      return MakeError("unknown keyword '" + arg.keyword + "' for " + callee +
                           " (parameters: " + ParamList(op) + ")",
                       line);
    }
    if (slots[static_cast<size_t>(k)]) {
      return MakeError(callee + " got multiple values for argument '" + arg.keyword + "'", line);
    }
    slots[static_cast<size_t>(k)] = &arg;
  }
  for (size_t k = 0; k < slots.size(); ++k) {
    if (!slots[k] && IsRequired(op.params[k])) {
      return MakeError(ArgCountText(op, callee) + ", got " + std::to_string(args.size()) +
                           " (missing '" + op.params[k].name + "')",
                       line);
    }
  }
  return slots;
}

// torch.float16, nn.Module, ...: the format passes only value names and literals.
Error UndefinedName(const ArgExpr& arg, int line) {
  if (arg.name.find('.') != std::string::npos) {
    return MakeError(
        "unsupported argument '" + arg.name + "': arguments are value names or literals", line);
  }
  return MakeError("use of undefined name '" + arg.name + "'", line);
}

Result<ValueId> BindTensor(const Param& param, const ArgExpr* arg, const std::string& callee,
                           const Program& program, int line) {
  if (!arg) return ValueId{};
  if (!arg->is_name) {
    if (arg->literal.is_none() && param.kind == ParamKind::kOptionalTensor) return ValueId{};
    return MakeError(
        "argument '" + param.name + "' of " + callee + " must be a tensor name, got " + arg->text,
        line);
  }
  const ValueId id = program.FindValue(arg->name);
  if (!id.valid()) return UndefinedName(*arg, line);
  return id;
}

Result<AttrValue> BindAttr(const Param& param, const ArgExpr* arg, const std::string& callee,
                           const Program& program, int line) {
  if (!arg) return param.attr.default_value;
  if (arg->is_name) {
    if (!program.FindValue(arg->name).valid()) return UndefinedName(*arg, line);
    return MakeError("argument '" + param.name + "' of " + callee +
                         " must be a literal, got the tensor '" + arg->name + "'",
                     line);
  }
  return arg->literal;
}

}  // namespace

Result<BoundArgs> BindArgs(const OpInfo& op, const std::string& callee,
                           const std::vector<ArgExpr>& args, const Program& program, int line) {
  auto slots = AssignSlots(op, callee, args, line);
  if (!slots) return slots.error();
  BoundArgs bound;
  for (size_t k = 0; k < op.params.size(); ++k) {
    const Param& param = op.params[k];
    const ArgExpr* arg = slots.value()[k];
    if (param.kind == ParamKind::kAttr) {
      auto attr = BindAttr(param, arg, callee, program, line);
      if (!attr) return attr.error();
      bound.attrs.push_back(std::move(attr).value());
    } else {
      auto tensor = BindTensor(param, arg, callee, program, line);
      if (!tensor) return tensor.error();
      bound.tensors.push_back(tensor.value());
    }
  }
  return bound;
}

}  // namespace drtriton::ir_internal

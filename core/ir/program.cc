// Building a Program: every check that makes a program valid lives here, so that the
// parser, the synthesizer and the frontend cannot disagree about what a program may be.
#include "ir/program.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

namespace drtriton {
namespace {

// Largest tensor a program may mention: 2^40 elements (4 TiB of float32) is far beyond any
// real task, yet keeps every element count and byte count exact in int64 and double.
constexpr int64_t kMaxElements = int64_t{1} << 40;

std::string ShapeText(const Shape& shape) {
  std::string text = "(";
  for (size_t k = 0; k < shape.size(); ++k) text += (k ? ", " : "") + std::to_string(shape[k]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// Checks that every dim is >= 1 and the element count stays below kMaxElements, without
// ever overflowing (UBSan aborts on signed overflow, and shapes come from untrusted text).
std::optional<std::string> CheckShape(const Shape& shape) {
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 1) return "dimension " + std::to_string(d) + " is not positive";
    if (d > kMaxElements / elements) return "more than 2^40 elements";
    elements *= d;
  }
  return std::nullopt;
}

const char* TypeName(AttrType type) {
  switch (type) {
    case AttrType::kNone:
      return "None";
    case AttrType::kBool:
      return "bool";
    case AttrType::kInt:
      return "int";
    case AttrType::kFloat:
      return "float";
    case AttrType::kIntList:
      return "list of ints";
    case AttrType::kString:
      return "string";
  }
  return "?";
}

bool IsRequiredAttr(const AttrSpec& spec) { return spec.default_value.is_none() && !spec.nullable; }

// Python accepts an int where a float is expected; store it as the float it means so that
// equal programs compare and print equal.
AttrValue Normalize(const AttrSpec& spec, AttrValue value) {
  if (spec.type == AttrType::kFloat && value.type == AttrType::kInt) {
    return AttrValue::Float(static_cast<double>(value.i));
  }
  return value;
}

std::optional<std::string> CheckAttrType(const Param& param, const AttrValue& value) {
  const AttrSpec& spec = param.attr;
  if (spec.Accepts(value)) return std::nullopt;
  if (value.is_none() && IsRequiredAttr(spec)) {
    return "attribute '" + param.name + "' is required, got None";
  }
  const bool list_too = spec.int_or_list || spec.type == AttrType::kIntList;
  return "attribute '" + param.name + "' must be " + TypeName(spec.type) +
         (list_too && spec.type == AttrType::kInt ? " or list of ints" : "") +
         (list_too && spec.type == AttrType::kIntList ? " or int" : "") + ", got " +
         value.ToPython();
}

// Rank of the first tensor argument (0 when it is None): the one kDim attributes index.
size_t FirstRank(const OpArgs& args) {
  return args.tensors.empty() || !args.tensors[0] ? 0 : args.tensors[0]->size();
}

// The integers an attribute carries: one for kInt, each element for a list.
std::vector<int64_t> IntsOf(const AttrValue& value) {
  if (value.type == AttrType::kInt) return {value.i};
  if (value.type == AttrType::kIntList) return value.ints;
  return {};
}

// The catalog's contract (attr.h): the IR enforces dims and strict choices only, since
// ranges and loose choices are what the synthesizer samples and real models go beyond them
// (stride 4, negative_slope 0.05).  Two more checks keep shape rules from dividing by zero
// or indexing past a list: a range starting at 1 (groups, output_size) still rejects < 1,
// one starting at 0 (padding) rejects < 0; a per-dim list has spatial_dims entries (or one,
// where PyTorch repeats it).
std::optional<std::string> CheckAttrDomain(const OpInfo& op, const Param& param,
                                           const AttrValue& value, size_t first_rank) {
  const AttrSpec& spec = param.attr;
  if (value.is_none()) return std::nullopt;
  const std::string what = "attribute '" + param.name + "' = " + value.ToPython();
  if (spec.int_or_list && value.type == AttrType::kIntList && op.spatial_dims > 0) {
    const size_t n = value.ints.size();
    // PyTorch repeats a one-entry list for conv and pool arguments, but adaptive pooling's
    // output_size must list every spatial dim (checked against torch 2.13).
    const bool one_ok = op.rule != ShapeRule::kAdaptivePool;
    if (n != static_cast<size_t>(op.spatial_dims) && !(n == 1 && one_ok)) {
      return what + " needs " + std::to_string(op.spatial_dims) + " entries";
    }
  }
  switch (spec.domain) {
    case AttrDomain::kChoices: {
      if (!spec.strict || spec.InDomain(value, static_cast<int>(first_rank))) return std::nullopt;
      std::string allowed;
      for (const auto& c : spec.choices) allowed += (allowed.empty() ? "" : ", ") + c.ToPython();
      return what + " is not supported (allowed: " + allowed + ")";
    }
    case AttrDomain::kIntRange: {
      if (spec.min < 0) return std::nullopt;
      const int64_t floor = spec.min >= 1 ? 1 : 0;
      for (int64_t v : IntsOf(value)) {
        if (v < floor) return what + " must be at least " + std::to_string(floor);
      }
      return std::nullopt;
    }
    case AttrDomain::kDim: {
      const auto rank = static_cast<int64_t>(first_rank);
      for (int64_t v : IntsOf(value)) {
        if (v < -rank || v >= rank) {
          return what + " is not a dimension of a rank-" + std::to_string(rank) + " input";
        }
      }
      return std::nullopt;
    }
    case AttrDomain::kFree:
      return std::nullopt;
  }
  return std::nullopt;
}

// Index parameters (Param::index_dim) read by a program input: torch.randint must draw
// indices the dim holds ([low, high) inside [0, size)), or the program would read past it.
// Computed indices (an argmax) are the computation's business.
std::optional<std::string> CheckIndexRanges(const Program& program, const OpInfo& op,
                                            const std::vector<ValueId>& tensors,
                                            const OpArgs& args) {
  const std::vector<int> tensor_params = op.tensor_param_indices();
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Param& param = op.params[static_cast<size_t>(tensor_params[k])];
    const auto of = static_cast<size_t>(param.index_of);
    if (param.index_dim < 0 || !tensors[k].valid() || of >= args.tensors.size() ||
        !args.tensors[of])
      continue;
    const Value& v = program.value(tensors[k]);
    const Shape& indexed = *args.tensors[of];
    if (v.producer.valid() || static_cast<size_t>(param.index_dim) >= indexed.size()) continue;
    const int64_t size = indexed[static_cast<size_t>(param.index_dim)];
    if (v.range.high > size)
      return op.spelling + ": '" + v.name + "' draws indices up to " +
             std::to_string(v.range.high - 1) + ", but '" + param.name + "' indexes dim " +
             std::to_string(param.index_dim) + " of size " + std::to_string(size);
  }
  return std::nullopt;
}

// Tensors: required ones present, every handle ours, of the parameter's dtype, first input's rank
// within the operator's bounds.  Returns their shapes aligned to the tensor params.
Result<OpArgs> CheckTensors(const Program& program, const OpInfo& op,
                            const std::vector<ValueId>& tensors) {
  OpArgs args;
  const std::vector<int> tensor_params = op.tensor_param_indices();
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Param& param = op.params[static_cast<size_t>(tensor_params[k])];
    if (!tensors[k].valid()) {
      if (param.kind == ParamKind::kTensor) {
        return MakeError(op.spelling + ": tensor argument '" + param.name + "' is required");
      }
      args.tensors.emplace_back(std::nullopt);
      continue;
    }
    if (!program.Contains(tensors[k])) {
      return MakeError(op.spelling + ": argument '" + param.name +
                       "' is not a value of this program");
    }
    const Value& v = program.value(tensors[k]);
    // Each tensor parameter takes one dtype (Param::dtype): a bool tensor (a comparison's
    // result) is where's condition and nothing else, int64 indices nll_loss's target.
    if (v.dtype != param.dtype) {
      return MakeError(op.spelling + ": '" + v.name + "' holds " + v.dtype + ", but '" +
                       param.name + "' takes " + param.dtype);
    }
    args.tensors.emplace_back(v.shape);
  }
  if (auto bad = CheckIndexRanges(program, op, tensors, args)) return MakeError(*bad);
  const int rank = static_cast<int>(FirstRank(args));
  if (!args.tensors.empty() && args.tensors[0] && (rank < op.min_rank || rank > op.max_rank)) {
    return MakeError(op.spelling + ": input must have rank " + std::to_string(op.min_rank) +
                     " to " + std::to_string(op.max_rank) + ", got rank " + std::to_string(rank));
  }
  return args;
}

// Attributes: int -> float where a float is meant, then type, then domain.
std::optional<std::string> CheckAttrs(const OpInfo& op, size_t first_rank,
                                      std::vector<AttrValue>& attrs) {
  const std::vector<int> attr_params = op.attr_param_indices();
  for (size_t k = 0; k < attrs.size(); ++k) {
    const Param& param = op.params[static_cast<size_t>(attr_params[k])];
    attrs[k] = Normalize(param.attr, std::move(attrs[k]));
    if (auto bad = CheckAttrType(param, attrs[k])) return op.spelling + ": " + *bad;
    if (auto bad = CheckAttrDomain(op, param, attrs[k], first_rank)) {
      return op.spelling + ": " + *bad;
    }
  }
  return std::nullopt;
}

// The catalog's shape rule, plus a bound on the result.  The rule indexes its arguments,
// so a catalog entry that trusts more than the checks above must not take the process
// down with it: an exception becomes an error.
Result<Shape> SafeInferShape(const OpInfo& op, const OpArgs& args) {
  Result<Shape> shape = MakeError("");
  try {
    shape = InferShape(op, args);
  } catch (const std::exception& e) {
    return MakeError(op.name + ": invalid arguments (" + e.what() + ")");
  }
  if (!shape) return shape;
  if (auto bad = CheckShape(shape.value())) {
    return MakeError(op.spelling + ": result shape " + ShapeText(shape.value()) +
                     " is invalid: " + *bad);
  }
  return shape;
}

}  // namespace

bool IsValidValueName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  auto is_alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!is_alpha(name[0])) return false;
  for (char c : name)
    if (!is_alpha(c) && !(c >= '0' && c <= '9')) return false;
  static const std::unordered_set<std::string_view> kReserved = {
      // Python keywords and constants.
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
      "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if",
      "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
      "while", "with", "yield",
      // Names the task and candidate files rely on.
      "torch", "F", "nn", "triton", "tl", "fused_operator", "get_inputs", "triton_fused_operator"};
  return kReserved.count(name) == 0;
}

ValueId Program::FindValue(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? ValueId{} : it->second;
}

Result<ValueId> Program::AddValue(Value value) {
  if (!IsValidValueName(value.name)) {
    return MakeError("'" + value.name +
                     "' cannot name a value (use a Python identifier such "
                     "as x0 or t0 that is not a keyword or torch, F, nn)");
  }
  if (by_name_.count(value.name)) return MakeError("redefinition of '" + value.name + "'");
  ValueId id{static_cast<int32_t>(values_.size())};
  by_name_.emplace(value.name, id);
  values_.push_back(std::move(value));
  return id;
}

Result<ValueId> Program::AddInput(std::string name, Shape shape, OpId create_op,
                                  IndexRange range, bool boolean) {
  if (create_op < 0 || static_cast<size_t>(create_op) >= Catalog().size() ||
      GetOp(create_op).kind != OpKind::kCreate) {
    return MakeError("input '" + name +
                     "' must be made by a create operator (torch.randn, "
                     "torch.rand, torch.randint)");
  }
  const bool indices = GetOp(create_op).has(kIndexResult);  // torch.randint: int64
  if (indices && (range.low < 0 || range.high <= range.low))
    return MakeError("input '" + name + "' draws from [" + std::to_string(range.low) + ", " +
                     std::to_string(range.high) + "): randint needs 0 <= low < high");
  if (!indices && !(range == IndexRange{}))
    return MakeError("input '" + name + "': only torch.randint draws from a range");
  if (boolean && !(indices && range == IndexRange{0, 2}))
    return MakeError("input '" + name + "': a bool input is torch.randint(0, 2, size, "
                     "dtype=torch.bool)");
  if (shape.empty()) return MakeError("input '" + name + "' needs at least one dimension");
  if (auto bad = CheckShape(shape)) {
    return MakeError("input '" + name + "' has shape " + ShapeText(shape) + ": " + *bad);
  }
  Value value;
  value.name = std::move(name);
  value.shape = std::move(shape);
  value.create_op = create_op;
  value.range = range;
  if (indices) value.dtype = boolean ? "bool" : "int64";
  auto id = AddValue(std::move(value));
  if (id) inputs_.push_back(id.value());
  return id;
}

Result<ValueId> Program::AddInputLike(std::string name, const Value& input) {
  return AddInput(std::move(name), input.shape, input.create_op, input.range,
                  input.dtype == "bool");
}

Result<ValueId> Program::AddNode(OpId op_id, std::vector<ValueId> tensors,
                                 std::vector<AttrValue> attrs, std::string result_name, int line) {
  auto fail = [line](std::string message) { return MakeError(std::move(message), line); };
  if (op_id < 0 || static_cast<size_t>(op_id) >= Catalog().size()) {
    return fail("unknown operator id " + std::to_string(op_id));
  }
  const OpInfo& op = GetOp(op_id);
  if (op.kind != OpKind::kCompute) {
    return fail(op.spelling + " creates inputs; use it only in get_inputs()");
  }
  if (static_cast<int>(tensors.size()) != op.max_arity() ||
      static_cast<int>(attrs.size()) != op.num_attrs()) {
    return fail(op.name + " takes " + std::to_string(op.max_arity()) + " tensor and " +
                std::to_string(op.num_attrs()) + " attribute arguments, got " +
                std::to_string(tensors.size()) + " and " + std::to_string(attrs.size()));
  }
  auto args = CheckTensors(*this, op, tensors);
  if (!args) return fail(args.error().message);
  if (auto bad = CheckAttrs(op, FirstRank(args.value()), attrs)) return fail(*bad);
  args.value().attrs = attrs;
  auto shape = SafeInferShape(op, args.value());
  if (!shape) return fail(shape.error().message);

  Value result;
  result.name = std::move(result_name);
  result.shape = std::move(shape).value();
  result.dtype = op.has(kIndexResult) ? "int64" : op.has(kBoolResult) ? "bool" : "float32";
  result.producer = NodeId{static_cast<int32_t>(nodes_.size())};
  auto id = AddValue(std::move(result));
  if (!id) return fail(id.error().message);

  Node node;
  node.op = op_id;
  node.tensors = std::move(tensors);
  node.attrs = std::move(attrs);
  node.result = id.value();
  node.line = line;
  nodes_.push_back(std::move(node));
  return id;
}

OpArgs Program::ArgsOf(const Node& node) const {
  OpArgs args;
  for (ValueId t : node.tensors) {
    if (t.valid()) {
      args.tensors.emplace_back(value(t).shape);
    } else {
      args.tensors.emplace_back(std::nullopt);
    }
  }
  args.attrs = node.attrs;
  return args;
}

std::vector<std::string> Program::op_names() const {
  std::vector<std::string> names;
  names.reserve(nodes_.size());
  for (const Node& n : nodes_) names.push_back(GetOp(n.op).name);
  return names;
}

double Program::flops() const {
  double total = 0;
  for (const Node& n : nodes_) total += CountFlops(GetOp(n.op), ArgsOf(n), value(n.result).shape);
  return total;
}

double Program::bytes() const {
  // A value that is both input and output, or returned twice, moves once.
  std::unordered_set<int32_t> seen;
  double total = 0;
  auto count = [&](ValueId id) {
    if (!Contains(id) || !seen.insert(id.index).second) return;
    const Value& v = value(id);
    const double elem_bytes = v.dtype == "int64" ? 8 : v.dtype == "bool" ? 1 : 4;
    total += elem_bytes * static_cast<double>(NumElements(v.shape));
  };
  for (ValueId id : inputs_) count(id);
  for (ValueId id : outputs_) count(id);
  return total;
}

double Program::unfused_bytes() const {
  double total = 0;
  for (const Node& n : nodes_) total += CountBytes(GetOp(n.op), ArgsOf(n), value(n.result).shape);
  return total;
}

}  // namespace drtriton

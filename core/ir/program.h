// The program IR: a DAG of values and operator applications, owned by one Program.
// Handles (ValueId, NodeId) are small indices into the owning program; there is no
// global state.  A Program prints to the functional task format of DESIGN.md and
// Parse() reads that format back (print(parse(print(p))) == print(p)).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "catalog/attr.h"
#include "catalog/catalog.h"
#include "util/result.h"

namespace drtriton {

struct ValueId {
  int32_t index = -1;
  bool valid() const { return index >= 0; }
  bool operator==(ValueId o) const { return index == o.index; }
  bool operator!=(ValueId o) const { return index != o.index; }
};

struct NodeId {
  int32_t index = -1;
  bool valid() const { return index >= 0; }
  bool operator==(NodeId o) const { return index == o.index; }
};

// The integers torch.randint draws: [low, high).
struct IndexRange {
  int64_t low = 0;
  int64_t high = 0;
  bool operator==(const IndexRange& o) const { return low == o.low && high == o.high; }
};

// A tensor: a program input (made by a create operator in get_inputs) or a node result.
struct Value {
  std::string name;
  Shape shape;
  std::string dtype = "float32";  // "int64" for argmax/argmin results and randint inputs
  NodeId producer;                // invalid for inputs
  OpId create_op = kInvalidOp;    // for inputs: torch.randn, torch.rand, torch.randint
  IndexRange range;               // torch.randint inputs: class indices (nll_loss's target)
};

// One operator application: `result = op(tensors..., attrs...)`.
struct Node {
  OpId op = kInvalidOp;
  std::vector<ValueId> tensors;  // one per tensor param of op; invalid = None
  std::vector<AttrValue> attrs;  // one per attribute param of op
  ValueId result;
  int line = 0;  // source line when parsed, 0 when built
};

class Program {
 public:
  // Adds a parameter of fused_operator, created in get_inputs() by `create_op`; an int64
  // one (torch.randint) draws from `range`, which must be non-empty and start at 0 or above.
  // `boolean`: a mask passed to forward, torch.randint(0, 2, size, dtype=torch.bool) (dtype
  // "bool"; operators read it where they read a comparison's result).
  Result<ValueId> AddInput(std::string name, Shape shape, OpId create_op, IndexRange range = {},
                           bool boolean = false);
  // A copy of another program's input `input` (its shape, create op, range and dtype) named
  // `name`.
  Result<ValueId> AddInputLike(std::string name, const Value& input);
  // Appends `result_name = op(...)`, checking arity, handles, attribute types, dims and
  // strict choices (loose choices and ranges are the synthesizer's; see attr.h) and the
  // catalog's shape rule.  An int where a float is meant is stored as that float.
  // `line` is only used in error messages.
  Result<ValueId> AddNode(OpId op, std::vector<ValueId> tensors, std::vector<AttrValue> attrs,
                          std::string result_name, int line = 0);
  // Unchecked: callers pass ids this program returned (Parse checks the names).
  void SetOutputs(std::vector<ValueId> outputs) { outputs_ = std::move(outputs); }

  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const Value& value(ValueId id) const { return values_.at(id.index); }
  // The value called `name`, or an invalid id.
  ValueId FindValue(std::string_view name) const;
  // True when `id` indexes a value of this program.
  bool Contains(ValueId id) const {
    return id.index >= 0 && static_cast<size_t>(id.index) < values_.size();
  }
  const Node& node(NodeId id) const { return nodes_.at(id.index); }

  // The shapes and attributes of a node's application, as the catalog functions take them.
  OpArgs NodeArgs(NodeId id) const { return ArgsOf(node(id)); }

  // Number of compute operators: the program's difficulty level.
  int level() const { return static_cast<int>(nodes_.size()); }
  // Catalog names of the compute operators, in program order.
  std::vector<std::string> op_names() const;
  // Sum of the per-operator FLOPs.
  double flops() const;
  // Bytes of the program's inputs plus outputs: the traffic of a fully fused kernel.
  double bytes() const;
  // Bytes read and written when every operator runs as its own kernel.
  double unfused_bytes() const;

  // The functional task text (imports, fused_operator, get_inputs).
  std::string Print() const;

 private:
  Result<ValueId> AddValue(Value value);
  OpArgs ArgsOf(const Node& node) const;

  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::unordered_map<std::string, ValueId> by_name_;  // names are unique within a program
};

// True for a name a program may give a value: a Python identifier that is not a keyword
// and does not shadow what the task and candidate files import (torch, F, triton, tl, ...).
bool IsValidValueName(std::string_view name);

// Parses the functional task format.  Errors name the line and never crash.
Result<Program> Parse(std::string_view text);

}  // namespace drtriton

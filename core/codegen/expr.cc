// The expression emitter (expr.h): loads of stored values, inline recomputation of
// elementwise, layout (an embedding's rows among them) and inference batch_norm nodes.
#include "codegen/expr.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "codegen/layout.h"

namespace drtriton::codegen {
namespace {

// A floating value is computed in float32 whatever its stored dtype (the bf16 and fp16 modes'
// inputs and outputs: wrapper.cc StoredDtype); Triton drops the conversion where it already
// is float32.
std::string ToFloat32(const std::string& dtype) {
  return dtype == "float32" ? ".to(tl.float32)" : "";
}

// A masked load's fill for `dtype`.
std::string LoadOther(const std::string& dtype) {
  return dtype == "int64" ? "0" : dtype == "bool" ? "False" : "0.0";
}

}  // namespace

std::string ExprEmitter::NewVar(const std::string& stem) {
  return stem + std::to_string(counter_++);
}

std::string ExprEmitter::EmitMasked(ValueId v, const std::vector<std::string>& coords,
                                    const std::string& mask) {
  std::string saved = std::exchange(mask_, mask);
  std::string result = Emit(v, coords);
  mask_ = std::move(saved);
  return result;
}

std::string ExprEmitter::Compute(ValueId v, const std::vector<std::string>& coords) {
  if (bound_.count(v.index) || !program_.value(v).producer.valid()) return Emit(v, coords);
  return EmitNode(program_.node(program_.value(v).producer), coords);
}

std::string ExprEmitter::Emit(ValueId v, const std::vector<std::string>& coords) {
  if (auto it = bound_.find(v.index); it != bound_.end()) return it->second;
  const std::string key = std::to_string(v.index) + "@" + Join(coords, ",") + "|" + mask_;
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  const Value& value = program_.value(v);
  assert(coords.size() == value.shape.size() && "one coordinate per dim");
  std::string var;
  if (materialized_[v.index] && scalar_loads_ && Product(value.shape) == 1) {
    // Its one element at index 0 of every dim, whatever the tile's coordinates there: a dim of
    // size 1 may still be indexed by a tile coordinate (a convolution's input channel, K
    // decomposed, is past 0 in masked lanes), and this load has no mask.
    var = NewVar("x");
    const std::vector<std::string> origin(coords.size(), "0");
    w_.Line(var + " = tl.load(" + params_.Address(v, origin, "") + ")" + ToFloat32(value.dtype));
  } else if (materialized_[v.index]) {
    var = NewVar("x");
    EmitLoad(var, v, coords);
  } else {
    var = EmitNode(program_.node(value.producer), coords);
  }
  memo_[key] = var;
  return var;
}

bool ExprEmitter::IsRowRead(const std::vector<std::string>& coords) const {
  if (row_coords_.empty()) return false;
  bool along = false;
  for (const std::string& c : coords) {
    if (std::find(row_coords_.begin(), row_coords_.end(), c) != row_coords_.end())
      along = true;
    else if (c != "0")
      return false;
  }
  return along;
}

void ExprEmitter::EmitLoad(const std::string& var, ValueId v,
                           const std::vector<std::string>& coords) {
  ++tile_loads_;
  const std::string& dtype = program_.value(v).dtype;
  const bool row = IsRowRead(coords);  // LoadRowsAlong: one row of the tile, strided address
  auto load = [&](const std::string& address) {
    return var + " = tl.load(" + address + ", mask=" + (row ? row_mask_ : mask_) +
           ", other=" + LoadOther(dtype) + ")" + ToFloat32(dtype);
  };
  const std::string flat =
      contiguous_flag_.empty() || row ? "" : params_.ContiguousAddress(v, coords);
  if (flat.empty()) {
    w_.Line(load(params_.Address(v, coords, row ? row_zero_ : zero_)));
    return;
  }
  w_.Open("if " + contiguous_flag_ + ":");
  w_.Line(load(flat));
  w_.Dedent();
  w_.Open("else:");
  w_.Line(load(params_.Address(v, coords, zero_)));
  w_.Dedent();
}

std::string ExprEmitter::EmitNode(const Node& node, const std::vector<std::string>& coords) {
  const OpInfo& op = GetOp(node.op);
  const Shape& out = program_.value(node.result).shape;
  if (op.rule == ShapeRule::kEmbedding) return EmitEmbedding(node, coords);
  if (op.has(kLayout)) return EmitLayout(node, coords);
  if (op.has(kChannelwise)) return EmitBatchNorm(node, coords);  // its one operator
  std::vector<std::string> ins;
  for (ValueId t : node.tensors)
    ins.push_back(Emit(t, BroadcastCoords(program_.value(t).shape, out, coords)));
  const std::string formula = ElementwiseFormula(op, ins, node.attrs);
  assert(!formula.empty() && "UnsupportedOps admits only known formulas");
  const std::string var = NewVar("y");
  w_.Line(var + " = " + formula + "  # " + op.name);
  return var;
}

// A layout operator reads its input at other coordinates (layout.h); outside a pad's
// input (or a triangle) the loads are masked off and the result is the fill value.
std::string ExprEmitter::EmitLayout(const Node& node, const std::vector<std::string>& coords) {
  const LayoutRead read = LayoutInputCoords(program_, node, coords);
  if (read.in_range.empty()) return Emit(node.tensors[0], read.coords);
  return EmitInRange(node.tensors[0], read, GetOp(node.op).name);
}

// `v` at `read.coords`, its loads masked off outside `read.in_range`, where it is the fill.
std::string ExprEmitter::EmitInRange(ValueId v, const LayoutRead& read, const std::string& op) {
  const std::string x = EmitMasked(v, read.coords, "(" + mask_ + ") & " + read.in_range);
  const std::string var = NewVar("y");
  w_.Line(var + " = tl.where(" + read.in_range + ", " + x + ", " + read.fill + ")  # " + op);
  return var;
}

// embedding: the row index loaded first (an int64 tensor, at the output's coordinates but
// the last), a negative one counted from the end as x[idx] counts it; a row outside the
// weight reads zeros (its loads masked off), where PyTorch raises.
std::string ExprEmitter::EmitEmbedding(const Node& node, const std::vector<std::string>& coords) {
  const std::string rows = IntLiteral(program_.value(node.tensors[1]).shape[0]);
  const std::string index =
      Emit(node.tensors[0], std::vector<std::string>(coords.begin(), coords.end() - 1));
  const std::string row = NewVar("row");
  w_.Line(row + " = tl.where(" + index + " < 0, " + index + " + " + rows + ", " + index + ")");
  LayoutRead read;
  read.coords = {row, coords.back()};
  read.in_range = "((" + row + " >= 0) & (" + row + " < " + rows + "))";
  read.fill = "0.0";
  return EmitInRange(node.tensors[1], read, "embedding");
}

// (x - running_mean) / sqrt(running_var + eps) * weight + bias, per channel (dim 1).
std::string ExprEmitter::EmitBatchNorm(const Node& node, const std::vector<std::string>& coords) {
  const std::vector<std::string> channel = {coords[1]};
  const std::string x = Emit(node.tensors[0], coords);
  const std::string mean = Emit(node.tensors[1], channel);
  const std::string var = Emit(node.tensors[2], channel);
  const double eps = node.attrs[2].AsFloat();
  std::string e = "(" + x + " - " + mean + ") / tl.sqrt(" + var + " + " + FloatLiteral(eps) + ")";
  if (node.tensors[3].valid()) e = e + " * " + Emit(node.tensors[3], channel);
  if (node.tensors[4].valid()) e = e + " + " + Emit(node.tensors[4], channel);
  const std::string result = NewVar("y");
  w_.Line(result + " = " + e + "  # batch_norm");
  return result;
}

}  // namespace drtriton::codegen

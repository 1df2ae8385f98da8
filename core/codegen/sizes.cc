// Symbolic sizes (sizes.h): input dims are named, every other value's dims are selected
// from its operands' by the operator's shape rule (catalog.h ShapeRule).
#include "codegen/sizes.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "codegen/kernel.h"

namespace drtriton::codegen {
namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Right-aligned broadcast of the operands' dims (catalog ShapeRule::kBroadcast): a dim is
// the first operand's that is not a unit dim there.
Dims BroadcastDims(const std::vector<const Dims*>& ins, size_t rank) {
  Dims out(rank, "1");
  for (const Dims* in : ins) {
    const size_t lead = rank - in->size();
    for (size_t j = 0; j < in->size(); ++j)
      if (out[lead + j] == "1") out[lead + j] = (*in)[j];
  }
  return out;
}

// A computed length that is 1 in the program is a unit dim of the candidate like any
// other (sizes.h): the wrapper asserts that it is 1 at run time too.
std::string UnitChecked(const std::string& name, int64_t length, SizeSyms& s) {
  if (length != 1) return name;
  s.derived.push_back("assert " + name + " == 1, \"" + name + " must be 1\"");
  return "1";
}

// torch's output length of a window over `len` (a size expression), as a template whose
// numbers are the operator's own arguments, unfolded, so that the line reads the same for
// every program and a model copies it instead of doing arithmetic:
//   (len + 2 * pad - dil * (k - 1) - 1 [+ stride - 1]) // stride + 1
std::string WindowLength(const std::string& len, int64_t pad, int64_t dil, const std::string& k,
                         int64_t stride, bool ceil_mode) {
  const std::string st = IntLiteral(stride);
  std::string e =
      "(" + len + " + 2 * " + IntLiteral(pad) + " - " + IntLiteral(dil) + " * (" + k + " - 1) - 1";
  if (ceil_mode) e += " + " + st + " - 1";
  return e + ") // " + st + " + 1";
}

// max_pool / avg_pool (torch's rule, catalog/shape_rules_spatial.cc): each spatial output
// length is a wrapper line; a ceil-mode window must start inside the input or its padding.
Dims PoolDims(const Program& p, const Node& node, const Dims& in, SizeSyms& s) {
  const OpInfo& op = GetOp(node.op);
  const size_t nsp = static_cast<size_t>(op.spatial_dims);
  const bool is_max = op.name.rfind("max", 0) == 0;
  const auto kernel = node.attrs[0].AsInts(nsp);
  const auto stride = node.attrs[1].is_none() ? kernel : node.attrs[1].AsInts(nsp);
  const auto pad = node.attrs[2].AsInts(nsp);
  const auto dil = is_max ? node.attrs[3].AsInts(nsp) : std::vector<int64_t>(nsp, 1);
  const bool ceil_mode = node.attrs[is_max ? 4 : 3].b;
  const Shape& out_shape = p.value(node.result).shape;
  Dims out = in;
  const size_t lead = in.size() - nsp;
  for (size_t d = 0; d < nsp; ++d) {
    const size_t i = lead + d;
    if (in[i] == "1") {  // a unit input dim: the length is a literal
      out[i] = IntLiteral(out_shape[i]);
      continue;
    }
    const std::string name = SizeName(p.value(node.result).name, i);
    s.derived.push_back(
        name + " = " +
        WindowLength(in[i], pad[d], dil[d], IntLiteral(kernel[d]), stride[d], ceil_mode));
    if (ceil_mode) {
      s.derived.push_back("if (" + name + " - 1) * " + IntLiteral(stride[d]) + " >= " + in[i] +
                          " + " + IntLiteral(pad[d]) + ":");
      s.derived.push_back("    " + name + " -= 1");
    }
    out[i] = UnitChecked(name, out_shape[i], s);
  }
  return out;
}

// conv / conv_transpose (torch's rule): output channels from the weight, each spatial
// length a wrapper line over the input's length and the weight's kernel length:
//   conv:      WindowLength
//   transpose: (len - 1) * stride - 2 * pad + dil * (k - 1) + output_padding + 1
Dims ConvDims(const Program& p, const Node& node, const Dims& in, const Dims& wt, SizeSyms& s) {
  const OpInfo& op = GetOp(node.op);
  const bool transpose = op.has(kConvTranspose);
  const size_t nsp = static_cast<size_t>(op.spatial_dims);
  const auto stride = node.attrs[0].AsInts(nsp), pad = node.attrs[1].AsInts(nsp);
  const auto dil = node.attrs[transpose ? 4 : 2].AsInts(nsp);
  const auto out_pad = transpose ? node.attrs[2].AsInts(nsp) : std::vector<int64_t>(nsp, 0);
  const int64_t groups = node.attrs[3].i;
  const Shape& out_shape = p.value(node.result).shape;
  const size_t lead = in.size() - nsp - 1;  // 1 for batched (N, C, *), 0 for (C, *)
  Dims out(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(lead));
  if (!transpose)
    out.push_back(wt[0]);
  else if (IsLiteral(wt[1]))
    out.push_back(IntLiteral(out_shape[lead]));
  else
    out.push_back(groups == 1 ? wt[1] : wt[1] + " * " + IntLiteral(groups));
  for (size_t d = 0; d < nsp; ++d) {
    const size_t i = lead + 1 + d;
    const std::string& len = in[i];
    const std::string& k = wt[wt.size() - nsp + d];
    if (IsLiteral(len) && IsLiteral(k)) {
      out.push_back(IntLiteral(out_shape[i]));
      continue;
    }
    const std::string name = SizeName(p.value(node.result).name, i);
    if (!transpose) {
      s.derived.push_back(name + " = " + WindowLength(len, pad[d], dil[d], k, stride[d], false));
    } else {
      s.derived.push_back(name + " = (" + len + " - 1) * " + IntLiteral(stride[d]) + " - 2 * " +
                          IntLiteral(pad[d]) + " + " + IntLiteral(dil[d]) + " * (" + k +
                          " - 1) + " + IntLiteral(out_pad[d]) + " + 1");
    }
    out.push_back(UnitChecked(name, out_shape[i], s));
  }
  return out;
}

// The dims of `node`'s result, or {} with `ok` false for a rule generic mode does not cover.
Dims ResultDims(const Program& p, const Node& node, SizeSyms& s, bool& ok) {
  const OpInfo& op = GetOp(node.op);
  const size_t rank = p.value(node.result).shape.size();
  auto dims = [&](size_t i) -> const Dims& { return s.values[node.tensors[i].index]; };
  ok = true;
  if (op.has(kElementwise)) {
    std::vector<const Dims*> ins;
    for (ValueId t : node.tensors)
      if (t.valid()) ins.push_back(&s.values[t.index]);
    return BroadcastDims(ins, rank);
  }
  switch (op.rule) {
    case ShapeRule::kSameAsInput:
      return dims(0);
    case ShapeRule::kReduce: {
      Dims d = dims(0);
      const int axis = NormDim(node.attrs[0].i, d.size());
      if (node.attrs[1].b)
        d[axis] = "1";
      else
        d.erase(d.begin() + axis);
      return d;
    }
    case ShapeRule::kTranspose: {
      Dims d = dims(0);
      std::swap(d[NormDim(node.attrs[0].i, d.size())], d[NormDim(node.attrs[1].i, d.size())]);
      return d;
    }
    case ShapeRule::kLinear: {  // (..., K) x (N, K) -> (..., N)
      Dims d(dims(0).begin(), dims(0).end() - 1);
      d.push_back(dims(1)[0]);
      return d;
    }
    case ShapeRule::kMatmul:
    case ShapeRule::kBmm: {  // batch dims broadcast, then (M, K) x (K, N) -> (M, N)
      const Dims& a = dims(0);
      const Dims& b = dims(1);
      if (a.size() < 2 || b.size() < 2) break;
      const Dims a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
      Dims d = BroadcastDims({&a_batch, &b_batch}, rank - 2);
      d.push_back(a[a.size() - 2]);
      d.push_back(b.back());
      return d;
    }
    case ShapeRule::kPool:
      return PoolDims(p, node, dims(0), s);
    case ShapeRule::kConv:
    case ShapeRule::kConvTranspose:
      return ConvDims(p, node, dims(0), dims(1), s);
    case ShapeRule::kAdaptivePool: {  // output_size is a program constant
      const Shape& out_shape = p.value(node.result).shape;
      Dims d = dims(0);
      const size_t nsp = static_cast<size_t>(GetOp(node.op).spatial_dims);
      for (size_t i = d.size() - nsp; i < d.size(); ++i) d[i] = IntLiteral(out_shape[i]);
      return d;
    }
    default:
      break;
  }
  ok = false;
  return {};
}

}  // namespace

std::string SizeName(const std::string& value, size_t dim) {
  return value + "_s" + std::to_string(dim);
}

std::string GenericBlocker(const Program& p, NodeId id) {
  const OpInfo& op = GetOp(p.node(id).op);
  if (op.has(kElementwise) || op.has(kChannelwise)) return "";
  // Layout index arithmetic (layout.cc) reads literal sizes; transpose needs none.
  if (op.has(kLayout) && op.rule != ShapeRule::kTranspose) return op.name;
  switch (op.rule) {
    case ShapeRule::kSameAsInput:
    case ShapeRule::kReduce:
    case ShapeRule::kTranspose:
    case ShapeRule::kLinear:
    case ShapeRule::kMatmul:
    case ShapeRule::kBmm:
    case ShapeRule::kPool:
    case ShapeRule::kConv:
    case ShapeRule::kConvTranspose:
    case ShapeRule::kAdaptivePool:
      return "";
    default:
      return op.name;
  }
}

Result<SizeSyms> InferSizeSyms(const Program& p) {
  SizeSyms s;
  s.values.resize(p.values().size());
  std::set<std::string> value_names;
  for (const Value& v : p.values()) value_names.insert(v.name);
  for (ValueId in : p.inputs()) {
    const Value& v = p.value(in);
    for (size_t d = 0; d < v.shape.size(); ++d) {
      const std::string name = SizeName(v.name, d);
      // A program value called `x0_s0` would be shadowed by the size variable.
      if (value_names.count(name)) return MakeError("size name " + name + " is a value name");
      s.values[in.index].push_back(v.shape[d] == 1 ? "1" : name);
    }
  }
  for (const Node& node : p.nodes()) {
    bool ok = false;
    Dims dims = ResultDims(p, node, s, ok);
    const Shape& shape = p.value(node.result).shape;
    if (!ok) return MakeError(GetOp(node.op).name, node.line);
    // The invariant the emitters rely on: "1" exactly where the program's dim is 1.
    bool consistent = dims.size() == shape.size();
    for (size_t d = 0; consistent && d < dims.size(); ++d)
      consistent = (dims[d] == "1") == (shape[d] == 1);
    if (!consistent) return MakeError(GetOp(node.op).name + "(sizes)", node.line);
    s.values[node.result.index] = std::move(dims);
  }
  return s;
}

bool IsLiteral(const std::string& dim) {
  return !dim.empty() && dim.find_first_not_of("0123456789") == std::string::npos;
}

Dims LiteralDims(const Shape& shape) {
  Dims d;
  for (int64_t n : shape) d.push_back(IntLiteral(n));
  return d;
}

std::string DimProduct(const Dims& dims, size_t begin, size_t end) {
  int64_t constant = 1;
  std::vector<std::string> names;
  for (size_t i = begin; i < dims.size() && i < end; ++i) {
    if (IsLiteral(dims[i]))
      constant *= std::stoll(dims[i]);
    else
      names.push_back(dims[i]);
  }
  if (constant != 1 || names.empty()) names.insert(names.begin(), IntLiteral(constant));
  return Join(names, " * ");
}

std::string Atom(const std::string& expr) {
  const bool simple = std::all_of(expr.begin(), expr.end(), IsNameChar);
  const bool wrapped = expr.size() > 1 && expr.front() == '(' && expr.back() == ')' &&
                       expr.find('(', 1) == std::string::npos;
  return simple || wrapped ? expr : "(" + expr + ")";
}

namespace {
// `<value>_s<d>` (SizeName); kernels also name constants of their own (a transposed
// convolution's `taps0`), which are no sizes.
bool IsSizeName(const std::string& token) {
  const size_t at = token.rfind("_s");
  return at != std::string::npos && at > 0 && at + 2 < token.size() &&
         !std::isdigit(static_cast<unsigned char>(token[0])) &&
         token.find_first_not_of("0123456789", at + 2) == std::string::npos;
}
}  // namespace

std::vector<std::string> SizeNamesIn(const std::string& expr) {
  std::vector<std::string> names;
  for (size_t i = 0; i < expr.size();) {
    if (!IsNameChar(expr[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < expr.size() && IsNameChar(expr[j])) ++j;
    const std::string token = expr.substr(i, j - i);
    if (IsSizeName(token) && std::find(names.begin(), names.end(), token) == names.end())
      names.push_back(token);
    i = j;
  }
  return names;
}

}  // namespace drtriton::codegen

// Layout operators as index arithmetic (layout.h).
#include "codegen/layout.h"

#include <cassert>

#include "codegen/kernel.h"

namespace drtriton::codegen {
namespace {

std::vector<int64_t> Ints(const AttrValue& v) {
  return v.type == AttrType::kInt ? std::vector<int64_t>{v.i} : v.ints;
}

std::string Plus(const std::string& c, int64_t k) {
  if (k == 0) return c;
  return "(" + c + (k > 0 ? " + " : " - ") + IntLiteral(k > 0 ? k : -k) + ")";
}

// Reshape: a squeeze or unsqueeze (the dims other than 1 equal, in order) keeps each
// coordinate; any other reshape goes through the row-major flat index.
std::vector<std::string> ReshapeCoords(const Shape& in, const Shape& out,
                                       const std::vector<std::string>& coords) {
  std::vector<size_t> in_big, out_big;
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k] != 1) in_big.push_back(k);
  for (size_t k = 0; k < out.size(); ++k)
    if (out[k] != 1) out_big.push_back(k);
  bool same = in_big.size() == out_big.size();
  for (size_t k = 0; same && k < in_big.size(); ++k) same = in[in_big[k]] == out[out_big[k]];
  std::vector<std::string> result(in.size(), "0");
  if (same) {
    for (size_t k = 0; k < in_big.size(); ++k) result[in_big[k]] = coords[out_big[k]];
    return result;
  }
  std::string flat;
  for (size_t k : out_big) {
    flat = flat.empty() ? coords[k] : "(" + flat + ") * " + IntLiteral(out[k]) + " + " + coords[k];
  }
  int64_t inner = 1;
  for (size_t k = in.size(); k-- > 0;) {
    if (in[k] == 1) continue;
    std::string c = inner == 1 ? "(" + flat + ")" : "((" + flat + ") // " + IntLiteral(inner) + ")";
    if (k != in_big.front()) c = "(" + c + " % " + IntLiteral(in[k]) + ")";
    result[k] = c;
    inner *= in[k];
  }
  return result;
}

// triu keeps col - row >= diagonal, tril col - row <= diagonal (the last two dims).
LayoutRead TriangleRead(const OpInfo& op, const Node& node,
                        const std::vector<std::string>& coords) {
  LayoutRead r;
  r.coords = coords;
  const size_t n = coords.size();
  const std::string offset = "(" + coords[n - 1] + " - " + coords[n - 2] + ")";
  const bool upper = op.triangle == Triangle::kUpper;
  r.in_range = "(" + offset + (upper ? " >= " : " <= ") + IntLiteral(node.attrs[0].i) + ")";
  r.fill = "0.0";
  return r;
}

}  // namespace

LayoutRead LayoutInputCoords(const Program& p, const Node& node,
                             const std::vector<std::string>& coords) {
  const OpInfo& op = GetOp(node.op);
  const Shape& in = p.value(node.tensors[0]).shape;
  const Shape& out = p.value(node.result).shape;
  LayoutRead r;
  r.coords = coords;
  switch (op.rule) {
    case ShapeRule::kTranspose:
      std::swap(r.coords[NormDim(node.attrs[0].i, out.size())],
                r.coords[NormDim(node.attrs[1].i, out.size())]);
      return r;
    case ShapeRule::kPermute: {
      const std::vector<int64_t> dims = Ints(node.attrs[0]);
      for (size_t k = 0; k < dims.size(); ++k) r.coords[NormDim(dims[k], in.size())] = coords[k];
      return r;
    }
    case ShapeRule::kReshape:
      r.coords = ReshapeCoords(in, out, coords);
      return r;
    case ShapeRule::kExpand: {  // right-aligned; a repeated (size-1) dim reads index 0
      const size_t offset = out.size() - in.size();
      r.coords.assign(coords.begin() + static_cast<std::ptrdiff_t>(offset), coords.end());
      for (size_t k = 0; k < in.size(); ++k)
        if (in[k] == 1) r.coords[k] = "0";
      return r;
    }
    case ShapeRule::kNarrow: {
      const int d = NormDim(node.attrs[0].i, in.size());
      const int64_t start = node.attrs[1].i < 0 ? node.attrs[1].i + in[d] : node.attrs[1].i;
      r.coords[d] = Plus(coords[d], start);
      return r;
    }
    case ShapeRule::kSelect: {
      const int d = NormDim(node.attrs[0].i, in.size());
      const int64_t index = node.attrs[1].i < 0 ? node.attrs[1].i + in[d] : node.attrs[1].i;
      r.coords.insert(r.coords.begin() + d, IntLiteral(index));
      return r;
    }
    case ShapeRule::kSameAsInput:  // flip, triu, tril
      if (op.triangle != Triangle::kNone) return TriangleRead(op, node, coords);
      for (int k : FlippedDims(p, node))
        r.coords[k] = "(" + IntLiteral(in[k] - 1) + " - " + coords[k] + ")";
      return r;
    case ShapeRule::kPad: {
      const std::vector<int64_t> pad = Ints(node.attrs[0]);
      std::vector<std::string> checks;
      for (size_t k = 0; k + 1 < pad.size(); k += 2) {
        const size_t d = in.size() - 1 - k / 2;
        r.coords[d] = Plus(coords[d], -pad[k]);
        if (pad[k] > 0) checks.push_back("(" + r.coords[d] + " >= 0)");
        if (pad[k + 1] > 0) checks.push_back("(" + r.coords[d] + " < " + IntLiteral(in[d]) + ")");
      }
      r.in_range = Join(checks, " & ");
      r.fill = FloatLiteral(node.attrs[2].AsFloat());
      return r;
    }
    case ShapeRule::kEmbedding:
      // Its first tensor is the indices, read at the output's coordinates but the last (the
      // weight's row is a value the kernel loads: expr.cc EmitEmbedding).
      r.coords.pop_back();
      return r;
    default:
      assert(false && "LayoutInputCoords: not a layout rule");
      return r;
  }
}

std::vector<int> FlippedDims(const Program& p, const Node& node) {
  const OpInfo& op = GetOp(node.op);
  if (!op.has(kLayout) || op.rule != ShapeRule::kSameAsInput || op.triangle != Triangle::kNone)
    return {};
  const size_t rank = p.value(node.tensors[0]).shape.size();
  std::vector<int> dims;
  for (int64_t d : Ints(node.attrs[0])) dims.push_back(NormDim(d, rank));
  return dims;
}

bool KeepsRowMajorOrder(const Program& p, const Node& node) {
  const OpInfo& op = GetOp(node.op);
  if (!op.has(kLayout)) return false;
  const Shape& in = p.value(node.tensors[0]).shape;
  std::vector<int> order(in.size());  // the input dim of each output dim
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
  switch (op.rule) {
    case ShapeRule::kReshape:
      return true;
    case ShapeRule::kTranspose:
      std::swap(order[NormDim(node.attrs[0].i, in.size())],
                order[NormDim(node.attrs[1].i, in.size())]);
      break;
    case ShapeRule::kPermute: {
      const std::vector<int64_t> dims = Ints(node.attrs[0]);
      for (size_t k = 0; k < dims.size(); ++k) order[k] = NormDim(dims[k], in.size());
      break;
    }
    default:
      return false;
  }
  int last = -1;  // the dims of size > 1 must keep their order
  for (int d : order) {
    if (in[d] == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
}

}  // namespace drtriton::codegen

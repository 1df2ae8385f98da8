// Rows layouts (rows.h): along one dim, trailing dims, groups of channels, channels.
#include <string>
#include <vector>

#include "codegen/layout.h"
#include "codegen/rows.h"

namespace drtriton::codegen {
namespace {

// Per-channel weight and bias (group_norm, batch_norm): the element's channel, dim 1.
Coords ChannelOf(const Coords&, const Coords&, const Coords& coords) { return {coords[1]}; }

// Along one dim `d` of `in`: rows are the other dims in order, r is dim d.
RowLayout AlongDim(const Shape& in, const Dims& dims, int d, bool keepdim) {
  RowLayout l;
  for (size_t i = 0; i < in.size(); ++i) {
    if (static_cast<int>(i) == d) continue;
    l.row_shape.push_back(in[i]);
    l.row_dims.push_back(dims[i]);
  }
  l.r_shape = {in[d]};
  l.r_dims = {dims[d]};
  l.in_coords = [d](const Coords& row, const Coords& r) {
    Coords c = row;
    c.insert(c.begin() + d, r[0]);
    return c;
  };
  l.out_coords = [d, keepdim](const Coords& row) {
    Coords c = row;
    if (keepdim) c.insert(c.begin() + d, "0");
    return c;
  };
  l.trailing = Product(in, static_cast<size_t>(d) + 1) == 1;
  return l;
}

// Trailing dims from `first` on are reduced (layer_norm, instance_norm).
RowLayout Trailing(const Shape& in, const Dims& dims, size_t first, ParamsVary params) {
  RowLayout l;
  const auto split = static_cast<std::ptrdiff_t>(first);
  l.row_shape.assign(in.begin(), in.begin() + split);
  l.r_shape.assign(in.begin() + split, in.end());
  l.row_dims.assign(dims.begin(), dims.begin() + split);
  l.r_dims.assign(dims.begin() + split, dims.end());
  l.in_coords = [](const Coords& row, const Coords& r) {
    Coords c = row;
    c.insert(c.end(), r.begin(), r.end());
    return c;
  };
  l.params = params;
  l.param_coords = [params](const Coords&, const Coords& r, const Coords& coords) {
    return params == ParamsVary::kPerRow ? Coords{coords[1]} : r;
  };
  l.trailing = true;
  return l;
}

// group_norm: rows (n, g), reduced (channel within the group, spatial...).
// The channel count per group is a size expression in generic mode: "(x0_s1 // 4)".
RowLayout Groups(const Shape& in, const Dims& dims, int64_t groups) {
  RowLayout l;
  const int64_t per_group = in[1] / groups;
  const bool literal = dims[1] == IntLiteral(in[1]);
  const std::string per_group_dim =
      literal ? IntLiteral(per_group) : "(" + dims[1] + " // " + IntLiteral(groups) + ")";
  l.row_shape = {in[0], groups};
  l.r_shape = {per_group};
  l.r_shape.insert(l.r_shape.end(), in.begin() + 2, in.end());
  l.row_dims = {dims[0], IntLiteral(groups)};
  l.r_dims = {per_group_dim};
  l.r_dims.insert(l.r_dims.end(), dims.begin() + 2, dims.end());
  l.in_coords = [per_group_dim](const Coords& row, const Coords& r) {
    // The channel: the group's first channel plus the channel within the group.
    std::string channel;
    if (row[1] == "0")
      channel = r[0];
    else if (per_group_dim == "1")
      channel = row[1];
    else if (r[0] == "0")
      channel = row[1] + " * " + per_group_dim;
    else
      channel = row[1] + " * " + per_group_dim + " + " + r[0];
    Coords c = {row[0], channel};
    c.insert(c.end(), r.begin() + 1, r.end());
    return c;
  };
  l.params = ParamsVary::kPerElement;
  l.param_coords = ChannelOf;
  l.trailing = true;
  return l;
}

// Batch norm's batch statistics: a row per channel, reduced over (sample, spatial...).  The
// row's elements are N runs of the spatial size, so r is not innermost (trailing is false)
// and each element is addressed through its coordinates: r // S is the sample, r % S the
// position in its channel's contiguous spatial run.
RowLayout Channels(const Shape& in, const Dims& dims) {
  RowLayout l;
  l.row_shape = {in[1]};
  l.row_dims = {dims[1]};
  l.r_shape = {in[0]};
  l.r_shape.insert(l.r_shape.end(), in.begin() + 2, in.end());
  l.r_dims = {dims[0]};
  l.r_dims.insert(l.r_dims.end(), dims.begin() + 2, dims.end());
  l.in_coords = [](const Coords& row, const Coords& r) {
    Coords c = {r[0], row[0]};
    c.insert(c.end(), r.begin() + 1, r.end());
    return c;
  };
  l.params = ParamsVary::kPerRow;
  l.param_coords = ChannelOf;
  l.channel_rows = true;
  return l;
}

}  // namespace

RowLayout LayoutOf(const GroupContext& ctx, const Node& node, RowOp op) {
  const Shape& in = ctx.program.value(node.tensors[0]).shape;
  const Dims dims = ctx.DimsOf(node.tensors[0]);
  if (op == RowOp::kNllLoss) return AlongDim(in, dims, 1, /*keepdim=*/false);  // the classes
  if (!IsNorm(op)) {
    const bool keepdim = IsReduction(op) && node.attrs[1].b;
    return AlongDim(in, dims, NormDim(node.attrs[0].i, in.size()), keepdim);
  }
  if (op == RowOp::kLayerNorm)
    return Trailing(in, dims, in.size() - node.attrs[0].ints.size(), ParamsVary::kAlongR);
  if (op == RowOp::kInstanceNorm) return Trailing(in, dims, 2, ParamsVary::kPerRow);
  if (op == RowOp::kBatchNorm) return Channels(in, dims);
  return Groups(in, dims, node.attrs[0].i);  // group_norm
}

namespace {

constexpr char kReducedToken[] = "__reduced";
constexpr char kKeptToken[] = "__kept";
// A value inlined through more layout and elementwise nodes than this is not traced.
constexpr int kMaxTraceDepth = 16;

// Whether some stored value that `v` (read at `coords`) is computed from varies along r and
// has, as its innermost non-unit dim that any coordinate reaches, one addressed by kept
// coordinates only.  A value constant along r (a per-row bias) is read once a row: it does
// not count.
bool StoredReadAcrossR(const GroupContext& ctx, ValueId v, const Coords& coords, int depth) {
  const Program& p = ctx.program;
  const Value& value = p.value(v);
  if (ctx.plan.materialized[v.index] || !value.producer.valid()) {
    const auto has = [&](size_t i, const char* token) {
      return value.shape[i] != 1 && coords[i].find(token) != std::string::npos;
    };
    bool varies = false;  // a unit dim's coordinate moves no address
    for (size_t i = 0; i < value.shape.size(); ++i) varies = varies || has(i, kReducedToken);
    if (!varies) return false;
    for (size_t i = value.shape.size(); i-- > 0;)
      if (has(i, kReducedToken) || has(i, kKeptToken)) return !has(i, kReducedToken);
    return false;
  }
  if (depth >= kMaxTraceDepth) return false;
  const Node& node = p.node(value.producer);
  const OpInfo& op = GetOp(node.op);
  if (op.has(kLayout)) {
    const LayoutRead read = LayoutInputCoords(p, node, coords);
    return StoredReadAcrossR(ctx, node.tensors[0], read.coords, depth + 1);
  }
  if (op.has(kChannelwise))  // its parameters are per channel: only the input is a tensor read
    return StoredReadAcrossR(ctx, node.tensors[0], coords, depth + 1);
  for (ValueId t : node.tensors) {
    const Coords in = BroadcastCoords(p.value(t).shape, value.shape, coords);
    if (StoredReadAcrossR(ctx, t, in, depth + 1)) return true;
  }
  return false;
}

}  // namespace

bool ReducedDimStrided(const GroupContext& ctx, ValueId input, const RowLayout& l) {
  if (!l.trailing || l.r_shape.size() != 1 || ctx.generic()) return false;
  Coords row;
  for (size_t i = 0; i < l.row_shape.size(); ++i)
    row.push_back(kKeptToken + std::to_string(i));
  return StoredReadAcrossR(ctx, input, l.in_coords(row, {kReducedToken}), 0);
}

Coords InlineCoords(const std::string& flat, const Dims& dims) {
  Coords coords(dims.size(), "0");
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == "1") continue;
    const std::string inner = DimProduct(dims, i + 1);
    const std::string outer = DimProduct(dims, 0, i);  // "1" when nothing non-unit lies before
    std::string e = flat;
    if (inner != "1") e += " // " + Atom(inner);
    if (outer != "1") e += " % " + Atom(dims[i]);
    coords[i] = e;
  }
  return coords;
}

}  // namespace drtriton::codegen

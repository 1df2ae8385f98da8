// Sums and means over a convolution's spatial dims, taken before the convolution (reassociate.h).
//
// Summed over its output positions along one spatial dim d, a convolution is a convolution
// whose kernel is 1 wide along d: tap k of the kernel meets the input positions in one range
// R(k) (stride 1 for a convolution, any stride for a transposed one), so
//   sum_o out[.., o, ..] = sum_k W[.., k, ..] * (sum_{i in R(k)} x[.., i, ..]) + O * bias:
// the input summed over each tap's range, one channel per tap (C_in * taps channels), under
// the kernel's taps along d as weights, and O times the bias.  For a mean, each range sum is
// divided by the output's size O (a zero-padded mean over O positions), and the bias is
// added once.  Taps with the same range share a channel, their weights added.
//
// KernelBench L2 44 (conv_transpose2d 64 -> 128 channels, 3x3, stride 2, on 16 x 128 x 128,
// then a global mean): 38.7 GFLOP of transposed convolution become one pass over the input
// (67 MB in fp32; RangeSums) and a 16 x 256 x 128 product.  L2 13 (conv_transpose3d, a mean over
// depth only): 464 GFLOP become a 2-D transposed convolution of 48 channels, 14.5 GFLOP.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "catalog/catalog.h"
#include "codegen/fusion.h"
#include "codegen/kernel.h"
#include "codegen/reassociate.h"
#include "codegen/reassociate_steps.h"
#include "util/int_math.h"

namespace drtriton::codegen {
namespace {

// The position of the dilation among a convolution's attributes: conv's are stride, padding,
// dilation, groups; conv_transpose's stride, padding, output_padding, groups, dilation.
size_t DilationAttr(bool transposed) { return transposed ? 4 : 2; }

// One spatial dim of a convolution.
struct ConvDim {
  bool transposed = false;
  int64_t in = 0, out = 0, taps = 0, stride = 1, pad = 0, dil = 1;
};

// The input positions [lo, hi) tap k meets, or an empty range; nullopt where a tap meets a
// strided set (a convolution of stride > 1 with more than one output position).
std::optional<std::pair<int64_t, int64_t>> TapRange(const ConvDim& c, int64_t k) {
  int64_t lo = 0, hi = 0;
  if (c.transposed) {  // o = i * stride - pad + k * dil in [0, out)
    lo = -FloorDiv(-(c.pad - k * c.dil), c.stride);
    hi = FloorDiv(c.out - 1 + c.pad - k * c.dil, c.stride) + 1;
  } else {  // i = o * stride - pad + k * dil for o in [0, out)
    if (c.stride != 1 && c.out != 1) return std::nullopt;
    lo = k * c.dil - c.pad;
    hi = lo + c.out;
  }
  lo = std::max<int64_t>(lo, 0);
  hi = std::min(hi, c.in);
  if (hi <= lo) return std::make_pair(int64_t{0}, int64_t{0});
  return std::make_pair(lo, hi);
}

// Tap classes of spatial dim `dim` of convolution `n`: the input range of each, in order of
// its first tap, and the taps that meet it (taps no output position meets are left out).
struct TapClasses {
  ConvDim dim;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::vector<std::vector<int64_t>> taps;
};

// A sum or mean over `dim` of convolution `conv`'s output (through steps that commute), and
// the tap classes of that dim.
struct ConvReduction {
  NodeId conv;
  size_t dim = 0;
  bool mean = false;
  TapClasses classes;
};

std::optional<TapClasses> ClassifyTaps(const Program& p, const Node& n, size_t dim) {
  const bool transposed = GetOp(n.op).has(kConvTranspose);
  const Shape& w = p.value(n.tensors[1]).shape;
  const size_t spatial = w.size() - 2, j = dim - 2;
  const std::vector<AttrValue>& a = n.attrs;
  TapClasses out;
  out.dim = ConvDim{transposed,
                    p.value(n.tensors[0]).shape[dim],
                    p.value(n.result).shape[dim],
                    w[dim],
                    a[0].AsInts(spatial)[j],
                    a[1].AsInts(spatial)[j],
                    a[DilationAttr(transposed)].AsInts(spatial)[j]};
  std::map<std::pair<int64_t, int64_t>, size_t> class_of;
  for (int64_t k = 0; k < out.dim.taps; ++k) {
    const auto range = TapRange(out.dim, k);
    if (!range) return std::nullopt;
    if (range->second == range->first) continue;
    // A mean pads each range to the output's size, which a range never exceeds (each of its
    // positions meets its own output position).
    if (range->second - range->first > out.dim.out) return std::nullopt;
    auto [it, fresh] = class_of.emplace(*range, out.ranges.size());
    if (fresh) {
      out.ranges.push_back(*range);
      out.taps.emplace_back();
    }
    out.taps[it->second].push_back(k);
  }
  if (out.ranges.empty()) return std::nullopt;
  return out;
}

// A reduction over a dim of size 1 is the identity (the rewrite leaves such reductions
// behind it): where `n` is one, `*dim` (of its output) becomes the same dim of its input.
bool ThroughIdentityReduction(const Program& p, const Node& n, size_t* dim) {
  const std::optional<size_t> e = IdentityReductionDim(p, n);
  if (!e) return false;
  const bool keep = n.attrs.size() > 1 && n.attrs[1].type == AttrType::kBool && n.attrs[1].b;
  if (!keep && *dim >= *e) ++*dim;
  return true;
}

std::optional<ConvReduction> ConvBefore(const Program& p, const Node& r,
                                        const std::vector<std::vector<NodeId>>& users) {
  const std::string& name = GetOp(r.op).name;
  const bool mean = name == "mean";
  if ((name != "sum" && !mean) || r.attrs.empty() || r.attrs[0].type != AttrType::kInt)
    return std::nullopt;
  ValueId v = r.tensors[0];
  const size_t rank = p.value(v).shape.size();
  const int d = NormDim(r.attrs[0].i, rank);
  if (d < 0 || d >= static_cast<int>(rank) || p.value(v).shape[static_cast<size_t>(d)] < 2)
    return std::nullopt;
  size_t dim = static_cast<size_t>(d);
  while (true) {
    const Value& value = p.value(v);
    if (!value.producer.valid() || users[static_cast<size_t>(v.index)].size() != 1 ||
        IsOutput(p, v))
      return std::nullopt;
    const Node& n = p.node(value.producer);
    const OpInfo& op = GetOp(n.op);
    if (op.has(kConv) || op.has(kConvTranspose)) {
      // Batched only: (N, C, *spatial) against a weight (C', C'', *kernel) of the same rank.
      const size_t weight_rank = p.value(n.tensors[1]).shape.size();
      if (p.value(n.tensors[0]).shape.size() != weight_rank || dim < 2) return std::nullopt;
      std::optional<TapClasses> classes = ClassifyTaps(p, n, dim);
      if (!classes) return std::nullopt;
      return ConvReduction{value.producer, dim, mean, std::move(*classes)};
    }
    if (!CommutesWith(p, n, mean, dim) && !ThroughIdentityReduction(p, n, &dim))
      return std::nullopt;
    v = n.tensors[0];
  }
}

// Adds nodes to `out`, named after `base` with names neither program has; an invalid id as
// input gives an invalid id back.
struct Builder {
  const Program& old;
  Program& out;
  ValueId Add(const char* op, std::vector<ValueId> tensors, std::vector<AttrValue> attrs,
              const std::string& base) {
    for (ValueId t : tensors)
      if (!t.valid()) return {};
    auto id = out.AddNode(FindOp(op), std::move(tensors), std::move(attrs),
                          FreshName(old, out, base));
    return id ? id.value() : ValueId{};
  }
  const Shape& ShapeOf(ValueId v) const { return out.value(v).shape; }
};

// F.pad's list putting `before` and `after` around `dim` of a rank-`rank` value.
AttrValue PadAround(size_t rank, size_t dim, int64_t before, int64_t after) {
  std::vector<int64_t> pad(2 * (rank - dim), 0);
  pad[2 * (rank - 1 - dim)] = before;
  pad[2 * (rank - 1 - dim) + 1] = after;
  return AttrValue::IntList(std::move(pad));
}

// Parts of one shape, one per class, stacked into dim `at - 1` (class-minor: element
// (j * classes + c) of that dim is part c's element j), through a size-1 dim at `at`.
ValueId Stack(Builder& b, const std::vector<ValueId>& parts, size_t at, const std::string& base) {
  if (parts.size() == 1 || !parts[0].valid()) return parts[0];
  const Shape shape = b.ShapeOf(parts[0]);
  Shape lifted = shape;
  lifted.insert(lifted.begin() + static_cast<std::ptrdiff_t>(at), 1);
  const int64_t n = static_cast<int64_t>(parts.size());
  ValueId total;
  for (int64_t c = 0; c < n; ++c) {
    const ValueId r = b.Add("reshape", {parts[static_cast<size_t>(c)]},
                            {AttrValue::IntList(lifted)}, base + "_lift");
    const ValueId placed = b.Add(
        "pad", {r},
        {PadAround(lifted.size(), at, c, n - 1 - c), AttrValue::String("constant"),
         AttrValue::Float(0.0)},
        base + "_at");
    total = c == 0 ? placed : b.Add("add", {total, placed}, {}, base + "_stack");
  }
  Shape stacked = shape;
  stacked[at - 1] *= n;
  return b.Add("reshape", {total}, {AttrValue::IntList(stacked)}, base);
}

// x summed (or, for a mean, summed and divided by `c.out`: averaged over the output's
// positions, not the range's) over `width` positions of `dim` from `lo`, keeping the dim.
ValueId ReduceRange(Builder& b, ValueId x, size_t dim, int64_t lo, int64_t width,
                    const ConvDim& c, bool mean, const std::string& base) {
  if (mean && width > c.out) {  // a valid convolution's whole input: ranges of at most c.out
    const ValueId first = ReduceRange(b, x, dim, lo, c.out, c, mean, base);
    const ValueId rest = ReduceRange(b, x, dim, lo + c.out, width - c.out, c, mean, base);
    return b.Add("add", {first, rest}, {}, base);
  }
  ValueId part = x;
  const AttrValue d = AttrValue::Int(static_cast<int64_t>(dim));
  if (width < c.in)
    part = b.Add("narrow", {x}, {d, AttrValue::Int(lo), AttrValue::Int(width)}, base);
  if (mean && width < c.out)
    part = b.Add("pad", {part},
                 {PadAround(b.ShapeOf(x).size(), dim, 0, c.out - width),
                  AttrValue::String("constant"), AttrValue::Float(0.0)},
                 base);
  return b.Add(mean ? "mean" : "sum", {part}, {d, AttrValue::Bool(true)}, base);
}

// x reduced over each tap class's range.  A range that misses less of the input than it
// covers is the whole input's reduction (one pass, shared) less the strips it misses: a
// transposed convolution's ranges differ by a position or two at the edges, and L2 44's
// classes of [1, 128) and [0, 128) would read its 64 MB input twice, not once.
std::vector<ValueId> RangeSums(Builder& b, ValueId x, size_t dim, const TapClasses& classes,
                               bool mean, const std::string& name) {
  const ConvDim& c = classes.dim;
  ValueId whole;
  std::vector<ValueId> sums;
  for (const auto& [lo, hi] : classes.ranges) {
    const int64_t missed = lo + (c.in - hi);
    if (missed >= hi - lo) {
      sums.push_back(ReduceRange(b, x, dim, lo, hi - lo, c, mean, name + "_taps"));
      continue;
    }
    if (!whole.valid()) whole = ReduceRange(b, x, dim, 0, c.in, c, mean, name + "_taps");
    ValueId sum = whole;
    if (lo > 0)
      sum = b.Add("sub", {sum, ReduceRange(b, x, dim, 0, lo, c, mean, name + "_edge")}, {},
                  name + "_taps");
    if (hi < c.in)
      sum = b.Add("sub", {sum, ReduceRange(b, x, dim, hi, c.in - hi, c, mean, name + "_edge")},
                  {}, name + "_taps");
    sums.push_back(sum);
  }
  return sums;
}

// The kernel's taps of each class along `dim`, added: (.., 1, ..) weights.
std::vector<ValueId> TapWeights(Builder& b, ValueId w, size_t dim, const TapClasses& classes,
                                const std::string& name) {
  std::vector<ValueId> weights;
  for (const std::vector<int64_t>& taps : classes.taps) {
    ValueId weight;
    for (int64_t k : taps) {
      const ValueId one = b.Add(
          "narrow", {w},
          {AttrValue::Int(static_cast<int64_t>(dim)), AttrValue::Int(k), AttrValue::Int(1)},
          name + "_tap");
      weight = weight.valid() ? b.Add("add", {weight, one}, {}, name + "_tap") : one;
    }
    weights.push_back(weight);
  }
  return weights;
}

// The convolution `n` (already copied inputs `x`, `w`, `bias`) with `r`'s spatial dim of its
// output summed (or averaged) away: appended to `b.out`, its result named `name`.
ValueId ReducedConv(Builder& b, const Node& n, const ConvReduction& r, ValueId x, ValueId w,
                    ValueId bias, const std::string& name) {
  const bool transposed = GetOp(n.op).has(kConvTranspose);
  const size_t dim = r.dim, spatial = b.ShapeOf(w).size() - 2, j = dim - 2;
  const ConvDim& c = r.classes.dim;
  const bool mean = r.mean;
  std::vector<AttrValue> attrs = n.attrs;
  const size_t dil_at = DilationAttr(transposed);
  const std::vector<ValueId> xs = RangeSums(b, x, dim, r.classes, mean, name);
  const std::vector<ValueId> ws = TapWeights(b, w, dim, r.classes, name);
  // Input channels: x's dim 1; a weight's dim 1 (conv) or 0 (conv_transpose).
  const ValueId x_taps = Stack(b, xs, 2, name + "_in");
  const ValueId w_taps = Stack(b, ws, transposed ? 1 : 2, name + "_w");
  auto set = [&](size_t at, int64_t v) {
    std::vector<int64_t> per_dim = attrs[at].AsInts(spatial);
    per_dim[j] = v;
    attrs[at] = AttrValue::IntList(per_dim);
  };
  set(0, 1);
  set(1, 0);
  set(dil_at, 1);
  if (transposed) set(2, 0);  // output_padding
  // A sum adds the bias once per output position: `out` times.
  if (!mean && bias.valid()) {
    const int64_t channels = b.ShapeOf(bias)[0];
    const ValueId column = b.Add("reshape", {bias}, {AttrValue::IntList({channels, 1})},
                                 name + "_bias");
    const ValueId repeated = b.Add("broadcast_to", {column},
                                   {AttrValue::IntList({channels, c.out})}, name + "_bias");
    bias = b.Add("sum", {repeated}, {AttrValue::Int(1), AttrValue::Bool(false)}, name + "_bias");
  }
  if (!x_taps.valid() || !w_taps.valid() || (n.tensors[2].valid() && !bias.valid())) return {};
  auto id = b.out.AddNode(n.op, {x_taps, w_taps, bias}, std::move(attrs), name);
  return id ? id.value() : ValueId{};
}

}  // namespace

namespace {

// Conv node -> the reduction to take before it.
std::map<int32_t, ConvReduction> ConvReductions(const Program& program) {
  const std::vector<std::vector<NodeId>> users = Consumers(program);
  std::map<int32_t, ConvReduction> found;
  for (const Node& n : program.nodes()) {
    std::optional<ConvReduction> r = ConvBefore(program, n, users);
    if (r) found.emplace(r->conv.index, std::move(*r));
  }
  return found;
}

}  // namespace

bool ReducesBeforeConvolutions(const Program& program) {
  return !ConvReductions(program).empty();
}

std::optional<Program> ReduceBeforeConvolutions(const Program& program) {
  const std::map<int32_t, ConvReduction> reduce_first = ConvReductions(program);
  if (reduce_first.empty()) return std::nullopt;

  return Rebuild(program, [&](size_t i, const Node& n, std::vector<ValueId>& tensors,
                              Program& out) -> std::optional<ValueId> {
    const auto first = reduce_first.find(static_cast<int32_t>(i));
    if (first == reduce_first.end()) return std::nullopt;
    Builder b{program, out};
    return ReducedConv(b, n, first->second, tensors[0], tensors[1], tensors[2],
                       program.value(n.result).name);
  });
}

namespace {

// Whether `n` is a convolution of one group over one position, its kernel one position wide,
// unpadded: a matrix product of its (N, C_in) input.
bool IsPointwiseConvolution(const Program& p, const Node& n) {
  const OpInfo& op = GetOp(n.op);
  if (!op.has(kConv) && !op.has(kConvTranspose)) return false;
  const Shape& x = p.value(n.tensors[0]).shape;
  const Shape& w = p.value(n.tensors[1]).shape;
  const Shape& y = p.value(n.result).shape;
  if (x.size() != w.size() || x.size() < 3) return false;
  const size_t spatial = x.size() - 2;
  for (size_t d = 2; d < x.size(); ++d)
    if (x[d] != 1 || w[d] != 1 || y[d] != 1) return false;
  auto all_zero = [&](const AttrValue& a) {
    for (int64_t v : a.AsInts(spatial))
      if (v != 0) return false;
    return true;
  };
  // groups: attribute 3 of both; padding 1; a transposed one's output padding 2.
  return n.attrs[3].i == 1 && all_zero(n.attrs[1]) && (op.has(kConv) || all_zero(n.attrs[2]));
}

}  // namespace

std::optional<Program> PointwiseConvolutionsAsProducts(const Program& program) {
  bool any = false;
  for (const Node& n : program.nodes()) any = any || IsPointwiseConvolution(program, n);
  if (!any) return std::nullopt;
  return Rebuild(program, [&](size_t, const Node& n, std::vector<ValueId>& tensors,
                              Program& out) -> std::optional<ValueId> {
    if (!IsPointwiseConvolution(program, n)) return std::nullopt;
    Builder b{program, out};
    const Shape& result = program.value(n.result).shape;
    const std::string& name = program.value(n.result).name;
    const int64_t rows = result[0], in = b.ShapeOf(tensors[0])[1], channels = result[1];
    const ValueId x = b.Add("reshape", {tensors[0]}, {AttrValue::IntList({rows, in})},
                            name + "_rows");
    ValueId y;
    if (GetOp(n.op).has(kConv)) {  // weight (C_out, C_in, 1, ..): linear's (N, K)
      const ValueId w = b.Add("reshape", {tensors[1]}, {AttrValue::IntList({channels, in})},
                              name + "_w");
      if (!x.valid() || !w.valid()) return ValueId{};
      auto id = out.AddNode(FindOp("linear"), {x, w, tensors[2]}, {},
                            FreshName(program, out, name + "_product"));
      y = id ? id.value() : ValueId{};
    } else {  // weight (C_in, C_out, 1, ..): matmul's (K, N)
      const ValueId w = b.Add("reshape", {tensors[1]}, {AttrValue::IntList({in, channels})},
                              name + "_w");
      y = b.Add("matmul", {x, w}, {}, name + "_product");
      if (tensors[2].valid()) y = b.Add("add", {y, tensors[2]}, {}, name + "_product");
    }
    if (!y.valid()) return ValueId{};
    auto id = out.AddNode(FindOp("reshape"), {y}, {AttrValue::IntList(result)}, name);
    return id ? id.value() : ValueId{};
  });
}

}  // namespace drtriton::codegen

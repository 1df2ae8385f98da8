// Convolutions as implicit GEMMs (contraction_spec.h): m = (sample, output position),
// k = (input channel / group, kernel offset), n = output channel / group, b = group.
//
// A transposed convolution of stride s is s dense convolutions per spatial dim, one per output
// phase p (o = p + s * j): o = i * s - pad + k * dil holds for an integer i only when
// (p + pad - k * dil) % s == 0, so only the kernel offsets k = first_k + t * step (t < taps)
// reach phase p, and for them i = j + shift - t * rate (step = s / g, rate = dil / g with
// g = gcd(s, dil); TransposedDim).  Each phase is one launch of the same kernel (the PHASE
// constexpr) whose K loop runs over (input channel, t) alone: the direct form loops over all
// kernel offsets and masks the ones whose `% s` is not 0, which at stride 2 in 3-D multiplies
// 7 of 8 products by zeros (issue 19).  A 3x3x3 kernel of stride 2 has taps 2 or 1 per dim:
// the phases' K are 8, 4, 4, 2, 4, 2, 2 and 1 times C_in, 27 C_in in all, against 8 * 27 C_in
// before.  Phases are separate launches rather than a grid axis so that each K loop has its
// phase's exact length as a constant (Triton pipelines a constant-bound loop; a grid axis
// would loop over the longest phase's K and mask the rest, 2.4x the products in that 3-D case).
//
// Loads: window coordinates are not clamped, because a masked lane of tl.load is never
// dereferenced (the CPU interpreter and the GPU alike); a clamp `tl.where(ok, i, 0)` makes the
// offsets look non-contiguous to Triton's alignment analysis, which then issues one 4-byte load
// per element.  Window masks are dropped where the bounds are proven (a conv with no padding
// never leaves its input).  A contiguous conv weight is read as the (C_out, C_in / groups * k)
// matrix it is (ContractionSpec::b_flat): `co * K + k` along a unit-stride K, which Triton can
// load 16 bytes at a time when K % 4 == 0 (K = 576 for 64 channels of 3x3), instead of the
// (ci, kh, kw) decomposition through runtime strides, one 4-byte load per element.  Compiled
// for sm_90 on the CPU (Triton 3.6 make_ttgir, 16-byte-aligned pointers, conv2d 64 -> 128
// channels 3x3 on 32x32): the flat weight tile becomes cp.async copies of contiguity 4 (16
// bytes), the strided one contiguity 1; the input tile stays at 1 (its m = (n, oh, ow) is cut
// by // and %).  Hence channels-last copies (heuristics.h, ConvChannelsLast): where the
// input channels per group are a multiple of 4, the wrapper copies input and weight with the
// channel dim unit-stride (EmitChannelsLast), K is ordered (kernel offsets, input channel), and
// the kernel reads the copies at literal strides.  Compiled the same way (conv2d 8 -> 16
// channels 3x3, padding 1; conv_transpose2d 32 -> 64, stride 2), both operand tiles become
// cp.async copies of contiguity 4, the input's along K and a transposed weight's along N.
#include <algorithm>
#include <cassert>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "codegen/contraction_spec.h"
#include "codegen/sizes.h"
#include "util/int_math.h"

namespace drtriton::codegen {

Coords Concat(Coords a, const Coords& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string Sum(const std::vector<std::string>& terms) {
  std::vector<std::string> kept;
  for (const auto& t : terms)
    if (t != "0") kept.push_back(t);
  return kept.empty() ? "0" : Join(kept, " + ");
}

std::string Scaled(const std::string& c, int64_t k) {
  if (c == "0" || k == 0) return "0";
  return k == 1 ? c : c + " * " + IntLiteral(k);
}

std::string ScaledBy(const std::string& c, const std::string& dim) {
  if (c == "0" || dim == "0") return "0";
  return dim == "1" ? c : c + " * " + Atom(dim);
}

namespace {

// `a - b` ("a" when b is "0").
std::string Minus(const std::string& a, const std::string& b) {
  return b == "0" ? a : a + " - " + b;
}

// A channel count divided by the group count: the literal `value`, or "(x1_s0 // 2)".
std::string PerGroup(const std::string& dim, int64_t value, int64_t groups) {
  if (groups == 1) return dim;
  if (IsLiteral(dim)) return IntLiteral(value);
  return "(" + dim + " // " + IntLiteral(groups) + ")";
}

// x with (a * x) % m == 1 % m, for coprime a and m (m = 1 gives 0).
int64_t InverseMod(int64_t a, int64_t m) {
  for (int64_t x = 0; x < m; ++x)
    if ((a * x) % m == 1 % m) return x;
  assert(false && "a and m are coprime");
  return 0;
}

// One spatial dim of a transposed convolution, by output phase p = o % stride (see the top).
struct TransposedDim {
  int64_t stride, pad, dil;
  int64_t g, step, rate, inv;  // gcd(stride, dil), stride / g, dil / g, rate^-1 mod step

  TransposedDim(int64_t s, int64_t p, int64_t d) : stride(s), pad(p), dil(d) {
    g = std::gcd(s, d);
    step = s / g;
    rate = d / g;
    inv = InverseMod(rate, step);
  }
  // Some kernel offset reaches phase p: (p + pad - k * dil) % s == 0 needs g | p + pad.
  bool Reached(int64_t p) const { return (p + pad) % g == 0; }
  int64_t FirstK(int64_t p) const { return (p + pad) / g * inv % step; }
  int64_t Shift(int64_t p) const { return (p + pad - FirstK(p) * dil) / stride; }
  int64_t Taps(int64_t p, int64_t ks) const {
    return Reached(p) ? (ks - FirstK(p) + step - 1) / step : 0;
  }
  int64_t Outs(int64_t p, int64_t out) const { return (out + stride - 1 - p) / stride; }
};

// The kernel offsets t in [first, first + count) of a transposed convolution's dim that reach
// its input for some output: i = j + c - t * rate with j < outs, t < taps, 0 <= i < in.  A
// kernel wider than the input leaves the others multiplying only masked zeros: paper-preset
// program 98's conv_transpose3d (a 3-tap kernel, stride and dilation 2, over an input 1 wide)
// reaches it with 1 of 3 taps, and its K loop ran 46,575 long for 15,525 products that count.
struct TapRange {
  int64_t first = 0, count = 0;
};

TapRange ReachingTaps(int64_t taps, int64_t outs, int64_t c, int64_t rate, int64_t in) {
  if (taps == 0 || outs == 0) return {0, taps};  // nothing to trim, or nothing launched
  const int64_t first = std::max<int64_t>(0, -FloorDiv(in - 1 - c, rate));  // ceil((c-in+1)/r)
  const int64_t last = std::min(taps - 1, FloorDiv(outs - 1 + c, rate));
  return {first, std::max<int64_t>(0, last - first + 1)};
}

// The sides of the window test 0 <= i < IN that can fail (literal sizes bound i; with runtime
// sizes both are tested).
struct WindowMask {
  bool low = true, high = true;
  std::string Text(const std::string& i, const std::string& in) const {
    std::vector<std::string> parts;
    if (low) parts.push_back("(" + i + " >= 0)");
    if (high) parts.push_back("(" + i + " < " + in + ")");
    return Join(parts, " & ");
  }
};

struct ConvGeometry {
  size_t nsp = 0, lead = 0;
  bool batched = false;
  std::vector<int64_t> stride, pad, dil;
  int64_t groups = 1, cin_g = 1, cout_g = 1;
  Shape in_sp, out_sp, k_sp;
  Dims in_sp_d, out_sp_d, k_sp_d;
  std::string cin_g_dim, cout_g_dim;
};

Shape Tail(const Shape& s, size_t n) {
  return Shape(s.end() - static_cast<std::ptrdiff_t>(n), s.end());
}
Dims Tail(const Dims& s, size_t n) {
  return Dims(s.end() - static_cast<std::ptrdiff_t>(n), s.end());
}

ConvGeometry GeometryOf(const GroupContext& ctx, const Node& node, bool transpose) {
  const Program& p = ctx.program;
  ConvGeometry g;
  g.nsp = static_cast<size_t>(GetOp(node.op).spatial_dims);
  const Shape in = p.value(node.tensors[0]).shape, wt = p.value(node.tensors[1]).shape;
  const Shape out = p.value(node.result).shape;
  g.batched = in.size() == g.nsp + 2;
  g.lead = g.batched ? 1 : 0;
  g.stride = node.attrs[0].AsInts(g.nsp);
  g.pad = node.attrs[1].AsInts(g.nsp);
  g.dil = node.attrs[transpose ? 4 : 2].AsInts(g.nsp);
  g.groups = node.attrs[3].i;
  g.cin_g = in[g.lead] / g.groups;
  g.cout_g = out[g.lead] / g.groups;
  g.in_sp = Tail(in, g.nsp);
  g.out_sp = Tail(out, g.nsp);
  g.k_sp = Tail(wt, g.nsp);
  // The same as text.  Weights are (C_out, C_in / groups, *k) for conv and
  // (C_in, C_out / groups, *k) for conv_transpose.
  const Dims in_d = ctx.DimsOf(node.tensors[0]), wt_d = ctx.DimsOf(node.tensors[1]);
  const Dims out_d = ctx.DimsOf(node.result);
  g.cin_g_dim = transpose ? PerGroup(in_d[g.lead], g.cin_g, g.groups) : wt_d[1];
  g.cout_g_dim = transpose ? wt_d[1] : PerGroup(wt_d[0], g.cout_g, g.groups);
  g.in_sp_d = Tail(in_d, g.nsp);
  g.out_sp_d = Tail(out_d, g.nsp);
  g.k_sp_d = Tail(wt_d, g.nsp);
  return g;
}

// A direct convolution's offsets k that reach its input from some output:
// i = o * stride - pad + k * dil with o < outs (the range between the extremes).
TapRange DirectReachingTaps(int64_t taps, int64_t outs, int64_t stride, int64_t pad,
                            int64_t dil, int64_t in) {
  const int64_t first = std::max<int64_t>(0, -FloorDiv((outs - 1) * stride - pad, dil));
  const int64_t last = std::min(taps - 1, FloorDiv(in - 1 + pad, dil));
  return {first, std::max<int64_t>(0, last - first + 1)};
}

// Per spatial dim of a convolution with literal sizes: the offsets that reach its input, per
// phase of a transposed one (one range at stride 1 and for a direct one), where some do not;
// empty where all do, and where none does in any phase (the loop then stays as it was, its
// products all masked: an output of bias alone).
std::vector<std::vector<TapRange>> TrimmedTaps(const ConvGeometry& g,
                                               const std::vector<TransposedDim>& tds,
                                               bool transpose) {
  std::vector<std::vector<TapRange>> trims(g.nsp);
  for (size_t d = 0; d < g.nsp; ++d) {
    const TransposedDim& td = tds[d];
    const bool phased = transpose && td.stride > 1;
    std::vector<TapRange> ranges;
    bool trimmed = false, some = false;
    for (int64_t p = 0; p < (phased ? td.stride : 1); ++p) {
      const int64_t taps = phased ? td.Taps(p, g.k_sp[d]) : g.k_sp[d];
      const int64_t outs = phased ? td.Outs(p, g.out_sp[d]) : g.out_sp[d];
      if (!transpose)
        ranges.push_back(DirectReachingTaps(taps, outs, g.stride[d], g.pad[d], g.dil[d],
                                            g.in_sp[d]));
      else
        ranges.push_back(ReachingTaps(taps, outs, phased ? td.Shift(p) : g.pad[d],
                                      phased ? td.rate : g.dil[d], g.in_sp[d]));
      trimmed |= ranges.back().first != 0 || ranges.back().count != taps;
      some |= ranges.back().count > 0;
    }
    if (trimmed && some) trims[d] = ranges;
  }
  return trims;
}

// conv: i = o * stride - pad + k * dil lies in [-pad, (OUT - 1) * stride - pad + (KS - 1) * dil]
// and torch's OUT puts the top at most at IN - 1 + pad: without padding no test is needed.
WindowMask ConvWindow(const ConvGeometry& g, size_t d, bool literal) {
  WindowMask m;
  m.low = g.pad[d] > 0;
  const int64_t top = (g.out_sp[d] - 1) * g.stride[d] - g.pad[d] + (g.k_sp[d] - 1) * g.dil[d];
  m.high = g.pad[d] > 0 && !(literal && top <= g.in_sp[d] - 1);
  return m;
}

// conv_transpose, phase by phase: i = j + shift - t * rate with j < outs and t < taps.
WindowMask TransposedWindow(const ConvGeometry& g, size_t d, const TransposedDim& td,
                            bool literal) {
  WindowMask m;
  if (!literal) return m;
  m.low = m.high = false;
  for (int64_t p = 0; p < td.stride; ++p) {
    const int64_t taps = td.Taps(p, g.k_sp[d]), outs = td.Outs(p, g.out_sp[d]);
    if (taps == 0 || outs == 0) continue;
    m.low |= td.Shift(p) - (taps - 1) * td.rate < 0;
    m.high |= outs - 1 + td.Shift(p) > g.in_sp[d] - 1;
  }
  return m;
}

// The kernel's constants of phase PHASE along dim d (stride > 1), as in TransposedDim.
// `inner` is the product of the later dims' strides.  Lengths that depend on runtime sizes
// (generic mode) are plain variables; everything else folds at compile time.
void WritePhaseLines(PythonWriter& w, KernelParams& params, const ConvGeometry& g, size_t d,
                     const TransposedDim& td, int64_t inner, const std::vector<TapRange>& taps_of) {
  const std::string x = std::to_string(d), ph = "phase" + x, fk = "first_k" + x;
  auto constant = [&](const std::string& name, const std::string& value) {
    const bool folds = SizeNamesIn(value).empty();
    w.Line(name + (folds ? ": tl.constexpr = " : " = ") + params.Sizes(value));
  };
  std::string phase = "PHASE";
  if (inner > 1) phase = "(PHASE // " + IntLiteral(inner) + ")";
  constant(ph, phase + " % " + IntLiteral(td.stride));
  const std::string reach = Sum({ph, IntLiteral(td.pad)});
  if (td.step > 1) {  // k * rate == (p + pad) / g (mod step)
    std::string base = td.g > 1 ? "(" + reach + ") // " + IntLiteral(td.g) : Atom(reach);
    if (td.inv != 1) base = base + " * " + IntLiteral(td.inv);
    constant(fk, base + " % " + IntLiteral(td.step));
  }
  const std::string first_k = td.step > 1 ? fk : "0";
  constant("shift" + x,
           Atom(Minus(reach, Scaled(first_k, td.dil))) + " // " + IntLiteral(td.stride));
  const std::string ks = g.k_sp_d[d];
  std::string taps = ks;  // offsets first_k + t * step below ks
  if (td.step > 1)
    taps =
        "(" + Minus(ks, first_k) + " + " + IntLiteral(td.step - 1) + ") // " + IntLiteral(td.step);
  if (td.g > 1)  // no kernel offset reaches phases with (p + pad) % g != 0: bias alone
    taps = taps + " if " + Atom(reach) + " % " + IntLiteral(td.g) + " == 0 else 0";
  if (!taps_of.empty()) {  // trimmed to the offsets that reach the input (ReachingTaps)
    std::string first = IntLiteral(taps_of.back().first);
    taps = IntLiteral(taps_of.back().count);
    for (size_t p = taps_of.size() - 1; p-- > 0;) {
      const std::string is_p = " if " + ph + " == " + IntLiteral(int64_t(p)) + " else ";
      first = IntLiteral(taps_of[p].first) + is_p + first;
      taps = IntLiteral(taps_of[p].count) + is_p + taps;
    }
    constant("tap0" + x, first);
  }
  constant("taps" + x, taps);
  const std::string out = g.out_sp_d[d];
  const std::string top = IsLiteral(out) ? IntLiteral(std::stoll(out) + td.stride - 1)
                                         : Atom(out) + " + " + IntLiteral(td.stride - 1);
  constant("outs" + x, "(" + top + " - " + ph + ") // " + IntLiteral(td.stride));
}

// The wrapper's M of one phase: samples times the phase's output positions ("" when none).
std::string PhaseM(const ConvGeometry& g, const std::vector<TransposedDim>& tds, bool literal,
                   const Dims& batch_dim, int64_t phase) {
  Dims m = batch_dim;
  for (size_t d = g.nsp; d-- > 0;) {
    const int64_t p = phase % tds[d].stride, s = tds[d].stride;
    phase /= s;
    const std::string out = g.out_sp_d[d];
    if (literal) {
      const int64_t outs = tds[d].Outs(p, g.out_sp[d]);
      if (outs == 0) return "";
      m.insert(m.begin() + static_cast<std::ptrdiff_t>(batch_dim.size()), IntLiteral(outs));
    } else {
      const std::string e =
          s == 1 ? out : "((" + out + " + " + IntLiteral(s - 1 - p) + ") // " + IntLiteral(s) + ")";
      m.insert(m.begin() + static_cast<std::ptrdiff_t>(batch_dim.size()), e);
    }
  }
  return DimProduct(m);
}

// The channels per group of the channels-last copies of the operands (heuristics.h), 0 for
// NCHW: both are tensors (an inlined producer has no memory to copy) and the sizes are
// literals.  Zero channels are added only to a direct convolution of one group, whose padded
// channel dim is the input's and the weight's dim 1 alike.
int64_t ChannelsLastOf(const GroupContext& ctx, const Node& node, const ConvGeometry& g,
                       bool window_sum, bool transpose) {
  const auto& stored = ctx.plan.materialized;
  if (ctx.generic() || !stored[node.tensors[0].index] || !stored[node.tensors[1].index]) return 0;
  const int64_t window = Product(g.k_sp);
  return ConvChannelsLast(g.cin_g, window, window_sum, !transpose && g.groups == 1, ctx.variant);
}

// The copy padding of a transposed convolution's dim for the shifted-rows form: below, the
// most any phase's tap reaches before input 0 ((taps - 1) * rate - shift); above, the most
// any phase's last output reads past the input's end.
std::pair<int64_t, int64_t> TransposedPadding(const TransposedDim& td, int64_t ks, int64_t out,
                                              int64_t in) {
  int64_t low = 0, high = 0;
  for (int64_t p = 0; p < td.stride; ++p) {
    const int64_t taps = td.Taps(p, ks), outs = td.Outs(p, out);
    if (taps == 0 || outs == 0) continue;
    low = std::max(low, (taps - 1) * td.rate - td.Shift(p));
    high = std::max(high, outs - 1 + td.Shift(p) - (in - 1));
  }
  return {low, high};
}

// The phases of a transposed convolution in the shifted-rows form, the last dim's fastest (as
// PhaseM counts them); those without an output position are left out.
std::vector<ShiftedPhase> TransposedPhases(const ConvGeometry& g,
                                           const std::vector<TransposedDim>& tds,
                                           const std::vector<int64_t>& low) {
  int64_t count = 1;
  for (const TransposedDim& td : tds) count *= td.stride;
  std::vector<ShiftedPhase> phases;
  for (int64_t index = 0; index < count; ++index) {
    ShiftedPhase ph;
    int64_t rest = index;
    for (size_t d = g.nsp; d-- > 0;) {
      const TransposedDim& td = tds[d];
      const int64_t p = rest % td.stride;
      rest /= td.stride;
      ph.phase.insert(ph.phase.begin(), p);
      ph.taps.insert(ph.taps.begin(), td.Taps(p, g.k_sp[d]));
      ph.first.insert(ph.first.begin(), td.Reached(p) ? td.FirstK(p) : 0);
      ph.base.insert(ph.base.begin(), td.Shift(p) + low[d]);
      ph.outs.insert(ph.outs.begin(), td.Outs(p, g.out_sp[d]));
    }
    if (std::find(ph.outs.begin(), ph.outs.end(), 0) == ph.outs.end()) phases.push_back(ph);
  }
  return phases;
}

// The shifted-rows form (contraction_spec.h) of a convolution read from channels-last copies
// of `channels` input channels, where it applies: one group, a direct convolution (folded by
// its strides) or a transposed one.  Rows of a multiple of 8 channels keep the copies'
// strides whole 16-byte multiples for bf16 and fp16 (a tensor descriptor's rule): the
// input's, and a transposed weight copy's output channels.
std::optional<ShiftedRows> ShiftedRowsOf(const GroupContext& ctx, const Node& node,
                                         const ConvGeometry& g,
                                         const std::vector<TransposedDim>& tds, int64_t channels,
                                         bool transpose) {
  if (ctx.generic() || g.groups != 1 || channels == 0 || channels % 8 != 0) return std::nullopt;
  if (transpose && g.cout_g % 8 != 0) return std::nullopt;
  ShiftedRows r;
  r.input = node.tensors[0];
  r.weight = node.tensors[1];
  r.batched = g.batched;
  r.transposed = transpose;
  r.samples = g.batched ? ctx.program.value(node.tensors[0]).shape[0] : 1;
  r.channels = channels;
  r.k_sp = g.k_sp;
  ShiftedPhase direct;
  for (size_t d = 0; d < g.nsp; ++d) {
    int64_t low = g.pad[d], high = g.pad[d];
    const int64_t s = transpose ? 1 : g.stride[d];  // a direct convolution's fold
    if (transpose) {
      std::tie(low, high) = TransposedPadding(tds[d], g.k_sp[d], g.out_sp[d], g.in_sp[d]);
      r.step.push_back(tds[d].step);
      r.delta.push_back(-tds[d].rate);
      r.stride.push_back(tds[d].stride);
    } else {
      high += (s - (g.in_sp[d] + low + high) % s) % s;  // whole residues: fold's grid
      r.step.push_back(1);
      r.delta.push_back(g.dil[d]);
      r.stride.push_back(1);
      r.fold.push_back(s);
      direct.phase.push_back(0);
      direct.taps.push_back(g.k_sp[d]);
      direct.first.push_back(0);
      direct.base.push_back(0);
      direct.outs.push_back(g.out_sp[d]);
    }
    r.pad_low.push_back(low);
    r.pad_high.push_back(high);
    r.grid_sp.push_back((g.in_sp[d] + low + high) / s);
  }
  const auto one = [](int64_t s) { return s == 1; };
  if (std::all_of(r.fold.begin(), r.fold.end(), one)) r.fold.clear();
  r.phases = transpose ? TransposedPhases(g, tds, r.pad_low) : std::vector<ShiftedPhase>{direct};
  const auto zero = [](int64_t p) { return p == 0; };
  if (r.fold.empty() && std::all_of(r.pad_low.begin(), r.pad_low.end(), zero) &&
      std::all_of(r.pad_high.begin(), r.pad_high.end(), zero)) {
    r.pad_low.clear();
    r.pad_high.clear();
  }
  if (r.phases.empty()) return std::nullopt;
  return r;
}

}  // namespace

int64_t ShiftedRows::positions() const { return Product(grid_sp); }

int64_t ShiftedRows::rows() const { return positions() * Product(fold); }

int64_t ShiftedRows::reach(const ShiftedPhase& phase) const {
  int64_t last = 0;
  for (size_t d = 0; d < grid_sp.size(); ++d) last = last * grid_sp[d] + (phase.outs[d] - 1);
  return last + 1;
}

ContractionSpec ConvSpec(const GroupContext& ctx, const Node& node, bool transpose) {
  const ConvGeometry g = GeometryOf(ctx, node, transpose);
  const Dims in_d = ctx.DimsOf(node.tensors[0]);
  const bool literal = !ctx.generic();
  const size_t nsp = g.nsp, lead = g.lead;
  std::vector<TransposedDim> tds;
  for (size_t d = 0; d < nsp; ++d) tds.emplace_back(g.stride[d], g.pad[d], g.dil[d]);
  const bool phased =
      transpose && std::any_of(g.stride.begin(), g.stride.end(), [](int64_t s) { return s > 1; });
  std::vector<WindowMask> window;
  for (size_t d = 0; d < nsp; ++d)
    window.push_back(transpose ? TransposedWindow(g, d, tds[d], literal)
                               : ConvWindow(g, d, literal));

  const std::vector<std::vector<TapRange>> trims =
      literal ? TrimmedTaps(g, tds, transpose) : std::vector<std::vector<TapRange>>(nsp);
  const bool trimmed = std::any_of(trims.begin(), trims.end(), [](const auto& t) {
    return !t.empty();
  });
  // The offset t of a K coordinate `kk` along dim d: kk, or kk + the trimmed range's first.
  const auto tap = [=](size_t d, const std::string& kk) {
    if (trims[d].empty()) return kk;
    const std::string first = transpose && g.stride[d] > 1 ? "tap0" + std::to_string(d)
                                                           : IntLiteral(trims[d][0].first);
    return Atom(Sum({kk, first}));
  };

  ContractionSpec s;
  // One input channel per group (depthwise, with any channel multiplier): K is the window
  // alone (9 for 3x3) and N the multiplier (usually 1), so tl.dot's 16 x 16 minimum would
  // multiply 16 * 16 / (9 * 1) = 28x the products that count.
  s.window_sum = IsWindowSum(ctx.program, node);
  // K is (input channel, kernel offsets) for NCHW operands and (kernel offsets, input
  // channel) for channels-last copies, whose channels are then the K tile's unit stride.
  const int64_t cl_channels = ChannelsLastOf(ctx, node, g, s.window_sum, transpose);
  const bool cl = cl_channels > 0;
  // The K length of the input channels: with zero channels added, the copies' (no mask: the
  // copies hold zeros there).
  const int64_t cin_k = cl ? cl_channels : g.cin_g;
  const std::string cin_k_dim = cin_k == g.cin_g ? g.cin_g_dim : IntLiteral(cin_k);
  const size_t chan_k = cl ? nsp : 0;
  const auto sp_k = [cl](size_t d) { return cl ? d : 1 + d; };
  if (g.groups > 1) s.batch_shape = {g.groups};
  if (g.batched) s.m_shape = {ctx.program.value(node.tensors[0]).shape[0]};
  if (g.groups > 1) s.batch_dims = {IntLiteral(g.groups)};
  if (g.batched) s.m_dims = {in_d[0]};
  // Per spatial dim: M and K lengths (the longest phase's for the heuristics) and names.
  int64_t inner = 1;
  std::vector<int64_t> inner_of(nsp, 1);
  for (size_t d = nsp; d-- > 0;) {
    inner_of[d] = inner;
    if (transpose) inner *= g.stride[d];
  }
  for (size_t d = 0; d < nsp; ++d) {
    const bool ph = transpose && g.stride[d] > 1;
    const TransposedDim& td = tds[d];
    int64_t k_len = ph ? CeilDiv(g.k_sp[d], td.step) : g.k_sp[d];
    std::string k_dim = ph ? "taps" + std::to_string(d) : g.k_sp_d[d];
    if (!trims[d].empty()) {
      k_len = 0;
      for (const TapRange& r : trims[d]) k_len = std::max(k_len, r.count);
      if (!ph) k_dim = IntLiteral(k_len);
    }
    s.m_shape.push_back(ph ? td.Outs(0, g.out_sp[d]) : g.out_sp[d]);
    s.k_shape.push_back(k_len);
    s.m_dims.push_back(ph ? "outs" + std::to_string(d) : g.out_sp_d[d]);
    s.k_dims.push_back(k_dim);
  }
  s.k_shape.insert(s.k_shape.begin() + static_cast<std::ptrdiff_t>(chan_k), cin_k);
  s.k_dims.insert(s.k_dims.begin() + static_cast<std::ptrdiff_t>(chan_k), cin_k_dim);
  s.n = g.cout_g;
  s.n_dim = g.cout_g_dim;
  s.operand_dims = g.in_sp_d;
  s.a = node.tensors[0];
  s.b = node.tensors[1];
  s.bias = node.tensors[2];
  // The channel dims: the input's after its batch dim; dim 1 of both weights, (C_out,
  // C_in / groups, *k) and (C_in, C_out / groups, *k): the conv's becomes the (C_out, K)
  // matrix below, the conv_transpose's a B unit-stride along N.
  // The conv's weight channels are its input channels (padded alike); the conv_transpose's are
  // its output channels per group (never padded).
  // The input's channel dim holds every group's (padded only with one group).
  const int64_t in_channels = cin_k == g.cin_g ? g.cin_g * g.groups : cin_k;
  if (cl)
    s.channels_last = {{s.a, lead, in_channels, {}, {}, {}},
                       {s.b, 1, transpose ? g.cout_g : cin_k, {}, {}, {}}};
  if (cl) s.shifted_rows = ShiftedRowsOf(ctx, node, g, tds, cin_k, transpose);
  if (phased) {
    s.phases = inner;
    s.phase_lines = [=](PythonWriter& w, KernelParams& params) {
      for (size_t d = 0; d < nsp; ++d)
        if (g.stride[d] > 1) WritePhaseLines(w, params, g, d, tds[d], inner_of[d], trims[d]);
    };
    const Dims batch = g.batched ? Dims{in_d[0]} : Dims{};
    s.phase_m = [=](int64_t phase) { return PhaseM(g, tds, literal, batch, phase); };
  }

  const int64_t groups = g.groups;
  auto group = [groups](const Coords& bc) { return groups > 1 ? bc[0] : std::string("0"); };
  s.a_at = [=](PythonWriter& w, const Coords& bc, const Coords& mc, const Coords& kc) {
    Operand o;
    if (g.batched) o.coords.push_back(mc[0]);
    const std::string kci = kc[chan_k];
    const std::string chan = Sum({ScaledBy(group(bc), g.cin_g_dim), kci});
    if (chan != "0" && chan != kci) w.Line("ci = " + chan);
    o.coords.push_back(chan != "0" && chan != kci ? "ci" : chan);
    std::vector<std::string> valid;
    for (size_t d = 0; d < nsp; ++d) {
      const std::string oc = mc[lead + d], kk = kc[sp_k(d)], x = std::to_string(d);
      const std::string i = "sp" + x;
      const TransposedDim& td = tds[d];
      if (!transpose)  // i = o * stride - pad + k * dilation
        w.Line(i + " = " + Minus(Sum({Scaled(oc, g.stride[d]), Scaled(tap(d, kk), g.dil[d])}),
                                 IntLiteral(g.pad[d])));
      else if (g.stride[d] == 1)  // o = i - pad + k * dilation
        w.Line(i + " = " + Minus(Sum({oc, IntLiteral(g.pad[d])}), Scaled(tap(d, kk), g.dil[d])));
      else  // phase j, tap t: i = j + shift - t * rate
        w.Line(i + " = " + Minus(Sum({oc, "shift" + x}), Scaled(tap(d, kk), td.rate)));
      const std::string ok = window[d].Text(i, g.in_sp_d[d]);
      if (!ok.empty()) {
        w.Line("ok" + x + " = " + ok);
        valid.push_back("ok" + x);
      }
      o.coords.push_back(i);
    }
    o.mask = Join(valid, " & ");
    return o;
  };
  s.b_at = [=](PythonWriter&, const Coords& bc, const Coords& kc, const std::string& n) {
    Operand o;
    const std::string gr = group(bc);
    if (!transpose)
      o.coords = {Sum({ScaledBy(gr, g.cout_g_dim), n}), kc[chan_k]};
    else
      o.coords = {Sum({ScaledBy(gr, g.cin_g_dim), kc[chan_k]}), n};
    for (size_t d = 0; d < nsp; ++d) {
      const bool ph = transpose && g.stride[d] > 1;
      const std::string first_k = tds[d].step > 1 ? "first_k" + std::to_string(d) : "0";
      const std::string kk = kc[sp_k(d)];
      o.coords.push_back(ph ? Sum({first_k, Scaled(tap(d, kk), tds[d].step)}) : tap(d, kk));
    }
    return o;
  };
  // (C_out, C_in / groups, *k) contiguous, or its channels-last copy (C_out, *k, C_in / groups)
  // with K in the same order: row co, column k.
  if (!transpose && !trimmed) {  // trimmed offsets are not the weight's whole rows
    const std::string k_len = DimProduct(s.k_dims);
    s.b_flat = [=](const Coords& bc, const std::string& k, const std::string& n) {
      const std::string row = Sum({ScaledBy(group(bc), g.cout_g_dim), n});
      return ScaledBy(Atom(row), k_len) + " + " + k;
    };
  }
  s.channel = [=](const Coords& bc, const std::string& n) {
    return Sum({ScaledBy(group(bc), g.cout_g_dim), n});
  };
  s.out_at = [=](const Coords& bc, const Coords& mc, const std::string& n) {
    Coords c;
    if (g.batched) c.push_back(mc[0]);
    c.push_back(Sum({ScaledBy(group(bc), g.cout_g_dim), n}));
    for (size_t d = 0; d < nsp; ++d) {
      const std::string j = mc[lead + d];
      const bool ph = transpose && g.stride[d] > 1;
      c.push_back(ph ? Sum({"phase" + std::to_string(d), Scaled(j, g.stride[d])}) : j);
    }
    return c;
  };
  return s;
}

}  // namespace drtriton::codegen

// Strip kernels for max and average pooling of literal sizes.  A thread owns a strip of VEC
// consecutive outputs along the last (unit-stride) dim and reads, for each tap of the other
// spatial dims (a "row tap"), the 16-byte-aligned chunks of VEC inputs that cover the strip's
// windows; it splits each chunk into columns in registers (tl.reshape + tl.split, no shared
// memory) and combines the last dim's taps from those columns.  The loads are whole vectors
// because a chunk starts at strip * VEC * stride + c * VEC, a multiple of VEC, with one mask
// per chunk: a tap's own offset (-pad + k * dil, -4 + 3k for KernelBench L1 41) is applied
// to registers, never to an address.
//
// Why (sm_90 builds of the window kernel, emit_pool.cc, on the H200, 2026-12-03): one lane
// per output and tap, 4-byte loads of clamped indices; L1 41 (max_pool1d k=8 s=1 p=4 d=3)
// compiled to 16 scalar loads and 269 PTX instructions per thread for 2 outputs (134 an output,
// 3.4e9 warp instructions, about 3.2 ms of issue on 132 SMs) and ran 4.66 ms; L1 46
// (avg_pool3d k=3 s=2 p=1) 431 instructions for half an output and 11.6 ms.  Strips of 4 fp32
// load 7 16-byte chunks for L1 41's 4 outputs (1.75 loads and about 32 SASS instructions an
// output), and 27 chunks for L1 46's (9 row taps x 3 chunks).  H200, 2026-12-03, the emitted
// candidates timed with CUDA events after an L2 flush (trimmed mean of 10, not the verifier's
// harness), window kernel -> strips: L1 41 4.71 -> 1.66 ms (3.88 TB/s, torch.compile 2.72),
// L1 44 2.70 -> 1.04 ms (4.12 TB/s, compile 1.90), L1 46 11.8 -> 2.82 ms (3.43 TB/s, compile
// 8.51), L1 43 6.31 -> 1.41 ms (compile 12.1); copy bandwidth 4.26 TB/s.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/expr.h"
#include "codegen/heuristics.h"
#include "codegen/pool_spec.h"
#include "util/int_math.h"

namespace drtriton::codegen {
namespace {

using Coords = std::vector<std::string>;

// Unrolled work per strip: above these the window kernel (one loop over the taps) is used.
// L1 43 (max_pool3d k=3 d=3): 9 row taps x 4 chunks = 36 loads, 108 combines.
constexpr int64_t kMaxChunkLoads = 96;
constexpr int64_t kMaxCombines = 1024;

// The kernel's last dim, where strips run: sizes, the window, and the chunk range.
struct StripDim {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, pad = 0, dil = 1;
  // Outputs per strip, inputs per chunk: 16 bytes of float32, the contract's dtype (program
  // values are float32; the half modes run the same kernel on 2-byte inputs, 8-byte loads).
  int64_t vec = 4;
  int64_t lo = 0;       // first chunk, relative to the strip's first input (in chunks)
  int64_t chunks = 1;   // chunks per row tap
  int64_t strips = 1;   // strips per output row: ceil(out / vec)

  // The column (input element, from chunk lo's first) of output lane i's tap k.
  int64_t Column(int64_t i, int64_t k) const { return i * stride - pad + k * dil - lo * vec; }
};

StripDim LastDim(const PoolSpec& s) {
  const size_t l = s.nsp - 1;
  StripDim d;
  d.in = s.in_sp[l];
  d.out = s.out_sp[l];
  d.kernel = s.kernel[l];
  d.stride = s.stride[l];
  d.pad = s.pad[l];
  d.dil = s.dil[l];
  d.vec = std::min<int64_t>(4, NextPow2(d.out));
  // Lane i's taps read inputs strip_start + i * stride - pad + k * dil.
  d.lo = FloorDiv(-d.pad, d.vec);
  const int64_t last = (d.vec - 1) * d.stride - d.pad + (d.kernel - 1) * d.dil;
  d.chunks = FloorDiv(last, d.vec) - d.lo + 1;
  d.strips = CeilDiv(d.out, d.vec);
  return d;
}

int64_t RowTaps(const PoolSpec& s) { return Product(s.kernel, 0, s.nsp - 1); }

// A tap of spatial dim d whose input index may leave [0, in) for some output: its validity
// is a mask term (else the term is dropped).
bool TapCanLeave(const PoolSpec& s, size_t d, int64_t k) {
  const int64_t first = -s.pad[d] + k * s.dil[d];
  const int64_t last = (s.out_sp[d] - 1) * s.stride[d] + first;
  return first < 0 || last >= s.in_sp[d];
}

// Writes `names` (VEC [Q] columns, in order) from `chunk` ([Q, VEC]): reshape to
// [Q, VEC / 2, 2] and split into even and odd columns, recursively down to [Q, 2].
void SplitColumns(PythonWriter& w, const std::string& chunk, const std::vector<std::string>& names,
                  const std::string& q) {
  const size_t n = names.size();
  if (n == 1) {
    w.Line(names[0] + " = tl.reshape(" + chunk + ", [" + q + "])");
    return;
  }
  if (n == 2) {
    w.Line(names[0] + ", " + names[1] + " = tl.split(" + chunk + ")");
    return;
  }
  const std::string even = chunk + "e", odd = chunk + "o";
  w.Line(even + ", " + odd + " = tl.split(tl.reshape(" + chunk + ", [" + q + ", " +
         std::to_string(n / 2) + ", 2]))");
  std::vector<std::string> evens, odds;
  for (size_t i = 0; i < n; ++i) (i % 2 ? odds : evens).push_back(names[i]);
  SplitColumns(w, even, evens, q);
  SplitColumns(w, odd, odds, q);
}

// The inverse: `cols` ([Q] each, in order) joined into a [Q, VEC] tensor named `out`.
std::string JoinColumns(PythonWriter& w, const std::vector<std::string>& cols,
                        const std::string& out, const std::string& q) {
  const size_t n = cols.size();
  if (n == 1) {
    w.Line(out + " = tl.reshape(" + cols[0] + ", [" + q + ", 1])");
    return out;
  }
  if (n == 2) {
    w.Line(out + " = tl.join(" + cols[0] + ", " + cols[1] + ")");
    return out;
  }
  std::vector<std::string> evens, odds;
  for (size_t i = 0; i < n; ++i) (i % 2 ? odds : evens).push_back(cols[i]);
  const std::string e = JoinColumns(w, evens, out + "e", q), o = JoinColumns(w, odds, out + "o", q);
  w.Line(out + " = tl.reshape(tl.join(" + e + ", " + o + "), [" + q + ", " + std::to_string(n) +
         "])");
  return out;
}

// Every tuple of the row taps (kernel offsets of spatial dims 0 .. nsp - 2), row-major.
std::vector<std::vector<int64_t>> RowTapList(const PoolSpec& s) {
  std::vector<std::vector<int64_t>> taps(1);
  for (size_t d = 0; d + 1 < s.nsp; ++d) {
    std::vector<std::vector<int64_t>> next;
    for (const auto& t : taps)
      for (int64_t k = 0; k < s.kernel[d]; ++k) {
        next.push_back(t);
        next.back().push_back(k);
      }
    taps = std::move(next);
  }
  return taps;
}

std::string Scaled(const std::string& c, int64_t k, int64_t offset) {
  std::string e = k == 1 ? c : c + " * " + IntLiteral(k);
  if (offset > 0) e += " + " + IntLiteral(offset);
  if (offset < 0) e += " - " + IntLiteral(-offset);
  return e;
}

// The average's divisor along one dim (AvgDivisorTerm); "" when it is the kernel size for
// every output (count_include_pad and no window reaches past in + pad).
std::string DivisorFactor(const GroupContext& ctx, const PoolSpec& s, size_t d,
                          const std::string& start) {
  const bool clipped = (s.out_sp[d] - 1) * s.stride[d] - s.pad[d] + s.kernel[d] >
                       s.in_sp[d] + s.pad[d];
  return s.count_include_pad && !clipped ? "" : AvgDivisorTerm(ctx, s, d, start);
}

// The program's rows and strips: `row` (a scalar when a program covers one row), `strip`
// ([Q, 1]) and `strip_mask`.
void EmitTile(PythonWriter& w, const StripConfig& c, const StripDim& last, int64_t rows,
              bool wide) {
  w.Line("pid = " + ProgramId(0, wide));
  if (c.block_r == 1) {
    w.Line("row = pid // ROW_BLOCKS");
    w.Line("strip = (pid % ROW_BLOCKS) * BLOCK_G + " +
           Arange("BLOCK_G", wide) + "[:, None]");
    w.Line("strip_mask = strip < " + IntLiteral(last.strips));
    return;
  }
  w.Line("q = " + Arange("BLOCK_R * BLOCK_G", wide) + "[:, None]");
  w.Line("row = pid * BLOCK_R + q // BLOCK_G");
  w.Line("strip = q % BLOCK_G");
  w.Line("strip_mask = (row < " + IntLiteral(rows) + ") & (strip < " + IntLiteral(last.strips) +
         ")");
}

// `cs<j> = first + c * VEC` for each chunk, and the mask term `cok<j>` of the chunks that can
// leave the input for a strip of the row (strips past it are masked by strip_mask).  Returns
// the terms ("" where none).
std::vector<std::string> EmitChunks(PythonWriter& w, const StripDim& d) {
  std::vector<std::string> oks;
  const int64_t last_strip_start = (d.strips - 1) * d.vec * d.stride;
  for (int64_t j = 0; j < d.chunks; ++j) {
    const int64_t c = d.lo + j, off = c * d.vec;
    const std::string cs = "cs" + std::to_string(j), ok = "cok" + std::to_string(j);
    w.Line(cs + " = " + Scaled("first", 1, off));
    std::vector<std::string> terms;
    if (off < 0) terms.push_back("(" + cs + " >= 0)");
    // A whole chunk is in or out where `in` is a multiple of VEC; otherwise lane by lane.
    if (last_strip_start + off + d.vec > d.in)
      terms.push_back(d.in % d.vec == 0 ? "(" + cs + " < " + IntLiteral(d.in) + ")"
                                        : "(" + cs + " + lanes < " + IntLiteral(d.in) + ")");
    if (!terms.empty()) w.Line(ok + " = " + Join(terms, " & "));
    oks.push_back(terms.empty() ? "" : ok);
  }
  return oks;
}

// The row taps' input indices `i<d>_<k>` and, where they can leave the input, `ok<d>_<k>`.
// Returns the mask term per (d, k) ("" where none).
std::vector<std::vector<std::string>> EmitRowTapIndices(PythonWriter& w, const PoolSpec& s) {
  std::vector<std::vector<std::string>> oks(s.nsp - 1);
  for (size_t d = 0; d + 1 < s.nsp; ++d)
    for (int64_t k = 0; k < s.kernel[d]; ++k) {
      const std::string tag = std::to_string(d) + "_" + std::to_string(k);
      w.Line("i" + tag + " = " + Scaled("start" + std::to_string(d), 1, k * s.dil[d]));
      if (!TapCanLeave(s, d, k)) {
        oks[d].push_back("");
        continue;
      }
      w.Line("ok" + tag + " = (i" + tag + " >= 0) & (i" + tag + " < " + IntLiteral(s.in_sp[d]) +
             ")");
      oks[d].push_back("ok" + tag);
    }
  return oks;
}

// The average's divisor for the [Q, VEC] outputs: the product of DivisorFactor over the dims,
// the dims whose factor is the kernel size for every output folded into one literal.
std::string EmitDivisor(PythonWriter& w, const GroupContext& ctx, const PoolSpec& s,
                        const StripDim& last) {
  const size_t l = s.nsp - 1;
  std::vector<std::string> factors;
  int64_t constant = 1;
  for (size_t d = 0; d <= l; ++d) {
    const std::string start = d == l ? "wstart" : "start" + std::to_string(d);
    const std::string f = DivisorFactor(ctx, s, d, start);
    if (f.empty()) {
      constant *= s.kernel[d];
      continue;
    }
    if (d == l) w.Line("wstart = " + Scaled("ow", last.stride, -last.pad));
    factors.push_back(f);
  }
  if (constant != 1 || factors.empty()) factors.push_back(IntLiteral(constant));
  return Join(factors, " * ");
}

// Chunk `j` of one row tap (input coordinates `coords` of the other dims) loaded under `mask`,
// its lanes outside the input set to `fill` (unless ""), split into columns col<j*VEC + i>.
void EmitChunkColumns(PythonWriter& w, ExprEmitter& e, ValueId input, Coords coords, int64_t j,
                      const StripDim& last, const std::string& mask, const std::string& fill) {
  coords.push_back("cs" + std::to_string(j) + " + lanes");
  std::string x = e.EmitMasked(input, coords, mask);
  if (!fill.empty()) {
    w.Line("win = tl.where(" + mask + ", " + x + ", " + fill + ")");
    x = "win";
  }
  std::vector<std::string> cols;
  for (int64_t i = 0; i < last.vec; ++i) cols.push_back("col" + std::to_string(j * last.vec + i));
  SplitColumns(w, x, cols, "BLOCK_R * BLOCK_G");
}

// Folds the current row tap's columns into each lane's accumulator acc<i> (the first
// assignment defines it): max with NaN propagation (torch's), or a sum.
void EmitCombines(PythonWriter& w, const StripDim& last, bool is_max,
                  std::vector<std::string>& acc) {
  for (int64_t i = 0; i < last.vec; ++i) {
    std::string& a = acc[static_cast<size_t>(i)];
    for (int64_t k = 0; k < last.kernel; ++k) {
      const std::string col = "col" + std::to_string(last.Column(i, k));
      if (a.empty()) {
        a = "acc" + std::to_string(i);
        w.Line(a + " = " + col);
      } else {
        w.Line(a + " = " + (is_max ? NanMax(a, col) : a + " + " + col));
      }
    }
  }
}

// The launch: tile constexprs (BLOCK_R, BLOCK_G, ROW_BLOCKS) chosen by the wrapper, the
// interpreter's for CPU tensors (the only ones it runs), the GPU's otherwise (meta tensors
// too: benchmarks/occupancy_audit.py), and the grid they imply.
void SetStripLaunch(EmittedKernel& k, const GroupContext& ctx, const StripConfig& gpu,
                    int64_t rows, int64_t strips) {
  const std::string tile = ctx.WrapperName("tile");
  auto triple = [](const StripConfig& c) {
    return "(" + IntLiteral(c.block_r) + ", " + IntLiteral(c.block_g) + ", " +
           IntLiteral(c.row_blocks) + ")";
  };
  const std::string device = InputDevice(ctx.program);
  k.setup = {tile + " = " + triple(gpu)};
  if (device != "'cuda'")
    k.setup[0] += " if " + device + ".type != \"cpu\" else " +
                  triple(InterpreterStrips(gpu, rows, strips));
  k.launch = gpu.launch;
  k.constexprs = {"BLOCK_R=" + tile + "[0]", "BLOCK_G=" + tile + "[1]",
                  "ROW_BLOCKS=" + tile + "[2]"};
  k.grid = "(triton.cdiv(" + IntLiteral(rows) + ", " + tile + "[0]) * " + tile + "[2],)";
}

}  // namespace

std::optional<EmittedKernel> EmitPoolStrips(const GroupContext& ctx, const PoolSpec& s) {
  if (s.kind == PoolSpec::kAdaptive || ctx.generic()) return std::nullopt;
  const Program& p = ctx.program;
  const Node& node = p.node(ctx.group.anchor);
  const ValueId input = node.tensors[0];
  const StripDim last = LastDim(s);
  const int64_t row_taps = RowTaps(s);
  if (row_taps * last.chunks > kMaxChunkLoads ||
      row_taps * last.kernel * last.vec > kMaxCombines)
    return std::nullopt;
  const Shape& out = p.value(node.result).shape;
  const int64_t rows = Product(out) / last.out;
  const StripConfig config = ChooseStrips(rows, last.strips, last.vec, ctx.variant);
  const size_t lead = out.size() - s.nsp, l = s.nsp - 1;
  const std::string q = "BLOCK_R * BLOCK_G", vec = IntLiteral(last.vec);
  const bool is_max = s.kind == PoolSpec::kMax;
  const std::string identity = is_max ? "float('-inf')" : "0.0";
  KernelParams params(p, ctx.allocated_strides());
  PythonWriter w(1);
  int counter = 0;

  EmitTile(w, config, last, rows, ctx.wide);
  w.Line("lanes = " + Arange(vec, ctx.wide) + "[None, :]");
  const Dims out_dims = LiteralDims(out);
  Coords rc = DecomposeDims(w, "row", Dims(out_dims.begin(), out_dims.end() - 1), "oc");
  for (size_t d = 0; d < l; ++d)
    w.Line("start" + std::to_string(d) + " = " +
           Scaled(rc[lead + d], s.stride[d], -s.pad[d]));
  w.Line("ow = strip * " + vec + " + lanes");
  w.Line("first = strip * " + IntLiteral(last.vec * last.stride));
  const std::vector<std::string> chunk_ok = EmitChunks(w, last);
  const std::vector<std::vector<std::string>> tap_ok = EmitRowTapIndices(w, s);
  // A masked-off lane is loaded as 0.0; a materialized input needs no other fill for a sum.
  const bool refill = is_max || !ctx.plan.materialized[input.index];
  const std::string zero = "(strip + lanes) * 0";
  ExprEmitter e(p, ctx.plan.materialized, params, w, "strip_mask", zero, counter);
  std::vector<std::string> acc(static_cast<size_t>(last.vec));
  const std::vector<std::vector<int64_t>> taps = RowTapList(s);
  for (size_t t = 0; t < taps.size(); ++t) {
    const std::vector<int64_t>& tap = taps[t];
    Coords coords(rc.begin(), rc.begin() + static_cast<std::ptrdiff_t>(lead));
    std::vector<std::string> terms = {"strip_mask"};
    for (size_t d = 0; d < l; ++d) {
      const std::string tag = std::to_string(d) + "_" + std::to_string(tap[d]);
      coords.push_back("i" + tag);
      if (!tap_ok[d][static_cast<size_t>(tap[d])].empty())
        terms.push_back(tap_ok[d][static_cast<size_t>(tap[d])]);
    }
    for (int64_t j = 0; j < last.chunks; ++j) {
      // One mask name per load: the emitter reuses a value of equal coordinates and mask name
      // (a broadcast operand of a fused prologue would keep the first chunk's mask).
      const std::string m = "m" + std::to_string(t) + "_" + std::to_string(j);
      std::vector<std::string> mask_terms = terms;
      if (!chunk_ok[static_cast<size_t>(j)].empty())
        mask_terms.push_back(chunk_ok[static_cast<size_t>(j)]);
      w.Line(m + " = " + Join(mask_terms, " & "));
      // Lanes outside the input are padding (identity); terms beyond strip_mask say some are.
      const bool pad = mask_terms.size() > 1 && refill;
      EmitChunkColumns(w, e, input, coords, j, last, m, pad ? identity : "");
    }
    EmitCombines(w, last, is_max, acc);
  }
  JoinColumns(w, acc, "result", q);
  if (!is_max) w.Line("result = result / (" + EmitDivisor(w, ctx, s, last) + ")");
  w.Line("out_mask = strip_mask & (ow < " + IntLiteral(last.out) + ")");
  Coords oc(rc.begin(), rc.end());
  oc.push_back("ow");
  ExprEmitter tail(p, ctx.plan.materialized, params, w, "out_mask", zero, counter);
  tail.Bind(node.result, "result");
  const std::string val = tail.Compute(ctx.group.output, oc);
  w.Line("tl.store(" + params.Address(ctx.group.output, oc, zero) + ", " + val +
         ", mask=out_mask)");

  EmittedKernel k;
  k.name = ctx.kernel_name;
  k.text = KernelText(k.name,
                      GetOp(node.op).name + ": window " + DimProduct(s.window_dims) + " for " +
                          IntLiteral(Product(out)) + " outputs, strips of " + vec + " along dim " +
                          std::to_string(out.size() - 1) + ", " +
                          std::to_string(row_taps * last.chunks) + " chunk loads a strip",
                      params, {"BLOCK_R", "BLOCK_G", "ROW_BLOCKS"}, w.str());
  k.call_args = params.args();
  SetStripLaunch(k, ctx, config, rows, last.strips);
  return k;
}

}  // namespace drtriton::codegen

// Contraction kernels through tl.dot: matmul, bmm, linear, and convolution and transposed
// convolution as implicit GEMMs.  Each is C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] where
// (b, m, n, k) map to the operands' own coordinates (for a convolution m = (sample, output
// position), k = (input channel, kernel offset), n = output channel, b = group), so one
// tiled kernel in the style of the Triton matmul tutorial covers all of them.  Operands
// are gathered through their strides (masked where a window leaves the input), inlined
// producers are recomputed per tile, and bias and elementwise consumers form the epilogue.
// The convolutions' specs (stride phases of a transposed one, unclamped windows, the weight
// as a matrix) are in conv_spec.cc.
#include <algorithm>
#include <cassert>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/amplify.h"
#include "codegen/contraction_spec.h"
#include "codegen/expr.h"
#include "codegen/fusion.h"
#include "codegen/heuristics.h"
#include "codegen/layout.h"
#include "codegen/pool_spec.h"
#include "codegen/rows.h"
#include "codegen/rows_emitter.h"

namespace drtriton::codegen {
namespace {

// matmul and bmm: batch dims of the result, broadcast into each operand.
ContractionSpec MatmulSpec(const GroupContext& ctx, const Node& node) {
  const Program& p = ctx.program;
  ContractionSpec s;
  const Dims out_dims = ctx.DimsOf(node.result), a_dims = ctx.DimsOf(node.tensors[0]);
  s.batch_dims.assign(out_dims.begin(), out_dims.end() - 2);
  s.m_dims = {a_dims[a_dims.size() - 2]};
  s.k_dims = {a_dims.back()};
  s.n_dim = ctx.DimsOf(node.tensors[1]).back();
  const Shape& out = p.value(node.result).shape;
  const Shape a = p.value(node.tensors[0]).shape, b = p.value(node.tensors[1]).shape;
  s.batch_shape.assign(out.begin(), out.end() - 2);
  s.m_shape = {a[a.size() - 2]};
  s.k_shape = {a.back()};
  s.n = b.back();
  s.a = node.tensors[0];
  s.b = node.tensors[1];
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const Shape batch = s.batch_shape;
  s.a_at = [=](PythonWriter&, const Coords& bc, const Coords& mc, const Coords& kc) {
    return Operand{Concat(BroadcastCoords(a_batch, batch, bc), {mc[0], kc[0]}), ""};
  };
  s.b_at = [=](PythonWriter&, const Coords& bc, const Coords& kc, const std::string& n) {
    return Operand{Concat(BroadcastCoords(b_batch, batch, bc), {kc[0], n}), ""};
  };
  s.out_at = [](const Coords& bc, const Coords& mc, const std::string& n) {
    return Concat(bc, {mc[0], n});
  };
  return s;
}

// linear: every leading dim of the input is part of m; weight is (N, K).
ContractionSpec LinearSpec(const GroupContext& ctx, const Node& node) {
  const Program& p = ctx.program;
  ContractionSpec s;
  const Dims in_dims = ctx.DimsOf(node.tensors[0]);
  s.m_dims.assign(in_dims.begin(), in_dims.end() - 1);
  s.k_dims = {in_dims.back()};
  s.n_dim = ctx.DimsOf(node.tensors[1])[0];
  const Shape in = p.value(node.tensors[0]).shape;
  s.m_shape.assign(in.begin(), in.end() - 1);
  s.k_shape = {in.back()};
  s.n = p.value(node.tensors[1]).shape[0];
  s.a = node.tensors[0];
  s.b = node.tensors[1];
  s.bias = node.tensors.size() > 2 ? node.tensors[2] : ValueId{};
  s.a_at = [](PythonWriter&, const Coords&, const Coords& mc, const Coords& kc) {
    return Operand{Concat(mc, {kc[0]}), ""};
  };
  s.b_at = [](PythonWriter&, const Coords&, const Coords& kc, const std::string& n) {
    return Operand{{n, kc[0]}, ""};
  };
  s.out_at = [](const Coords&, const Coords& mc, const std::string& n) { return Concat(mc, {n}); };
  s.channel = [](const Coords&, const std::string& n) { return n; };
  return s;
}

ContractionSpec SpecOf(const GroupContext& ctx, const Node& node) {
  const OpInfo& op = GetOp(node.op);
  if (op.has(kConv)) return ConvSpec(ctx, node, false);
  if (op.has(kConvTranspose)) return ConvSpec(ctx, node, true);
  if (op.rule == ShapeRule::kLinear) return LinearSpec(ctx, node);  // weight (N, K), bias
  return MatmulSpec(ctx, node);
}

// Wraps a coordinate that is an expression so that it can be stored in a variable.
Coords Materialize(PythonWriter& w, const Coords& coords, const std::string& stem) {
  Coords out;
  for (size_t i = 0; i < coords.size(); ++i) {
    if (coords[i].find(' ') == std::string::npos) {
      out.push_back(coords[i]);
      continue;
    }
    const std::string name = stem + std::to_string(i);
    w.Line(name + " = " + coords[i]);
    out.push_back(name);
  }
  return out;
}

// The launch grid of `m` rows (a literal or a wrapper expression); of the autotuner's tile
// (META) for a tuned kernel; `slices` programs a tile (split-K's partial kernel).
std::string GridOf(const std::string& m, const ContractionSpec& s, const ContractionConfig& c,
                   const std::string& batch_expr, int64_t slices = 1) {
  if (!c.tuned.empty()) {
    std::string count = "triton.cdiv(" + m + ", META[\"BLOCK_M\"]) * triton.cdiv(" + s.n_dim +
                        ", META[\"BLOCK_N\"])";
    if (batch_expr != "1") count += " * " + Atom(batch_expr);
    return "lambda META: (" + count + ",)";
  }
  if (IsLiteral(m) && IsLiteral(s.n_dim) && IsLiteral(batch_expr))
    return "(" +
           IntLiteral(CeilDiv(std::stoll(m), c.block_m) * CeilDiv(std::stoll(s.n_dim), c.block_n) *
                      std::stoll(batch_expr) * slices) +
           ",)";
  const std::string bm = IntLiteral(c.block_m), bn = IntLiteral(c.block_n);
  std::string count =
      "triton.cdiv(" + m + ", " + bm + ") * triton.cdiv(" + s.n_dim + ", " + bn + ")";
  if (batch_expr != "1") count += " * " + Atom(batch_expr);
  if (slices != 1) count += " * " + IntLiteral(slices);
  return "(" + count + ",)";
}

// A phased spec's launches: per phase with any output, each of `kernels` in turn (the one
// kernel, or split-K's partial kernel over `slices[0]` programs a tile and then its sum; the
// phases reuse split-K's one workspace, sized for the longest phase, which the stream's order
// makes safe).  The first launch carries every kernel's setup, each kernel's last launch its
// text.  Returns the last launch, the others in its `before`.
EmittedKernel PhaseLaunches(const std::vector<const EmittedKernel*>& kernels,
                            const std::vector<int64_t>& slices, const ContractionSpec& s,
                            const ContractionConfig& c, const std::string& batch_expr) {
  std::vector<EmittedKernel> launches;
  std::vector<size_t> last(kernels.size());
  for (int64_t phase = 0; phase < s.phases; ++phase) {
    const std::string m = s.phase_m(phase);
    if (m.empty()) continue;  // a stride longer than the output: no position in this phase
    for (size_t i = 0; i < kernels.size(); ++i) {
      EmittedKernel l = *kernels[i];
      l.text.clear();
      l.setup.clear();
      l.before.clear();
      l.constexprs.push_back("PHASE=" + IntLiteral(phase));
      l.grid = GridOf(m, s, c, batch_expr, slices[i]);
      last[i] = launches.size();
      launches.push_back(std::move(l));
    }
  }
  assert(!launches.empty() && "every output position has a phase");
  for (size_t i = 0; i < kernels.size(); ++i) {
    launches[last[i]].text = kernels[i]->text;
    const auto& setup = kernels[i]->setup;
    launches.front().setup.insert(launches.front().setup.end(), setup.begin(), setup.end());
  }
  EmittedKernel kernel = std::move(launches.back());
  launches.pop_back();
  kernel.before = std::move(launches);
  return kernel;
}

// The value an operand reads through dim swaps alone (transpose, permute: the kernel
// addresses it by coordinates through its strides), or the operand itself.
ValueId BehindDimSwaps(const Program& p, const std::vector<bool>& materialized, ValueId v) {
  while (!materialized[v.index]) {
    const NodeId producer = p.value(v).producer;
    if (!producer.valid()) break;
    const ShapeRule rule = GetOp(p.node(producer).op).rule;
    if (rule != ShapeRule::kTranspose && rule != ShapeRule::kPermute) break;
    v = p.node(producer).tensors[0];
  }
  return v;
}

// Which of the tile's indices runs along the unit-stride last dim of `v`, the tensor that
// operand `a_side ? s.a : s.b` reads through dim swaps (BehindDimSwaps): "k", "m" or "n"
// where one coordinate alone does, "" otherwise.  Found by reading the operand at symbolic
// coordinates and following them through the swaps.
std::string UnitStrideIndex(const GroupContext& ctx, const ContractionSpec& s, bool a_side,
                            ValueId v) {
  const Program& p = ctx.program;
  PythonWriter scratch(1);
  const auto symbols = [](const std::string& name, size_t count) {
    Coords out;
    for (size_t d = 0; d < count; ++d) out.push_back("@" + name + std::to_string(d));
    return out;
  };
  const Coords bc = symbols("b", s.batch_dims.size()), kc = symbols("k", s.k_dims.size());
  const Operand read = a_side ? s.a_at(scratch, bc, symbols("m", s.m_dims.size()), kc)
                              : s.b_at(scratch, bc, kc, "@n");
  Coords coords = read.coords;
  for (ValueId at = a_side ? s.a : s.b; at != v;) {
    const Node& node = p.node(p.value(at).producer);
    coords = LayoutInputCoords(p, node, coords).coords;
    at = node.tensors[0];
  }
  if (coords.empty()) return "";
  const std::string& last = coords.back();
  if (last == "@k0" && s.k_dims.size() == 1) return "k";
  if (last == "@m0" && s.m_dims.size() == 1) return "m";
  if (last == "@n") return "n";
  return "";
}

// The operands the wrapper may copy into aligned rows (heuristics.h, kRowAlignment), each
// once: a matmul's, bmm's or linear's operands that are stored tensors, read as they are or
// through dim swaps (paper-preset program 106: transpose(x0) @ x1, x0 of 134 rows of 5683, at
// 0.17x eager on the H200 with every element of A a 4-byte load, h200-2026-12-05; the copy's
// rows are the input's, so the swap reads the buffer by the same coordinates).  A kernel's
// output too: paper-preset programs 11 (a pooled 3457 x 1478 operand) and 64 (883 x 2793)
// loaded those rows' fp16x3 parts 2 bytes at a time (128 LDG.E.U16 a K step in their sm_90
// builds, nothing pipelined) and ran 0.18x and 0.29x eager on the H200 (h200-2026-12-05b).
// A convolution gathers windows of its input, whose rows the tiles do not follow.
std::vector<ValueId> RepackedOperands(const GroupContext& ctx, const ContractionSpec& s,
                                      const ContractionConfig& c) {
  const Program& p = ctx.program;
  const OpInfo& op = GetOp(p.node(ctx.group.anchor).op);
  if (op.has(kConv) || op.has(kConvTranspose)) return {};
  const int64_t products = ctx.generic() ? kUnknownSize
                                         : Product(s.batch_shape) * Product(s.m_shape) * s.n *
                                               Product(s.k_shape);
  std::vector<ValueId> out;
  for (ValueId operand : {s.a, s.b}) {
    const ValueId v = BehindDimSwaps(p, ctx.plan.materialized, operand);
    if (!ctx.plan.materialized[v.index]) continue;  // computed in the loop: no rows to copy
    if (std::find(out.begin(), out.end(), v) != out.end()) continue;  // x0 @ x0
    const Dims dims = ctx.DimsOf(v);
    if (dims.size() < 2) continue;
    const int64_t rows = HeuristicSize(DimProduct(dims, 0, dims.size() - 1));
    if (RepacksUnalignedRows(c, rows, HeuristicSize(dims.back()), products)) out.push_back(v);
  }
  return out;
}

// The operands whose fp16x3 parts the wrapper writes before the contraction (heuristics.h,
// PresplitsOperand), each once: stored operands (inputs and kernels' outputs; a computed one
// is recomputed in the loop and has no tensor to split), of any contraction but a window sum.
std::vector<ValueId> PresplitOperands(const GroupContext& ctx, const ContractionSpec& s,
                                      const ContractionConfig& c) {
  const Program& p = ctx.program;
  if (ctx.generic() || s.window_sum) return {};
  const int64_t m = Product(s.m_shape), k = Product(s.k_shape), batch = Product(s.batch_shape);
  // A transposed convolution's phases each count as the longest (its spec's sizes).
  const int64_t products = s.phases * batch * m * s.n * k;
  // The tiles that load each element: the products' reads of the operand over its elements
  // (a matmul's broadcast operand is read once per batch entry, a convolution's input once
  // per window tap), times the tiles across the other dim.
  const auto tile_loads = [&](ValueId v, int64_t reads, int64_t across) {
    const int64_t elems = std::max<int64_t>(1, Product(p.value(v).shape));
    return CeilDiv(s.phases * reads, elems) * across;
  };
  const std::pair<ValueId, int64_t> operands[] = {
      {s.a, tile_loads(s.a, batch * m * k, CeilDiv(s.n, c.block_n))},
      {s.b, tile_loads(s.b, batch * k * s.n, CeilDiv(m, c.block_m))}};
  std::vector<ValueId> out;
  for (const auto& [v, loads] : operands) {
    if (!ctx.plan.materialized[v.index] || std::find(out.begin(), out.end(), v) != out.end())
      continue;
    if (PresplitsOperand(c, products, loads)) out.push_back(v);
  }
  return out;
}

// The kernel writing `v`'s parts from the tensor the contraction reads it from: its rows copy
// (RepackedOperands), its channels-last copy (split along the copy's storage), or itself.
EmittedKernel SplitPartsOf(const GroupContext& ctx, const ContractionSpec& s,
                           const std::vector<ValueId>& repacked, ValueId v) {
  if (std::find(repacked.begin(), repacked.end(), v) != repacked.end())
    return EmitSplitParts(ctx, v, RepackBuffer(ctx, v), 0, /*repacked=*/true);
  for (const ChannelsLastCopy& copy : s.channels_last)
    if (copy.value == v)
      return EmitSplitParts(ctx, v, ChannelsLastBuffer(ctx, v),
                            Product(CopyShape(ctx.program, copy)));
  return EmitSplitParts(ctx, v, ctx.program.value(v).name);
}

// One operand of the TMA kernel (heuristics.h, ChooseTmaContraction): the wrapper's tensor
// its descriptor describes (a linear's input of more than two dims as its 2-D view), the
// descriptor's block, and the kernel's tile of a K step from it.
struct TmaOperand {
  std::string value;   // the wrapper variable ("x0")
  std::string tensor;  // what the descriptor is made from ("x0" or "x0.view(2048, 4096)")
  std::string block;   // "[128, 64]"
  std::string load;    // "DESC.load([pid_m * BLOCK_M, k0])", DESC the descriptor parameter
};
struct TmaPlan {
  TmaOperand a, b;
};

// Where both operands can arrive by TMA: a matmul, bmm or linear (no convolution: its window
// gathers, phases and channels-last copies are no boxes of a tensor) of known sizes, whose
// operands are stored tensors read as they are: A (batch?, M, K), B (batch?, K, N) or a
// linear's weight (N, K), at most one batch dim and no operand broadcast along it, and rows of
// a multiple of 8 elements (16 bytes of bf16 or fp16: a descriptor's strides must be).
// Whether the tensors are half, contiguous and 16-byte aligned is the wrapper's check at run
// time (TmaCheck).
std::optional<TmaPlan> TmaPlanOf(const GroupContext& ctx, const ContractionSpec& s,
                                 const ContractionConfig& c) {
  const Program& p = ctx.program;
  const OpInfo& op = GetOp(p.node(ctx.group.anchor).op);
  if (ctx.generic() || ctx.wide || op.has(kConv) || op.has(kConvTranspose)) return std::nullopt;
  if (!ctx.plan.materialized[s.a.index] || !ctx.plan.materialized[s.b.index]) return std::nullopt;
  const Shape& a = p.value(s.a).shape;
  const Shape& b = p.value(s.b).shape;
  const bool linear = op.rule == ShapeRule::kLinear;
  if (s.batch_shape.size() > 1 || a.size() < 2 || a.back() % 8 != 0) return std::nullopt;
  // A 3-D operand's batch dim is the output's (no broadcast of a size-1 batch).
  const auto batched = [&](const Shape& x) { return x.size() == 3; };
  const auto fits = [&](const Shape& x) {
    return x.size() == 2 || (batched(x) && s.batch_shape.size() == 1 && x[0] == s.batch_shape[0]);
  };
  if (linear ? b.size() != 2 : !fits(a) || !fits(b) || b.back() % 8 != 0) return std::nullopt;
  TmaPlan plan;
  plan.a.value = p.value(s.a).name;
  plan.b.value = p.value(s.b).name;
  plan.a.tensor = plan.a.value;
  if (linear && a.size() > 2)
    plan.a.tensor += ".view(" + IntLiteral(Product(s.m_shape)) + ", " + IntLiteral(a.back()) + ")";
  plan.b.tensor = plan.b.value;
  const std::string bm = IntLiteral(c.block_m), bn = IntLiteral(c.block_n);
  const std::string bk = IntLiteral(c.block_k);
  if (!linear && batched(a)) {
    plan.a.block = "[1, " + bm + ", " + bk + "]";
    plan.a.load = "DESC.load([pid_b, pid_m * BLOCK_M, k0]).reshape(BLOCK_M, BLOCK_K)";
  } else {
    plan.a.block = "[" + bm + ", " + bk + "]";
    plan.a.load = "DESC.load([pid_m * BLOCK_M, k0])";
  }
  if (linear) {
    plan.b.block = "[" + bn + ", " + bk + "]";
    plan.b.load = "DESC.load([pid_n * BLOCK_N, k0]).T";
  } else if (batched(b)) {
    plan.b.block = "[1, " + bk + ", " + bn + "]";
    plan.b.load = "DESC.load([pid_b, k0, pid_n * BLOCK_N]).reshape(BLOCK_K, BLOCK_N)";
  } else {
    plan.b.block = "[" + bk + ", " + bn + "]";
    plan.b.load = "DESC.load([k0, pid_n * BLOCK_N])";
  }
  return plan;
}

// The wrapper's test that tensors `a` and `b` share one half dtype, bf16 only on a GPU (the
// interpreter has no bf16 tl.dot): where the TMA kernels may run.
std::string HalfPairCheck(const std::string& a, const std::string& b) {
  return a + ".dtype == " + b + ".dtype and (" + a + ".dtype == torch.float16 or (" + a +
         ".dtype == torch.bfloat16 and " + a + ".device.type == \"cuda\"))";
}

// The wrapper's condition for the TMA kernel: both operands of one half dtype (bf16 only on
// a GPU: the interpreter has no bf16 tl.dot), contiguous and 16-byte aligned.  Float32
// operands (the strict and tf32 modes, or an intermediate the wrapper keeps in float32) take
// the pointer kernel.
std::string TmaCheck(const TmaPlan& plan) {
  const std::string& a = plan.a.value;
  const std::string& b = plan.b.value;
  return HalfPairCheck(a, b) + " and " + a + ".is_contiguous() and " + b +
         ".is_contiguous() and " + a + ".data_ptr() % 16 == 0 and " + b + ".data_ptr() % 16 == 0";
}

// The shifted-rows kernel's copy of the input (contraction_spec.h): the channels-last copy
// the pointer kernel reads, or with padding (or a fold) one of its own with zeros around.
ChannelsLastCopy ShiftedRowsInput(const ShiftedRows& r) {
  return {r.input, r.batched ? size_t{1} : size_t{0}, r.channels, r.pad_low, r.pad_high,
          r.fold};
}

// The wrapper's condition for the shifted-rows kernel: input and weight of one half dtype,
// bf16 only on a GPU (TmaCheck); the copies it reads are fresh, contiguous and aligned.
std::string ShiftedRowsCheck(const Program& p, const ShiftedRows& r) {
  return HalfPairCheck(p.value(r.input).name, p.value(r.weight).name);
}

// Whether the group's row tail is a group norm: its tiles need whole groups, not whole rows
// (fusion.h GroupsFitTiles).
bool IsGroupNormTail(const GroupContext& ctx) {
  return ctx.group.row_tail.valid() &&
         GetOp(ctx.program.node(ctx.group.row_tail).op).row == RowKind::kGroupNorm;
}

// Writes a contraction's kernels: one kernel (K loop, then epilogue), or with split-K a
// partial kernel per K slice (launched first, ContractionConfig::split_k) and a kernel that
// adds the slices' partial tiles in order and runs the epilogue.  A transposed convolution's
// stride phases launch the one kernel once per phase (PhaseLaunches).
class ContractionWriter {
 public:
  // `repacked`: operands read from their RepackBuffer (EmitRepack), not the input itself;
  // `presplit`: operands whose fp16x3 parts the wrapper writes first (EmitSplitParts).
  ContractionWriter(const GroupContext& ctx, const ContractionSpec& s, const ContractionConfig& c,
                    std::vector<ValueId> repacked, std::vector<ValueId> presplit)
      : ctx_(ctx),
        s_(s),
        c_(c),
        repacked_(std::move(repacked)),
        presplit_(std::move(presplit)),
        m_(Product(s.m_shape)),
        k_(Product(s.k_shape)),
        batch_(Product(s.batch_shape)),
        m_expr_(DimProduct(s.m_dims)),
        k_expr_(DimProduct(s.k_dims)),
        batch_expr_(DimProduct(s.batch_dims)) {
    for (bool a_side : {true, false}) {
      const ValueId v = BehindDimSwaps(ctx.program, ctx.plan.materialized, a_side ? s.a : s.b);
      if (std::find(repacked_.begin(), repacked_.end(), v) != repacked_.end())
        row_index_[a_side ? 0 : 1] = UnitStrideIndex(ctx, s, a_side, v);
    }
  }

  // Tile loads of a K step per operand, known once a kernel has been written.
  OperandLoads operand_loads() const { return loads_; }

  EmittedKernel Single() {
    KernelParams params = Params();
    PythonWriter w(1);
    int counter = 0;
    const Tile t = WriteTile(w, params, /*sliced=*/false);
    WriteKLoop(w, params, counter, t, /*sliced=*/false);
    WriteEpilogue(w, params, counter, t);
    WriteRangeGuardTile(params, [&](PythonWriter& hw, int& hc, const Tile& ht) {
      WriteEpilogue(hw, params, hc, ht);
    });
    const bool literal = !ctx_.generic();
    EmittedKernel k = Finish(ctx_.kernel_name, params, w, /*dot=*/true,
                             GridOf(literal ? IntLiteral(m_) : m_expr_, s_, c_, batch_expr_));
    if (Phased()) return PhaseLaunches({&k}, {1}, s_, c_, batch_expr_);
    return k;
  }

  // Not in generic mode (ChooseContraction splits known sizes only).  A phased spec's
  // phases each split K into the same slices of one workspace (PhaseLaunches).
  EmittedKernel SplitK() {
    assert(!ctx_.generic() && "split-K needs literal sizes");
    const std::string slice_size = IntLiteral(batch_ * m_ * s_.n);
    KernelParams part_params = Params();
    PythonWriter pw(1);
    int counter = 0;
    const Tile pt = WriteTile(pw, part_params, /*sliced=*/true);
    const std::string part_name = ctx_.KernelNamed("part");
    guarded_name_ = part_name;
    WriteKLoop(pw, part_params, counter, pt, /*sliced=*/true);
    const auto store_slice = [&](PythonWriter& sw, int&, const Tile&) {
      sw.Line("tl.store(" + part_params.Scratch(Workspace()) + " + pid_s * " + slice_size +
              " + " + WorkspaceIndex() + ", acc, mask=mask_m & mask_n)");
    };
    store_slice(pw, counter, pt);
    WriteRangeGuardTile(part_params, store_slice);
    EmittedKernel part = Finish(part_name, part_params, pw, /*dot=*/true,
                                "(" + IntLiteral(Tiles() * batch_ * c_.split_k) + ",)");
    guarded_name_.clear();
    const Program& p = ctx_.program;
    part.setup.insert(part.setup.begin(),
                      ScratchAllocation(p, Workspace(), c_.split_k * batch_ * m_ * s_.n));

    KernelParams params = Params();
    PythonWriter w(1);
    const Tile t = WriteTile(w, params, /*sliced=*/false);
    w.Line("acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)");
    w.Line("ws = " + WorkspaceIndex());
    // The slices in order 0, 1, ...: the same sum on every run, whatever order the partial
    // programs ran in.
    w.Open("for sk in tl.range(0, " + IntLiteral(c_.split_k) + "):");
    w.Line("acc += tl.load(" + params.Scratch(Workspace()) + " + sk * " + slice_size +
           " + ws, mask=mask_m & mask_n, other=0.0)");
    w.Dedent();
    WriteEpilogue(w, params, counter, t);
    EmittedKernel k = Finish(ctx_.kernel_name, params, w, /*dot=*/false,
                             "(" + IntLiteral(Tiles() * batch_) + ",)");
    if (Phased()) return PhaseLaunches({&part, &k}, {c_.split_k, 1}, s_, c_, batch_expr_);
    k.before.push_back(std::move(part));
    return k;
  }

  // The TMA kernel (TmaPlanOf): the K loop multiplies the descriptors' half tiles as they
  // arrive (fp32 accumulation), then the same epilogue.  Launched where `flag` holds (the
  // wrapper's TmaCheck); this writer's configuration is ChooseTmaContraction's.
  EmittedKernel Tma(const TmaPlan& plan) {
    const std::string a_desc = ctx_.WrapperName("a_desc"), b_desc = ctx_.WrapperName("b_desc");
    KernelParams params = DescriptorParams(a_desc, b_desc);
    PythonWriter w(1);
    int counter = 0;
    std::string pid;  // the persistent program's tile of this round
    if (c_.programs > 0) {
      const int64_t rounds = Tiles() * batch_ / c_.programs;
      w.Open("for rnd in tl.range(0, " + IntLiteral(rounds) + "):");
      pid = ProgramId(0, ctx_.wide) + " + rnd * " + IntLiteral(c_.programs);
    }
    const Tile t = WriteTile(w, params, /*sliced=*/false, pid);
    w.Line("acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)");
    w.Open("for k0 in tl.range(0, " + k_expr_ + ", BLOCK_K):");
    w.Line("a = " + WithDesc(plan.a.load, a_desc));
    w.Line("b = " + WithDesc(plan.b.load, b_desc));
    w.Line("acc = tl.dot(a, b, acc)");
    w.Dedent();
    if (HalvesEpilogue())
      WriteHalvedEpilogue(w, params, counter, t);
    else
      WriteEpilogue(w, params, counter, t);
    if (c_.programs > 0) w.Dedent();
    const std::string grid = c_.programs > 0 ? "(" + IntLiteral(c_.programs) + ",)"
                                             : GridOf(IntLiteral(m_), s_, c_, batch_expr_);
    EmittedKernel k = Finish(ctx_.KernelNamed("tma"), params, w, /*dot=*/false, grid);
    const std::string flag = ctx_.WrapperName("tma");
    const auto descriptor = [&](const std::string& desc, const TmaOperand& operand) {
      return desc + " = TensorDescriptor.from_tensor(" + operand.tensor + ", " + operand.block +
             ") if " + flag + " else None";
    };
    k.setup.insert(k.setup.begin(), {flag + " = " + TmaCheck(plan), descriptor(b_desc, plan.b),
                                     descriptor(a_desc, plan.a)});
    k.guard = flag;
    k.tensor_descriptors = true;
    return k;
  }

  // The TMA kernel of a convolution in shifted-rows form (contraction_spec.h, ShiftedRows):
  // a tile is BLOCK_M consecutive positions of one sample's flattened input by BLOCK_N output
  // channels; its K loop is WriteShiftedRowsLoop's.  Then the tile's positions as output
  // coordinates (masked where a position has none) and the same epilogue as the pointer
  // kernel.  Launched where its guard holds (ShiftedRowsCheck, which EmitContraction binds
  // before the copies).
  // A transposed convolution of stride 2 along its last dim computes both of that dim's phases
  // in one program (PairsLastPhases): half a tile of positions each, interleaved before the
  // epilogue, so a row of its NCHW output is written whole.  Per phase, each output row took
  // every other element: on an H100 (2026-12-06, bf16, results/h100-2026-12-06b) KernelBench
  // L2 2's phases took 2.53 ms where cuDNN's transposed convolution took 0.79, and L2 91's
  // 2.31 ms against 0.32: about 0.4 TB/s of output written.
  EmittedKernel ShiftedRowsTma(const ShiftedRows& r) {
    const std::string a_desc = ctx_.WrapperName("a_desc"), b_desc = ctx_.WrapperName("b_desc");
    KernelParams params = DescriptorParams(a_desc, b_desc);
    PythonWriter w(1);
    int counter = 0;
    const bool paired = PairsLastPhases(r);
    const int64_t rows = paired ? c_.block_m / 2 : c_.block_m;
    const std::string rows_text = paired ? "(BLOCK_M // 2)" : "BLOCK_M";
    const PhaseText ph(r, rows);
    const int64_t tiles_n = CeilDiv(s_.n, c_.block_n);
    // Channel blocks innermost: a tile's neighbours read the same input rows.
    w.Line("pid = tl.program_id(0)");
    w.Line("pid_n = pid % " + IntLiteral(tiles_n));
    w.Line("sample = pid // " + Atom(Times(ph.tiles_p, IntLiteral(tiles_n))));
    w.Line("p0 = (pid // " + IntLiteral(tiles_n) + " % " + ph.tiles_p + ") * " + rows_text);
    if (paired) {
      WriteShiftedRowsLoop(w, r, ph.Half("A"), a_desc, b_desc, "acc_a", rows_text);
      WriteShiftedRowsLoop(w, r, ph.Half("B"), a_desc, b_desc, "acc_b", rows_text);
      // Row 2i + q of the tile is phase q's position i.
      w.Line("acc = tl.reshape(tl.permute(tl.join(acc_a, acc_b), [0, 2, 1]), "
             "[BLOCK_M, BLOCK_N])");
    } else {
      WriteShiftedRowsLoop(w, r, ph, a_desc, b_desc, "acc", rows_text);
    }
    Tile t = WriteShiftedRowsTile(w, r, ph, paired);
    // The program's tile of positions: pid // tiles_n is sample * tiles_p + its p0 block.
    if (!paired && r.phases.size() == 1) t.slot = "pid // " + IntLiteral(tiles_n);
    // Halved at any accumulator size (HalvesEpilogue says why): sm_90 builds on the CPU (bf16,
    // literal strides, 2026-12-07) took L2 4's two mish from 205 registers to 90 (one program
    // an SM to two), L2 26's hardswish (conv_transpose3d) 130 to 96 (three to five), L2 19's
    // gelu 156 to 123; L2 1's bias and relu 90 either way.
    if (HalvesEpilogue(/*min_registers=*/0))
      WriteHalvedEpilogue(w, params, counter, t);
    else
      WriteEpilogue(w, params, counter, t);
    if (r.phases.size() > 1) extra_constexprs_ = PhaseConstexprs(r.grid_sp.size(), paired);
    EmittedKernel k = Finish(ctx_.KernelNamed("tma"), params, w, /*dot=*/false, "");
    extra_constexprs_.clear();
    AddShiftedRowsDescriptors(r, rows, k);
    return paired ? PairLaunchesOf(r, std::move(k), tiles_n)
                  : PhaseLaunchesOf(r, std::move(k), tiles_n);
  }

  // The shifted-rows kernel computing the 2 x 2 pool that reads its output too (PoolTailFits,
  // the pool's group `pool`): a program takes 64 output columns of row 2i and the same of
  // row 2i + 1 (two K loops, half a tile each, as PairsLastPhases), the convolution's epilogue
  // on each, their maximum or sum, then the same of column pairs, and the pool group's
  // epilogue on the 32 x BLOCK_N pooled tile, which it stores.  The convolution's own output
  // is never stored (the pool's group then runs only where this kernel does not).  Why: the
  // full-size output was stored and read back by the pool kernel; KernelBench L2 35 and 46
  // store 520 MB of it in bf16 to keep 130 MB.
  EmittedKernel ShiftedRowsPoolTma(const ShiftedRows& r, const Group& pool) {
    const std::string a_desc = ctx_.WrapperName("a_desc"), b_desc = ctx_.WrapperName("b_desc");
    KernelParams params = DescriptorParams(a_desc, b_desc);
    PythonWriter w(1);
    int counter = 0;
    const int64_t half = c_.block_m / 2, width = r.grid_sp[1];
    const PoolSpec ps = PoolSpecOf(ctx_, ctx_.program.node(pool.anchor));
    // Blocks of 64 output columns: where one runs past the grid's row, its last positions
    // are the next row's, past the output's columns (OW <= the grid's width) and masked.
    const int64_t tiles_n = CeilDiv(s_.n, c_.block_n);
    const int64_t tiles_j = CeilDiv(r.phases[0].outs[1], half);
    const PhaseText ph(r, half);
    w.Line("pid = tl.program_id(0)");
    w.Line("pid_n = pid % " + IntLiteral(tiles_n));
    w.Line("pid_j = pid // " + IntLiteral(tiles_n) + " % " + IntLiteral(tiles_j));
    w.Line("pid_i = pid // " + IntLiteral(tiles_n * tiles_j) + " % " + IntLiteral(ps.out_sp[0]));
    w.Line("sample = pid // " + IntLiteral(tiles_n * tiles_j * ps.out_sp[0]));
    w.Line("p0 = pid_i * " + IntLiteral(2 * width) + " + pid_j * (BLOCK_M // 2)");
    WriteShiftedRowsLoop(w, r, ph, a_desc, b_desc, "acc_a", "(BLOCK_M // 2)");
    w.Line("p0 += " + IntLiteral(width));
    WriteShiftedRowsLoop(w, r, ph, a_desc, b_desc, "acc_b", "(BLOCK_M // 2)");
    w.Line("offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]");
    w.Line("mask_n = offs_n < " + IntLiteral(s_.n));
    w.Line("offs_m = pid_j * (BLOCK_M // 2) + tl.arange(0, BLOCK_M // 2)[:, None]");
    w.Line("mask_m = offs_m < " + IntLiteral(r.phases[0].outs[1]));
    const std::string pooled = WritePooledRows(w, params, counter, ps);
    // The pooled tile: row k is pooled column pid_j * BLOCK_M // 4 + k of pooled row pid_i.
    w.Line("offs_m = pid_j * (BLOCK_M // 4) + tl.arange(0, BLOCK_M // 4)[:, None]");
    w.Line("mask = (offs_m < " + IntLiteral(ps.out_sp[1]) + ") & mask_n");
    ExprEmitter e = TileExprs(w, params, counter);
    e.Bind(ctx_.program.node(pool.anchor).result, pooled);
    const Coords out = Materialize(w, {"sample", "offs_n", "pid_i", "offs_m"}, "pc");
    const std::string val = e.Compute(pool.output, out);
    w.Line("tl.store(" + params.Address(pool.output, out, kTileZero) + ", " + val +
           ", mask=mask)");
    EmittedKernel k = Finish(ctx_.KernelNamed("tma"), params, w, /*dot=*/false, "");
    AddShiftedRowsDescriptors(r, half, k);
    k.grid = "(" + IntLiteral(r.samples * ps.out_sp[0] * tiles_j * tiles_n) + ",)";
    return k;
  }

 private:
  // The convolution's epilogue on each half (rows 2i and 2i + 1 of the output, coordinates
  // offs_m along the last dim), then the pool of their pairs of rows and of columns: the
  // name of the pooled (BLOCK_M // 4, BLOCK_N) tile.  Max pools propagate NaN, as torch's.
  std::string WritePooledRows(PythonWriter& w, KernelParams& params, int& counter,
                              const PoolSpec& ps) {
    w.Line("mask = mask_m & mask_n");
    const std::string bias = s_.bias.valid() ? BiasRow(w, params, counter, {}) : "";
    std::vector<std::string> halves;
    for (const std::string h : {"a", "b"}) {
      // An emitter a half: the other's values are bound to the other accumulator.
      ExprEmitter e = TileExprs(w, params, counter);
      if (!bias.empty()) w.Line("acc_" + h + " += " + bias);
      e.Bind(ctx_.program.node(ctx_.group.anchor).result, "acc_" + h);
      const std::string row = h == "a" ? "pid_i * 2" : "pid_i * 2 + 1";
      const Coords out = Materialize(w, s_.out_at({}, {"sample", row, "offs_m"}, "offs_n"),
                                     "oc" + h);
      halves.push_back(e.Compute(ctx_.group.output, out));
    }
    const bool max = ps.kind == PoolSpec::kMax;
    const auto combine = [&](const std::string& a, const std::string& b) {
      return max ? NanMax(a, b) : a + " + " + b;
    };
    w.Line("rows = " + combine(halves[0], halves[1]));
    w.Line("even, odd = tl.split(tl.reshape(rows, [BLOCK_M // 4, 2, BLOCK_N]).permute(0, 2, 1))");
    w.Line("pooled = " + (max ? combine("even", "odd") : "(even + odd) * 0.25"));
    return "pooled";
  }


  // The host descriptors of the input's copy (boxes of `rows` positions) and the weight's,
  // bound where the kernel's flag holds.
  void AddShiftedRowsDescriptors(const ShiftedRows& r, int64_t rows, EmittedKernel& k) const {
    const std::string a_desc = ctx_.WrapperName("a_desc"), b_desc = ctx_.WrapperName("b_desc");
    const std::string flag = ctx_.WrapperName("tma");
    const std::string x = CopyBuffer(ctx_, ShiftedRowsInput(r));
    const std::string wt = ChannelsLastBuffer(ctx_, r.weight);
    const auto descriptor = [&](const std::string& desc, const std::string& tensor,
                                const Shape& shape, const Shape& block) {
      Shape strides(shape.size(), 1);
      for (size_t d = shape.size() - 1; d-- > 0;) strides[d] = strides[d + 1] * shape[d + 1];
      return desc + " = TensorDescriptor(" + tensor + ", " + IntList(shape) + ", " +
             IntList(strides) + ", " + IntList(block) + ") if " + flag + " else None";
    };
    const int64_t window = Product(r.k_sp);
    k.setup.insert(
        k.setup.begin(),
        {r.transposed ? descriptor(b_desc, wt, {r.channels, window, s_.n},
                                   {c_.block_k, 1, c_.block_n})
                      : descriptor(b_desc, wt, {s_.n, window * r.channels},
                                   {c_.block_n, c_.block_k}),
         descriptor(a_desc, x, {r.samples, r.rows(), r.channels}, {1, rows, c_.block_k})});
    k.guard = flag;
    k.tensor_descriptors = true;
  }

  // Whether the last dim's two phases (stride 2) are computed together: every phase of the
  // earlier dims has both, next to each other (TransposedPhases orders the last dim fastest
  // and leaves out a phase without outputs), and half a tile is a whole wgmma's 64 rows.
  bool PairsLastPhases(const ShiftedRows& r) const {
    if (!r.transposed || r.stride.back() != 2 || r.phases.size() % 2 != 0 ||
        c_.block_m % 128 != 0)
      return false;
    for (size_t i = 0; i < r.phases.size(); i += 2) {
      const ShiftedPhase &a = r.phases[i], &b = r.phases[i + 1];
      if (a.phase.back() != 0 || b.phase.back() != 1 ||
          !std::equal(a.phase.begin(), a.phase.end() - 1, b.phase.begin()))
        return false;
    }
    return true;
  }

  // A TMA kernel's parameters: the two host descriptors first (wrapper variables of those
  // names), then whatever its epilogue reads.
  KernelParams DescriptorParams(const std::string& a_desc, const std::string& b_desc) const {
    KernelParams params(ctx_.program, ctx_.allocated_strides());
    params.Scalar(a_desc, a_desc);
    params.Scalar(b_desc, b_desc);
    return params;
  }

  static std::string IntList(const Shape& values) {
    std::vector<std::string> items;
    for (int64_t v : values) items.push_back(IntLiteral(v));
    return "[" + Join(items, ", ") + "]";
  }

  // A shifted-rows phase's numbers as kernel text: literals where there is one phase (a direct
  // convolution), else constexprs that each phase's launch passes (PhaseLaunchesOf).
  struct PhaseText {
    std::vector<std::string> phase, taps, first, outs;
    std::string base, tiles_p, total_taps;
    PhaseText(const ShiftedRows& r, int64_t block_m) {
      const bool one = r.phases.size() == 1;
      const ShiftedPhase& p = r.phases[0];
      const auto text = [&](const std::string& name, int64_t value) {
        return one ? IntLiteral(value) : name;
      };
      std::vector<std::string> all_taps;
      for (size_t d = 0; d < r.grid_sp.size(); ++d) {
        const std::string x = std::to_string(d);
        phase.push_back(text("PHASE" + x, p.phase[d]));
        taps.push_back(text("TAPS" + x, p.taps[d]));
        first.push_back(text("FIRST" + x, p.first[d]));
        outs.push_back(text("OUTS" + x, p.outs[d]));
        all_taps.push_back(taps.back());
      }
      base = text("BASE", Base(r, p));
      tiles_p = text("TILES_P", CeilDiv(r.reach(p), block_m));
      total_taps = one ? IntLiteral(Product(p.taps)) : Join(all_taps, " * ");
    }
    // One of a pair's phases (PairsLastPhases): the last dim's taps, first offset and the
    // base as that phase's constexprs (TAPSA, FIRSTA, BASEA for `half` "A").
    PhaseText Half(const std::string& half) const {
      PhaseText h = *this;
      h.taps.back() = "TAPS" + half;
      h.first.back() = "FIRST" + half;
      h.base = "BASE" + half;
      h.total_taps = Join(h.taps, " * ");
      return h;
    }
    // The copy position of output 0's tap 0, flattened.
    static int64_t Base(const ShiftedRows& r, const ShiftedPhase& p) {
      int64_t base = 0;
      for (size_t d = 0; d < r.grid_sp.size(); ++d) base = base * r.grid_sp[d] + p.base[d];
      return base;
    }
  };
  struct TapText {
    std::string offset;  // the tap's copy rows past the output position, flattened
    std::string kernel;  // the tap's kernel offset, flattened over the kernel's dims
  };

  // The copy rows between consecutive residues of a folded copy's dim d (ShiftedRows::fold):
  // the residues of the later dims times the positions.
  static int64_t ResidueRows(const ShiftedRows& r, size_t d) {
    int64_t rows = r.positions();
    for (size_t e = d + 1; e < r.fold.size(); ++e) rows *= r.fold[e];
    return rows;
  }

  // The tap's coordinate t_d per spatial dim (row-major over the phase's taps), its input
  // offset (base + sum of t_d * delta_d * the copy's inner positions; in a folded copy, the
  // residue and position of t_d * delta_d instead) and its kernel offset (sum of (first_d +
  // t_d * step_d) * the kernel's inner sizes).  A dim of one tap has t = 0.
  static TapText TapCoordinates(const ShiftedRows& r, const PhaseText& ph,
                                const std::string& tap) {
    const size_t n = r.grid_sp.size();
    std::vector<std::string> offset = {ph.base == "0" ? "" : ph.base}, kernel;
    int64_t inner_in = r.positions(), inner_k = Product(r.k_sp);
    for (size_t d = 0; d < n; ++d) {
      inner_in /= r.grid_sp[d];
      inner_k /= r.k_sp[d];
      std::string later;  // the taps of the later dims (their product folded where literal)
      for (size_t e = d + 1; e < n; ++e)
        if (ph.taps[e] != "1") later = later.empty() ? ph.taps[e] : Times(later, ph.taps[e]);
      std::string t = later.empty() ? tap : tap + " // " + Atom(later);
      bool earlier = false;
      for (size_t e = 0; e < d; ++e) earlier = earlier || ph.taps[e] != "1";
      if (earlier) t = Atom(t) + " % " + ph.taps[d];
      if (ph.taps[d] == "1") t = "0";
      const int64_t fold = r.fold.empty() ? 1 : r.fold[d];
      if (t != "0" && fold == 1) offset.push_back(Scaled(Atom(t), r.delta[d] * inner_in));
      if (t != "0" && fold > 1) {  // residue (t * delta) % fold, position (t * delta) // fold
        const std::string e = Atom(Scaled(Atom(t), r.delta[d]));
        offset.push_back(Scaled(e + " // " + IntLiteral(fold), inner_in));
        offset.push_back(Scaled(e + " % " + IntLiteral(fold), ResidueRows(r, d)));
      }
      const std::string index = Sum({ph.first[d], t == "0" ? "0" : Scaled(Atom(t), r.step[d])});
      if (index != "0") kernel.push_back(Scaled(Atom(index), inner_k));
    }
    std::vector<std::string> terms;
    for (const std::string& o : offset)
      if (!o.empty()) terms.push_back(o);
    // A direct convolution's taps are its kernel offsets in order.
    return {Atom(Sum(terms)), r.transposed ? Sum(kernel) : tap};
  }

  // The K loop of one phase into `acc`: per (tap, channel block) step, the input copy's box
  // of `rows` rows p0 + offset(tap) by BLOCK_K channels, times the weight copy's (BLOCK_N,
  // BLOCK_K) box at column tap * C + c0, read transposed.  Boxes past the copies' ends are
  // zero-filled by the TMA engine.
  void WriteShiftedRowsLoop(PythonWriter& w, const ShiftedRows& r, const PhaseText& ph,
                            const std::string& a_desc, const std::string& b_desc,
                            const std::string& acc, const std::string& rows) {
    w.Line(acc + " = tl.zeros([" + rows + ", BLOCK_N], dtype=tl.float32)");
    const int64_t blocks = CeilDiv(r.channels, c_.block_k);
    w.Open("for kk in tl.range(0, " + Times(ph.total_taps, IntLiteral(blocks)) + "):");
    std::string tap = "kk", c0 = "0";
    if (blocks > 1) {
      w.Line("tap = kk // " + IntLiteral(blocks));
      w.Line("c0 = kk % " + IntLiteral(blocks) + " * BLOCK_K");
      tap = "tap";
      c0 = "c0";
    }
    const TapText taps = TapCoordinates(r, ph, tap);
    w.Line("a = " + a_desc + ".load([sample, p0 + " + taps.offset + ", " + c0 +
           "]).reshape(" + rows + ", BLOCK_K)");
    if (r.transposed)  // (C_in, taps, C_out): a (BLOCK_K, 1, BLOCK_N) box is B as it is
      w.Line("b = " + b_desc + ".load([" + c0 + ", " + taps.kernel + ", pid_n * BLOCK_N])" +
             ".reshape(BLOCK_K, BLOCK_N)");
    else  // (C_out, taps * C_in): a (BLOCK_N, BLOCK_K) box, transposed
      w.Line("b = " + b_desc + ".load([pid_n * BLOCK_N, " +
             Sum({ScaledBy(Atom(taps.kernel), IntLiteral(r.channels)), c0}) + "]).T");
    w.Line(acc + " = tl.dot(a, b, " + acc + ")");
    w.Dedent();
  }

  // The shifted-rows kernel's launches: the one of a direct convolution, or one per phase of a
  // transposed one, each passing its phase's numbers (PhaseText) and its grid.
  EmittedKernel PhaseLaunchesOf(const ShiftedRows& r, EmittedKernel k, int64_t tiles_n) const {
    const auto tiles_p = [&](const ShiftedPhase& p) { return CeilDiv(r.reach(p), c_.block_m); };
    if (r.phases.size() == 1) {
      k.grid = "(" + IntLiteral(r.samples * tiles_p(r.phases[0]) * tiles_n) + ",)";
      return k;
    }
    std::vector<EmittedKernel> launches;
    for (const ShiftedPhase& p : r.phases) {
      EmittedKernel l = k;
      l.text.clear();
      l.setup.clear();
      PassPhaseDims(p, p.phase.size(), l);
      l.constexprs.push_back("BASE=" + IntLiteral(PhaseText::Base(r, p)));
      l.constexprs.push_back("TILES_P=" + IntLiteral(tiles_p(p)));
      l.grid = "(" + IntLiteral(r.samples * tiles_p(p) * tiles_n) + ",)";
      launches.push_back(std::move(l));
    }
    return Chained(std::move(launches), k);
  }

  // Phase `p`'s numbers along its first `dims` spatial dims as a launch's constexprs.
  static void PassPhaseDims(const ShiftedPhase& p, size_t dims, EmittedKernel& launch) {
    for (size_t d = 0; d < dims; ++d) {
      const std::string x = std::to_string(d);
      launch.constexprs.push_back("PHASE" + x + "=" + IntLiteral(p.phase[d]));
      launch.constexprs.push_back("TAPS" + x + "=" + IntLiteral(p.taps[d]));
      launch.constexprs.push_back("FIRST" + x + "=" + IntLiteral(p.first[d]));
      launch.constexprs.push_back("OUTS" + x + "=" + IntLiteral(p.outs[d]));
    }
  }

  // The constexprs a phase's launch passes (PhaseLaunchesOf) for `dims` spatial dims; a
  // pair's (PairLaunchesOf) name the last dim's per phase of the pair instead.
  static std::vector<std::string> PhaseConstexprs(size_t dims, bool paired) {
    std::vector<std::string> names;
    const size_t own = paired ? dims - 1 : dims;
    for (const char* stem : {"PHASE", "TAPS", "FIRST", "OUTS"})
      for (size_t d = 0; d < own; ++d) names.push_back(stem + std::to_string(d));
    if (paired) {
      for (const char* stem : {"TAPS", "FIRST", "BASE"})
        for (const char* half : {"A", "B"}) names.push_back(std::string(stem) + half);
    } else {
      names.push_back("BASE");
    }
    names.push_back("TILES_P");
    return names;
  }

  // The paired kernel's launches: one per phase of the earlier dims, each passing both of its
  // last-dim phases' numbers, over the tiles of the longer one's positions.
  EmittedKernel PairLaunchesOf(const ShiftedRows& r, EmittedKernel k, int64_t tiles_n) const {
    std::vector<EmittedKernel> launches;
    for (size_t i = 0; i < r.phases.size(); i += 2) {
      const ShiftedPhase &a = r.phases[i], &b = r.phases[i + 1];
      EmittedKernel l = k;
      l.text.clear();
      l.setup.clear();
      PassPhaseDims(a, a.phase.size() - 1, l);  // the last dim's: below, per phase of the pair
      for (const auto& [half, p] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
        l.constexprs.push_back(std::string("TAPS") + half + "=" + IntLiteral(p->taps.back()));
        l.constexprs.push_back(std::string("FIRST") + half + "=" + IntLiteral(p->first.back()));
        l.constexprs.push_back(std::string("BASE") + half + "=" +
                               IntLiteral(PhaseText::Base(r, *p)));
      }
      const int64_t tiles_p = CeilDiv(std::max(r.reach(a), r.reach(b)), c_.block_m / 2);
      l.constexprs.push_back("TILES_P=" + IntLiteral(tiles_p));
      l.grid = "(" + IntLiteral(r.samples * tiles_p * tiles_n) + ",)";
      launches.push_back(std::move(l));
    }
    return Chained(std::move(launches), k);
  }

  // Launches in order as one kernel: the first carries the text and setup, the last is
  // returned with the others before it.
  static EmittedKernel Chained(std::vector<EmittedKernel> launches, const EmittedKernel& k) {
    launches.front().text = k.text;
    launches.front().setup = k.setup;
    EmittedKernel last = std::move(launches.back());
    launches.pop_back();
    last.before = std::move(launches);
    return last;
  }

  // a * b, folded where both are literals.
  static std::string Times(const std::string& a, const std::string& b) {
    if (IsLiteral(a) && IsLiteral(b)) return IntLiteral(std::stoll(a) * std::stoll(b));
    return ScaledBy(a, b);
  }

  static std::string WithDesc(std::string load, const std::string& desc) {
    return load.replace(load.find("DESC"), 4, desc);
  }

  struct Tile {
    Coords bc, mc;
    // The tile's slot of column statistics (Group::column_stats): unique among the programs
    // of one launch; "" where the kernel writes none.
    std::string slot;
  };

  // The shifted-rows tile's offsets and masks, and its output coordinates: each position of
  // the flattened (padded) input as (sample, j_0, ...), masked where some j_d is past the
  // phase's output length.  j_0 is not taken modulo its size: positions past the sample's
  // last output have one too large (or a later one is).  A transposed convolution's output
  // coordinate along a strided dim is phase + stride * j (ContractionSpec::out_at).
  // The paired tile (PairsLastPhases): row 2i + q is position p0 + i of the last dim's phase
  // q, so phase<last> is q and the output coordinate phase + 2 * j runs along the rows; a row
  // is masked where that coordinate is past the output's length.
  Tile WriteShiftedRowsTile(PythonWriter& w, const ShiftedRows& r, const PhaseText& ph,
                            bool paired) {
    w.Line(std::string("offs_m = p0 + tl.arange(0, BLOCK_M)[:, None]") + (paired ? " // 2" : ""));
    w.Line("offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]");
    Tile t;
    if (r.batched) t.mc.push_back("sample");
    std::vector<std::string> inside;
    int64_t inner = r.positions();
    const size_t last = r.grid_sp.size() - 1;
    for (size_t d = 0; d <= last; ++d) {
      inner /= r.grid_sp[d];
      const std::string x = std::to_string(d), o = "o" + x;
      std::string at = inner > 1 ? "offs_m // " + IntLiteral(inner) : "offs_m";
      if (d > 0) at = Atom(at) + " % " + IntLiteral(r.grid_sp[d]);
      w.Line(o + " = " + at);
      t.mc.push_back(o);
      if (paired && d == last) {
        const int64_t length = r.phases[0].outs.back() + r.phases[1].outs.back();
        w.Line("phase" + x + " = tl.arange(0, BLOCK_M)[:, None] % 2");
        inside.push_back("(phase" + x + " + " + o + " * 2 < " + IntLiteral(length) + ")");
        continue;
      }
      inside.push_back("(" + o + " < " + ph.outs[d] + ")");
      if (r.transposed && r.stride[d] > 1) w.Line("phase" + x + " = " + ph.phase[d]);
    }
    w.Line("mask_m = " + Join(inside, " & "));
    w.Line("mask_n = offs_n < " + IntLiteral(s_.n));
    return t;
  }

  KernelParams Params() const {
    KernelParams params(ctx_.program, ctx_.allocated_strides());
    for (ValueId v : repacked_) params.Rebind(v, RepackBuffer(ctx_, v));
    for (const ChannelsLastCopy& copy : s_.channels_last)
      params.RebindLaidOut(copy.value, ChannelsLastBuffer(ctx_, copy.value),
                           ChannelsLastStrides(ctx_.program, copy));
    return params;
  }

  bool Phased() const { return s_.phases > 1; }
  int64_t Tiles() const { return CeilDiv(m_, c_.block_m) * CeilDiv(s_.n, c_.block_n); }

  // The workspace buffer of the partial tiles (one per kernel group, as rows_split.cc's).
  std::string Workspace() const { return ctx_.WrapperName("acc"); }
  // A tile element's offset in one slice of the workspace: (batch, m, n) row-major.
  std::string WorkspaceIndex() const {
    return "(pid_b * " + IntLiteral(m_) + " + offs_m) * " + IntLiteral(s_.n) + " + offs_n";
  }

  // pid -> (pid_s, pid_b, pid_m, pid_n), the tile's offsets and masks, and the batch and m
  // coordinates.  One flat grid axis (CUDA allows 2^31 - 1 programs there, 65535 on the
  // others): K slices outermost, then batch entries, then tiles in the matmul tutorial's
  // grouped order (GROUP_M rows of tiles share B columns and A rows in L2).  The tile count
  // is a literal, or follows from M (runtime sizes, or a phase's own M).
  // `pid`: the tile's number when it is not the program id (a persistent program's round).
  Tile WriteTile(PythonWriter& w, KernelParams& params, bool sliced, const std::string& pid = "") {
    if (Phased()) s_.phase_lines(w, params);
    WriteProgramIds(w, params, sliced, pid);
    return WriteTileOffsets(w, params);
  }

  void WriteProgramIds(PythonWriter& w, KernelParams& params, bool sliced,
                       const std::string& pid) {
    w.Line("pid = " + (pid.empty() ? ProgramId(0, ctx_.wide) : pid));
    // The tile count is the tile's (autotuned) or a phase's own M, or a literal.
    const bool counted = ctx_.generic() || Phased() || !c_.tuned.empty();
    if (counted) {
      w.Line("num_pid_m = tl.cdiv(" + params.Sizes(m_expr_) + ", BLOCK_M)");
      w.Line("num_pid_n = tl.cdiv(" + params.Sizes(s_.n_dim) + ", BLOCK_N)");
    }
    if (sliced) {
      const std::string per_slice =
          counted ? "(num_pid_m * num_pid_n * " + IntLiteral(batch_) + ")"
                  : IntLiteral(Tiles() * batch_);
      w.Line("pid_s = pid // " + per_slice);
      w.Line("pid = pid % " + per_slice);
    }
    if (counted) {
      w.Line("pid_b = pid // (num_pid_m * num_pid_n)");
      w.Line("pid = pid % (num_pid_m * num_pid_n)");
    } else {
      w.Line("pid_b = pid // " + IntLiteral(Tiles()));
      w.Line("pid = pid % " + IntLiteral(Tiles()));
      w.Line("num_pid_m = tl.cdiv(" + m_expr_ + ", BLOCK_M)");
      w.Line("num_pid_n = tl.cdiv(" + s_.n_dim + ", BLOCK_N)");
    }
    w.Line("num_pid_in_group = GROUP_M * num_pid_n");
    w.Line("first_pid_m = (pid // num_pid_in_group) * GROUP_M");
    w.Line("group_size_m = min(num_pid_m - first_pid_m, GROUP_M)");
    w.Line("pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)");
    w.Line("pid_n = (pid % num_pid_in_group) // group_size_m");
  }

  // The tile's offsets and masks, and its batch and m coordinates, from pid_b, pid_m, pid_n.
  Tile WriteTileOffsets(PythonWriter& w, KernelParams& params) {
    w.Line("offs_m = pid_m * BLOCK_M + " + Arange("BLOCK_M", ctx_.wide) + "[:, None]");
    w.Line("offs_n = pid_n * BLOCK_N + " + Arange("BLOCK_N", ctx_.wide) + "[None, :]");
    w.Line("mask_m = offs_m < " + params.Sizes(m_expr_));
    w.Line("mask_n = offs_n < " + params.Sizes(s_.n_dim));
    params.Sizes(batch_expr_);
    for (const std::string& d : s_.operand_dims) params.Sizes(d);
    Tile t;
    t.bc = DecomposeDims(w, "pid_b", s_.batch_dims, "bc");
    t.mc = DecomposeDims(w, "offs_m", s_.m_dims, "mc");
    if (batch_ == 1 && !Phased()) t.slot = "pid_m";
    return t;
  }

  // acc = the tile's sum over K (sliced: over this program's K slice).  A long K is summed
  // chunk by chunk into `part` (heuristics: accuracy); the last chunk may run past K, where
  // the operands' K masks load zeros.  Outside generic mode K is a literal or a phase's
  // constexpr: a constant-bound tl.range.  A slice's loop counts from 0 (`kk`): the
  // interpreter cannot take a program id as a tl.range bound.  The narrow path (no tl.dot)
  // adds each step's products lane by lane into a (BLOCK_M, BLOCK_K, BLOCK_N) sum and reduces
  // its K lanes once, after the loop or the chunk: a tl.sum over K in every step is a tree of
  // warp shuffles per step in a loop that should only load (a GEMV moves 8.6 GB, KernelBench
  // L1 4, and ran at 2.0 TB/s with the per-step sums, against eager's 3.7; not measured since).
  void WriteKLoop(PythonWriter& w, KernelParams& params, int& counter, const Tile& t, bool sliced) {
    w.Line("acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)");
    const bool chunked = c_.chunk_k > 0 && !ctx_.generic();
    const std::string extent = sliced ? IntLiteral(c_.k_slice) : k_expr_;
    const std::string var = sliced ? "kk" : "k0";
    const std::string tile = c_.narrow ? "[BLOCK_M, BLOCK_K, BLOCK_N]" : "[BLOCK_M, BLOCK_N]";
    const auto reduced = [&](const std::string& v) {
      return c_.narrow ? "tl.sum(" + v + ", axis=1)" : v;
    };
    std::string sum = "acc";
    if (c_.narrow && !chunked) {
      w.Line("lanes = tl.zeros(" + tile + ", dtype=tl.float32)");
      sum = "lanes";
    }
    if (chunked) {
      w.Open("for kc in tl.range(0, " + extent + ", " + IntLiteral(c_.chunk_k) + "):");
      w.Line("part = tl.zeros(" + tile + ", dtype=tl.float32)");
      w.Open("for " + var + " in tl.range(kc, kc + " + IntLiteral(c_.chunk_k) + ", BLOCK_K):");
      sum = "part";
    } else if (!ctx_.generic()) {
      w.Open("for " + var + " in tl.range(0, " + extent + ", BLOCK_K):");
    } else {
      OpenLoop(w, var, params.Sizes(k_expr_), "BLOCK_K");
    }
    if (sliced) w.Line("k0 = pid_s * " + IntLiteral(c_.k_slice) + " + kk");
    WriteKStep(w, params, t, sum, counter);
    if (chunked) {
      w.Dedent();
      w.Line("acc += " + reduced("part"));
      w.Dedent();
    } else if (!ctx_.generic()) {
      w.Dedent();
    } else {
      CloseLoop(w, var, k_expr_, "BLOCK_K");
    }
    if (c_.narrow && !chunked) w.Line("acc += " + reduced("lanes"));
    if (c_.precision == DotPrecision::kFp16x3 && !c_.narrow && !ieee_steps_)
      WriteRangeGuard(w, sliced);
  }

  // The fp16x3 split scales operands by 2^-8 into fp16, whose largest finite value is 65504:
  // an operand element past 65504 * 2^8 = 1.7e7 (or an inf) makes its hi part inf and its lo
  // part NaN, and the tile's sums inf or NaN where float32 would give a finite sum or an inf.
  // The H200 run of 2026-12-03 (results/h200-2026-12-03-f) rejected two paper-preset programs
  // for it on the verifier's scaled_10 inputs (NaN at 664,300 and 105,378 positions).  Such a
  // tile is summed again with ieee FMA products, which keep float32's range and IEEE's inf and
  // NaN.  The check is one reduction of the accumulator a program; a tile whose exact sum is
  // inf or NaN pays the second loop too and comes out the same.
  //
  // The second loop is a function of its own (noinline; WriteRangeGuardTile), which sums and
  // stores the tile and after which the program returns.  Written inline, the FMA loop's
  // operand layouts and its accumulator merged into the split's shared the kernel's registers:
  // sm_90 builds of KernelBench L1 62, 68, 70 and 71 had 1,145, 1,363, 290 and 100 spill
  // instructions (58, 59, 35 and 0 in the hot loop) against 23, 20, 0 and 0 without the guard,
  // and the H200 ran those convolutions 15-30% slower than before the guard (results
  // h200-2026-12-04c); out of line, L1 71's build has none (benchmarks/occupancy_audit.py).
  void WriteRangeGuard(PythonWriter& w, bool sliced) {
    w.Open("if DOT_PRECISION == \"fp16x3\":");
    w.Open("if tl.sum((tl.abs(acc) < float(\"inf\")).to(tl.int32)) < BLOCK_M * BLOCK_N:");
    w.Line(GuardName() + "(" + GuardPids(sliced) + ", " + kGuardArgs + ")");
    w.Line("return");
    w.Dedent();
    w.Dedent();
    guard_sliced_ = sliced;
  }

  // The out-of-line tile of WriteRangeGuard, when the kernel has one: the tile's offsets from
  // the program ids it is given, the K loop in ieee products (over a K slice where the call
  // was in one) and `tail` (the epilogue or the slice's store), as the body of a noinline
  // function (WithRangeGuardTile puts it before the kernel).
  template <typename Tail>
  void WriteRangeGuardTile(KernelParams& params, Tail tail) {
    if (!guard_sliced_.has_value()) return;
    const bool sliced = *guard_sliced_;
    PythonWriter w(1);
    int counter = 0;
    if (Phased()) s_.phase_lines(w, params);
    const Tile t = WriteTileOffsets(w, params);
    ieee_steps_ = true;
    WriteKLoop(w, params, counter, t, sliced);
    ieee_steps_ = false;
    tail(w, counter, t);
    guard_body_ = w.str();
  }

  std::string GuardName() const {
    return (guarded_name_.empty() ? ctx_.kernel_name : guarded_name_) + "_ieee_tile";
  }
  static std::string GuardPids(bool sliced) {
    return std::string(sliced ? "pid_s, " : "") + "pid, pid_b, pid_m, pid_n";
  }
  // Stands for the kernel's own parameters in the guard's call until Finish knows them all.
  static constexpr const char* kGuardArgs = "GUARD_ARGS";

  // The body of the K loop: both operand tiles and their product.  A B that the spec can
  // address flat (a conv weight) reads `ptr + flat` under the CONTIG constexpr, which the
  // wrapper sets from .is_contiguous() (see conv_spec.cc for why).
  void WriteKStep(PythonWriter& w, KernelParams& params, const Tile& t, const std::string& sum,
                  int& counter) {
    w.Line("offs_ka = k0 + " + Arange("BLOCK_K", ctx_.wide) + "[None, :]");
    w.Line("offs_kb = k0 + " + Arange("BLOCK_K", ctx_.wide) + "[:, None]");
    const Coords kca = DecomposeDims(w, "offs_ka", s_.k_dims, "ka");
    const Coords kcb = DecomposeDims(w, "offs_kb", s_.k_dims, "kb");
    Operand a = s_.a_at(w, t.bc, t.mc, kca);
    Operand b = s_.b_at(w, t.bc, kcb, "offs_n");
    a.coords = Materialize(w, a.coords, "ia");
    b.coords = Materialize(w, b.coords, "ib");
    const std::string k_mask_a = "(offs_ka < " + k_expr_ + ")";
    const std::string k_mask_b = "(offs_kb < " + k_expr_ + ")";
    const std::string m_a = RowMask(params, /*a_side=*/true, "m", "offs_m", "mask_m");
    const std::string k_a = RowMask(params, /*a_side=*/true, "k", "offs_ka", k_mask_a);
    const std::string k_b = RowMask(params, /*a_side=*/false, "k", "offs_kb", k_mask_b);
    const std::string n_b = RowMask(params, /*a_side=*/false, "n", "offs_n", "mask_n");
    w.Line("mask_a = " + m_a + " & " + k_a + (a.mask.empty() ? "" : " & " + a.mask));
    w.Line("mask_b = " + k_b + " & " + n_b + (b.mask.empty() ? "" : " & " + b.mask));
    if (Presplit()) {
      // fp16x3 on the parts the wrapper wrote first (heuristics.h, PresplitsOperand) where
      // there are some; the other modes, and an operand without parts, read float32 tiles.
      w.Open("if DOT_PRECISION == \"fp16x3\":");
      WriteFp16x3Operand(w, params, counter, t.bc, s_.a, a.coords, "a", "mask_a",
                         "(offs_m + offs_ka) * 0");
      WriteFp16x3Operand(w, params, counter, t.bc, s_.b, b.coords, "b", "mask_b",
                         "(offs_kb + offs_n) * 0");
      WriteFp16x3Products(w, sum);
      w.Dedent();
      w.Open("else:");
      WriteOperandTiles(w, params, t, a, b, counter);
      WriteProducts(w, sum, /*fp16x3=*/false);
      w.Dedent();
      return;
    }
    WriteOperandTiles(w, params, t, a, b, counter);
    WriteProducts(w, sum, c_.precision == DotPrecision::kFp16x3);
  }

  // Whether this K step reads pre-split parts (not in the range guard's ieee loop).
  bool Presplit() const { return !presplit_.empty() && !ieee_steps_; }

  // An operand's mask along tile index `index` ("m", "k" or "n", over `offs`): where the
  // wrapper may have copied the operand's rows into zero-padded ones along that index
  // (row_index_; emit_repack.cc, RepackedRowBound: why), `(offs < bound)` with the bound a
  // kernel parameter; `mask` otherwise.
  std::string RowMask(KernelParams& params, bool a_side, const std::string& index,
                      const std::string& offs, const std::string& mask) {
    if (row_index_[a_side ? 0 : 1] != index) return mask;
    const ValueId v = BehindDimSwaps(ctx_.program, ctx_.plan.materialized, a_side ? s_.a : s_.b);
    const std::string bound = params.Scalar(ctx_.program.value(v).name + "_row_bound",
                                            RepackedRowBound(ctx_, v, ctx_.DimsOf(v).back()));
    return "(" + offs + " < " + bound + ")";
  }

  // `a = ...` and `b = ...`: both operand tiles as float32, their inlined producers computed.
  void WriteOperandTiles(PythonWriter& w, KernelParams& params, const Tile& t, const Operand& a,
                         const Operand& b, int& counter) {
    const Program& p = ctx_.program;
    // One-element values (a scale, KernelBench L1 97's 1/sqrt(d)) load as scalars: as tiles of
    // lanes reading one address, the pipeliner staged them through shared memory like the
    // operands, and L1 97's tiles needed 327-491 KB of the SM's 228 (sm_90 build).
    const std::string av =
        OperandTile(w, params, counter, s_.a, a.coords, "mask_a", "(offs_m + offs_ka) * 0");
    const auto flat = [&](ExprEmitter& eb) {
      params.AddContiguousRead(b.coords, s_.b_flat(t.bc, "offs_kb", "offs_n"),
                               p.value(s_.b).shape);
      eb.SetContiguousFlag("CONTIG");
    };
    const std::string bv = s_.b_flat ? OperandTile(w, params, counter, s_.b, b.coords, "mask_b",
                                                   "(offs_kb + offs_n) * 0", flat)
                                     : OperandTile(w, params, counter, s_.b, b.coords, "mask_b",
                                                   "(offs_kb + offs_n) * 0");
    w.Line("a = " + av);
    w.Line("b = " + bv);
  }

  // An operand's float32 tile as an expression (its loads and inlined producers written to
  // `w`), with its masked lanes exactly 0 for the products.  A loaded operand has them (its
  // load's other=0.0); an inlined producer may make anything there (exp(0) = 1), so it is
  // masked again.  The select costs one more instruction per element per step beside the
  // split's six conversions: the H200's teacher GEMMs ran 124 TFLOP/s where a plain kernel
  // without it ran 147 (results/h200-2026-12-01-f).  `flat`: B's contiguous path (a conv
  // weight read `ptr + flat` under the CONTIG constexpr, which the wrapper sets from
  // .is_contiguous(); see conv_spec.cc for why).
  std::string OperandTile(PythonWriter& w, KernelParams& params, int& counter, ValueId v,
                          const Coords& coords, const std::string& mask, const std::string& zero,
                          const std::function<void(ExprEmitter&)>& flat = nullptr) {
    ExprEmitter e(ctx_.program, ctx_.plan.materialized, params, w, mask, zero, counter);
    e.LoadOneElementValuesAsScalars();
    if (flat) flat(e);
    const std::string value = e.Emit(v, coords);
    int& loads = v == s_.a ? loads_.a : loads_.b;
    loads = std::max(loads, e.tile_loads());
    // A stored one-element operand loads as an unmasked scalar (LoadOneElementValuesAsScalars):
    // masked here too, or a transposed convolution's lanes outside the window read it (a
    // synthetic log -> matmul -> conv_transpose1d of one element: every output wrong).
    const bool scalar = Product(ctx_.program.value(v).shape) == 1;
    return ctx_.plan.materialized[v.index] && !scalar
               ? value
               : "tl.where(" + mask + ", " + value + ", 0.0)";
  }

  // `xh` and `xl` (x: "a" or "b"), fp16x3's parts of an operand tile: loaded from the parts'
  // buffers at the operand's own offsets where the wrapper wrote them (EmitSplitParts), split
  // from the float32 tile otherwise.
  // `bc`: the tile's batch coordinates (a grouped convolution's group).
  void WriteFp16x3Operand(PythonWriter& w, KernelParams& params, int& counter, const Coords& bc,
                          ValueId v, const Coords& coords, const std::string& x,
                          const std::string& mask, const std::string& zero) {
    if (std::find(presplit_.begin(), presplit_.end(), v) == presplit_.end()) {
      w.Line(x + " = " + OperandTile(w, params, counter, v, coords, mask, zero));
      WriteFp16Parts(w, x, x + "h", x + "l");
      return;
    }
    const auto load_parts = [&](const std::string& at) {
      for (const char* part : {"hi", "lo"}) {
        const std::string buffer = params.Scratch(SplitPartBuffer(ctx_, v, part));
        w.Line(x + part[0] + " = tl.load(" + buffer + " + " + at + ", mask=" + mask +
               ", other=0.0)");
      }
    };
    const std::string at = params.Offset(v, coords, zero);
    if (v == s_.b && s_.b_flat) {  // a conv weight: flat where contiguous, as OperandTile
      w.Open("if CONTIG:");
      load_parts(s_.b_flat(bc, "offs_kb", "offs_n"));
      w.Dedent();
      w.Open("else:");
      load_parts(at);
      w.Dedent();
    } else {
      load_parts(at);
    }
    int& loads = v == s_.a ? loads_.a : loads_.b;
    loads = std::max(loads, 1);  // two fp16 tiles: one float32 tile's bytes
  }

  // The products of a K step into `sum` from the float32 tiles `a` and `b`.
  void WriteProducts(PythonWriter& w, const std::string& sum, bool fp16x3) {
    if (c_.narrow) {
      // A narrow N or M (heuristics: kNarrowAtMost) or a depthwise convolution's one-channel
      // groups (ChooseWindowSum): a (BLOCK_M, BLOCK_K, BLOCK_N) product added lane by lane
      // (WriteKLoop reduces K once), where tl.dot would pad the small dims to 16-wide tiles of
      // mostly zeros.
      w.Line(sum + " += a[:, :, None] * b[None, :, :]");
      return;
    }
    // DOT_PRECISION: a tensor-core split on the GPU with fp32-level accuracy (heuristics.h,
    // kDefaultDotPrecision), "ieee" in the CPU interpreter.  TF32 is 1e-3 off; tf32x3 (three
    // TF32 products) was measured on the H200 and still put a few elements of large-K
    // contractions past 1e-4 (15 of 3.1M in a linear with K ~ 2k), failing 19 of 21.
    // The wrapper chooses a split kernel's precision at launch (wrapper.cc WriteSplitChoice):
    // half inputs multiply in their own dtype on the tensor cores (the operands were loaded
    // as float32 and convert back exactly; a fused prologue's float32 result is rounded as
    // PyTorch rounds its half output), float32 ones by the split, TF32 or ieee.
    if (ieee_steps_) {  // WriteRangeGuard's second loop
      w.Line(sum + " += tl.dot(a, b, input_precision=\"ieee\")");
      return;
    }
    if (c_.precision == DotPrecision::kIeee) {
      w.Line(sum + " += tl.dot(a, b, input_precision=DOT_PRECISION)");
      return;
    }
    w.Open("if DOT_PRECISION == \"bf16\":");
    w.Line(sum + " += tl.dot(a.to(tl.bfloat16), b.to(tl.bfloat16))");
    w.Dedent();
    w.Open("elif DOT_PRECISION == \"fp16\":");
    w.Line(sum + " += tl.dot(a.to(tl.float16), b.to(tl.float16))");
    w.Dedent();
    if (fp16x3) {
      w.Open("elif DOT_PRECISION == \"fp16x3\":");
      WriteFp16Parts(w, "a", "ah", "al");
      WriteFp16Parts(w, "b", "bh", "bl");
      WriteFp16x3Products(w, sum);
      w.Dedent();
    }
    // TF32: the operands rounded to nearest first.  The tensor cores read a float32 operand's
    // top 19 bits and Triton's tf32 dot feeds them unrounded, a truncation whose error has
    // one sign and grows with K; cuBLAS and cuDNN round (cvt.rna) and their TF32 is about
    // three times as exact.  H100, KernelBench L2 4's conv2d (K = 576) at full size against
    // float64: eager in tf32 0.00107 at most, the truncating kernel 0.00294; with the search's
    // unit-scale weights every such 2-D convolution failed the tf32 mode's rule that a kernel be
    // no less exact than eager (compare.py BASELINE_ERROR_RATIO), 0.5-1% of outputs off.
    w.Open("elif DOT_PRECISION == \"tf32\":");
    w.Line("a_tf32 = " + RoundedToTf32("a"));
    w.Line("b_tf32 = " + RoundedToTf32("b"));
    w.Line(sum + " += tl.dot(a_tf32, b_tf32, input_precision=\"tf32\")");
    w.Dedent();
    w.Open("else:");
    w.Line(sum + " += tl.dot(a, b, input_precision=DOT_PRECISION)");
    w.Dedent();
  }

  // `x` rounded to TF32's 10 mantissa bits, to nearest with ties away from zero (cvt.rna's
  // rounding): add half of the dropped bits' unit, clear them.  Infinities and NaN pass as
  // they are (the carry would turn an infinity into a NaN).
  static std::string RoundedToTf32(const std::string& x) {
    return "tl.where(tl.abs(" + x + ") < float(\"inf\"), ((" + x +
           ".to(tl.uint32, bitcast=True) + 4096) & 4294959104).to(tl.float32, bitcast=True), " +
           x + ")";
  }

  // The fp16x3 split's products (heuristics.h) of the parts ah, al, bh, bl (each operand
  // scaled by 2^-8, WriteFp16Parts): the step's products from zero (hi*lo + lo*hi, then hi*hi
  // on top of them, scaled back by 2^-11) and one FMA into the running sum, whose 2^16 undoes
  // the two operands' 2^-8.
  static void WriteFp16x3Products(PythonWriter& w, const std::string& sum) {
    w.Line("lo = tl.dot(al, bh, tl.dot(ah, bl))");
    w.Line(sum + " += tl.dot(ah, bh, lo * 0.00048828125) * 65536.0");
  }

  // Bias, the elementwise consumers and the store of the group's output.  The bias is one
  // row of BLOCK_N loaded once and broadcast over the tile's rows: loaded as a full
  // (BLOCK_M, BLOCK_N) tile it took a second accumulator's registers (a 128x256 bf16 linear
  // with bias and relu, sm_90 build: 255 registers and 4 spill instructions, 170 and none as
  // a row).
  // A tile whose accumulator takes kHalvedEpilogueRegisters or more registers a thread (TMA's
  // 128 x 256 over 8 warps: 128) runs its epilogue on one half of the columns, then the other.
  // Why: the epilogue's temporaries are held beside all of acc.  sm_90 builds on the CPU
  // (occupancy_audit.py --precision bf16, 2026-12-06): KernelBench L2 29's two mish took 255
  // registers and 772 spill instructions, 94's 393, 41's 212, 53's 24, 86's 22, all after
  // the K loop.  Splitting acc's columns (reshape, permute, split) moves no data: each thread
  // holds columns of both halves.
  static constexpr int64_t kHalvedEpilogueRegisters = 128;
  // Halves of 16 columns or more (BLOCK_N a multiple of 32; every TMA tile has 64 or more).
  // Not where the epilogue ends in a row tail, which reads every column at once, unless it is
  // a group norm whose groups each half of every tile the autotuner may pick holds whole.
  // Why: KernelBench L2 37's 128 x 256 TMA tile with its 64-channel groups' norm took 255
  // registers and 82 spill instructions unhalved (occupancy_audit.py, sm_90 on the CPU).
  // `min_registers`: the accumulator's registers a thread from which it is halved.
  bool HalvesEpilogue(int64_t min_registers = kHalvedEpilogueRegisters) const {
    const int64_t threads = int64_t{c_.launch.num_warps} * 32;
    const bool whole_rows =
        ctx_.group.row_tail.valid() &&
        (!IsGroupNormTail(ctx_) || (NarrowestBlockN() / 2) % TailGroup() != 0);
    return c_.block_n % 32 == 0 && !whole_rows &&
           c_.block_m * c_.block_n / threads >= min_registers;
  }

  // The smallest BLOCK_N of the tiles the kernel may run with (its own and the autotuned).
  int64_t NarrowestBlockN() const {
    int64_t narrowest = c_.block_n;
    for (const TileChoice& t : c_.tuned) narrowest = std::min(narrowest, t.block_n);
    return narrowest;
  }

  // A group-norm row tail's channels per group (fusion.h NormGroupChannels).
  int64_t TailGroup() const {
    return NormGroupChannels(ctx_.program, ctx_.program.node(ctx_.group.row_tail));
  }

  void WriteHalvedEpilogue(PythonWriter& w, KernelParams& params, int& counter, const Tile& t) {
    w.Line("acc_lo, acc_hi = tl.split(tl.permute(tl.reshape(acc, [BLOCK_M, 2, BLOCK_N // 2]), "
           "[0, 2, 1]))");
    for (const std::string half : {"lo", "hi"}) {
      w.Line("acc = acc_" + half);
      w.Line("offs_n = pid_n * BLOCK_N + " + std::string(half == "hi" ? "BLOCK_N // 2 + " : "") +
             Arange("BLOCK_N // 2", ctx_.wide) + "[None, :]");
      w.Line("mask_n = offs_n < " + params.Sizes(s_.n_dim));
      WriteEpilogue(w, params, counter, t);
    }
  }

  // The epilogue's emitter over a (rows, BLOCK_N) tile of `mask` (bound by the caller) at
  // offs_m and offs_n: values of one element loaded as scalars, per-channel ones as one row.
  ExprEmitter TileExprs(PythonWriter& w, KernelParams& params, int& counter) const {
    ExprEmitter e(ctx_.program, ctx_.plan.materialized, params, w, "mask", kTileZero, counter);
    e.LoadOneElementValuesAsScalars();
    e.LoadRowsAlong({"offs_n"}, "mask_n", "offs_n * 0");
    return e;
  }
  static constexpr const char* kTileZero = "(offs_m + offs_n) * 0";

  // The bias as one row of BLOCK_N channels (WriteEpilogue says why).
  std::string BiasRow(PythonWriter& w, KernelParams& params, int& counter, const Coords& bc) {
    Coords ch = Materialize(w, {s_.channel(bc, "offs_n")}, "ch");
    ExprEmitter row(ctx_.program, ctx_.plan.materialized, params, w, "mask_n", "offs_n * 0",
                    counter);
    return row.Emit(s_.bias, ch);
  }

  void WriteEpilogue(PythonWriter& w, KernelParams& params, int& counter, const Tile& t) {
    w.Line("mask = mask_m & mask_n");
    const std::string zero = kTileZero;
    ExprEmitter e = TileExprs(w, params, counter);
    if (s_.bias.valid()) w.Line("acc += " + BiasRow(w, params, counter, t.bc));
    Coords out = Materialize(w, s_.out_at(t.bc, t.mc, "offs_n"), "oc");
    const Node& node = ctx_.program.node(ctx_.group.anchor);
    e.Bind(node.result, "acc");
    if (ctx_.group.row_tail_partials) return WriteRowTailPartials(w, params, e, out);
    if (ctx_.group.row_tail.valid()) out = WriteRowTail(w, e, out);
    const std::string val = e.Compute(ctx_.group.output, out);
    // Before the store: after it, L2 52's TMA kernel (bf16, sm_90 build) held 255 registers
    // and spilled 210 instructions; before, 232 and none (239 without the statistics).
    if (ctx_.group.column_stats.valid()) WriteColumnStats(w, params, val, t.slot);
    w.Line("tl.store(" + params.Address(ctx_.group.output, out, zero) + ", " + val +
           ", mask=mask)");
  }

  // Group::column_stats: the tile's count of rows, their mean and their squared deviations
  // from it per column, at (slot, statistic, channel) of ColumnStatsBuffer, before `val` is
  // rounded to the stored dtype.  Deviations from the tile's own mean, combined by Chan's
  // formula (rows_column_stats.cc): no cancellation of sums of squares.
  void WriteColumnStats(PythonWriter& w, KernelParams& params, const std::string& val,
                        const std::string& slot) {
    assert(!slot.empty() && "column statistics from a kernel without tile slots");
    const std::string n = IntLiteral(s_.n);
    w.Line("cs_n = tl.sum(mask.to(tl.float32), axis=0, keep_dims=True)");
    w.Line("cs_mean = tl.sum(tl.where(mask, " + val +
           ", 0.0), axis=0, keep_dims=True) / tl.maximum(cs_n, 1.0)");
    w.Line("cs_dev = tl.where(mask, " + val + " - cs_mean, 0.0)");
    w.Line("cs_m2 = tl.sum(cs_dev * cs_dev, axis=0, keep_dims=True)");
    const std::string ptr =
        params.Scratch(ColumnStatsBuffer(ctx_.program, ctx_.group.output));
    w.Line("cs_at = " + Atom(slot) + " * " + IntLiteral(3 * s_.n) + " + offs_n");
    w.Line("tl.store(" + ptr + " + cs_at, cs_n, mask=mask_n)");
    w.Line("tl.store(" + ptr + " + cs_at + " + n + ", cs_mean, mask=mask_n)");
    w.Line("tl.store(" + ptr + " + cs_at + " + IntLiteral(2 * s_.n) + ", cs_m2, mask=mask_n)");
  }

  // The row operator over the tile's columns (fusion.h Group::row_tail), which hold every
  // output channel (one N tile: KeepColumnsInOneTile, and the TMA kernels' BLOCK_N): bound
  // for the rest of the epilogue, whose coordinates it returns.  A reduction's result has one
  // element a row: its channel coordinate is 0 (keepdim) or gone, and only column 0 is
  // loaded and stored (`mask` narrowed).
  Coords WriteRowTail(PythonWriter& w, ExprEmitter& e, const Coords& out) {
    const Program& p = ctx_.program;
    const Node& row = p.node(ctx_.group.row_tail);
    const RowKind kind = GetOp(row.op).row;
    const std::string v = e.Compute(row.tensors[0], out);
    const auto across = [](const std::string& f, const std::string& x) {
      return "tl." + f + "(" + x + ", axis=1)[:, None]";
    };
    const auto masked = [](const std::string& x, const std::string& fill) {
      return "tl.where(mask_n, " + x + ", " + fill + ")";
    };
    const std::string r = e.NewVar("rt");
    if (kind == RowKind::kGroupNorm) {
      WriteGroupNorm(w, e, row, v, r);
      return out;
    }
    if (kind == RowKind::kSum || kind == RowKind::kMean) {
      std::string sum = across("sum", masked(v, "0.0"));
      if (kind == RowKind::kMean) sum += " / " + IntLiteral(s_.n);
      w.Line(r + " = " + sum);
    } else if (kind == RowKind::kMax || kind == RowKind::kMin) {
      // A NaN in the row makes the result NaN, as torch.amax/amin (and the rows kernel's).
      const bool max = kind == RowKind::kMax;
      w.Line(r + "_lanes = " + masked(v, max ? kMinusInf : "float('inf')"));
      w.Line(r + " = " + across(max ? "max" : "min", r + "_lanes") + " + " +
             NanOfLanes(r + "_lanes"));
    } else {  // logsumexp, softmax, log_softmax: the row's maximum taken out before exp
      w.Line(r + "_max = " + across("max", masked(v, kMinusInf)));
      w.Line(r + "_exp = " + masked("tl.exp(" + v + " - " + r + "_max)", "0.0"));
      w.Line(r + "_sum = " + across("sum", r + "_exp"));
      if (kind == RowKind::kLogsumexp) w.Line(r + " = " + r + "_max + tl.log(" + r + "_sum)");
      if (kind == RowKind::kSoftmax) w.Line(r + " = " + r + "_exp / " + r + "_sum");
      if (kind == RowKind::kLogSoftmax)
        w.Line(r + " = " + v + " - " + r + "_max - tl.log(" + r + "_sum)");
    }
    e.Bind(row.result, r);
    if (!IsReduction(kind)) return out;
    w.Line("mask = mask_m & (offs_n == 0)");
    return RowTailCoords(out);
  }

  // A group norm across the tile's columns, `v` (rows, columns) viewed as (rows, groups,
  // group): mean, then the biased variance of the deviations (as the rows kernel's single
  // pass, rows_normalize.cc), then weight and bias as rows of the tile.  Columns past C form
  // whole groups of their own (C is a multiple of the group, tiles start at multiples of
  // BLOCK_N), which the store's mask drops.
  void WriteGroupNorm(PythonWriter& w, ExprEmitter& e, const Node& norm, const std::string& v,
                      const std::string& r) {
    const std::string group = IntLiteral(TailGroup());
    w.Line(r + "_v = " + v);
    const std::string rows = r + "_v.shape[0]", cols = r + "_v.shape[1]";
    w.Line(r + "_g = tl.reshape(" + r + "_v, [" + rows + ", " + cols + " // " + group + ", " +
           group + "])");
    w.Line(r + "_mean = tl.sum(" + r + "_g, axis=2, keep_dims=True) / " + group);
    w.Line(r + "_c = " + r + "_g - " + r + "_mean");
    w.Line(r + "_var = tl.sum(" + r + "_c * " + r + "_c, axis=2, keep_dims=True) / " + group);
    const OpInfo& op = GetOp(norm.op);
    const double eps = norm.attrs[static_cast<size_t>(op.attr_index("eps"))].AsFloat();
    std::string y = "tl.reshape(" + r + "_c * (1.0 / tl.sqrt(" + r + "_var + " +
                    FloatLiteral(eps) + ")), [" + rows + ", " + cols + "])";
    const Coords channel = {"offs_n"};
    if (norm.tensors[1].valid()) y += " * " + e.Emit(norm.tensors[1], channel);
    if (norm.tensors[2].valid()) y += " + " + e.Emit(norm.tensors[2], channel);
    w.Line(r + " = " + y);
    e.Bind(norm.result, r);
  }

  // The row tail's result's coordinates from the contraction output's `at`: the channel's is
  // 0 (keepdim) or gone.
  Coords RowTailCoords(Coords at) const {
    const Program& p = ctx_.program;
    const auto axis = at.begin() + ChannelAxis(p, p.node(ctx_.group.anchor));
    if (p.node(ctx_.group.row_tail).attrs[1].b)
      *axis = "0";
    else
      at.erase(axis);
    return at;
  }

 public:
  // Group::row_tail_partials: a row's kPartialColumns-wide chunks of columns, its partial
  // statistics one per chunk in each plane of the partials buffer, at row * Chunks() + chunk;
  // a row is a (batch, m) pair, as the output's coordinates other than its channels.
  int64_t Chunks() const { return CeilDiv(s_.n, kPartialColumns); }
  int64_t TailRows() const { return batch_ * m_; }
  std::string TailBuffer() const { return ctx_.WrapperName("tail"); }
  RowKind TailKind() const { return GetOp(ctx_.program.node(ctx_.group.row_tail).op).row; }
  int TailPlanes() const { return TailKind() == RowKind::kLogsumexp ? 2 : 1; }

  // The tile's partial statistics of the row tail (RowTailFinish combines them): a sum, a
  // maximum or minimum (NaN where a lane is, as torch's), or logsumexp's chunk maximum and the
  // sum of exponentials below it (a chunk of -inf alone sums to 0 rather than NaN).
  void WriteRowTailPartials(PythonWriter& w, KernelParams& params, ExprEmitter& e,
                            const Coords& out) {
    const Node& row = ctx_.program.node(ctx_.group.row_tail);
    const RowKind kind = TailKind();
    const std::string v = e.Compute(row.tensors[0], out);
    const std::string width = IntLiteral(kPartialColumns);
    const std::string chunks = "BLOCK_N // " + width;
    const auto per_chunk = [&](const std::string& f, const std::string& x) {
      return "tl." + f + "(" + x + ", axis=2)";
    };
    const std::string r = e.NewVar("rt");
    const auto lanes = [&](const std::string& fill) {
      w.Line(r + "_lanes = tl.reshape(tl.where(mask_n, " + v + ", " + fill + "), [BLOCK_M, " +
             chunks + ", " + width + "])");
      return r + "_lanes";
    };
    std::vector<std::string> stats;
    if (kind == RowKind::kSum || kind == RowKind::kMean) {
      w.Line(r + " = " + per_chunk("sum", lanes("0.0")));
      stats = {r};
    } else if (kind == RowKind::kMax || kind == RowKind::kMin) {
      const bool max = kind == RowKind::kMax;
      const std::string x = lanes(max ? kMinusInf : "float('inf')");
      w.Line(r + " = " + per_chunk(max ? "max" : "min", x) + " + " +
             per_chunk("sum", "tl.where(" + x + " != " + x + ", " + x + ", 0.0)"));
      stats = {r};
    } else {  // logsumexp
      const std::string x = lanes(kMinusInf);
      w.Line(r + "_max = " + per_chunk("max", x));
      w.Line(r + "_shift = tl.where(" + r + "_max == " + kMinusInf + ", 0.0, " + r + "_max)");
      w.Line(r + "_sum = " + per_chunk("sum", "tl.exp(" + x + " - " + r + "_shift[:, :, None])"));
      stats = {r + "_max", r + "_sum"};
    }
    w.Line("rt_chunk = pid_n * (" + chunks + ") + tl.arange(0, " + chunks + ")[None, :]");
    w.Line("rt_at = (pid_b * " + IntLiteral(m_) + " + offs_m) * " + IntLiteral(Chunks()) +
           " + rt_chunk");
    const std::string ptr = params.Scratch(TailBuffer());
    const int64_t plane = TailRows() * Chunks();
    for (size_t i = 0; i < stats.size(); ++i) {
      const std::string at = i == 0 ? "rt_at" : "rt_at + " + IntLiteral(int64_t(i) * plane);
      w.Line("tl.store(" + ptr + " + " + at + ", " + stats[i] + ", mask=mask_m & (rt_chunk < " +
             IntLiteral(Chunks()) + "))");
    }
  }

  // The group's last kernel where its row tail spans tiles (Group::row_tail_partials): per
  // block of BLOCK_O rows, the row's partials combined (one lane a chunk), bound as the row
  // operator's result, and the rest of the epilogue computed and stored.  The GEMM's launches
  // (the TMA kernel or the pointer one) go before it, the partials allocated first.
  EmittedKernel RowTailFinish() {
    const Program& p = ctx_.program;
    const Node& row = p.node(ctx_.group.row_tail);
    KernelParams params(p, ctx_.allocated_strides());
    PythonWriter w(1);
    int counter = 0;
    const std::string chunks = IntLiteral(Chunks());
    w.Line("pid = " + ProgramId(0, ctx_.wide));
    w.Line("rows = pid * BLOCK_O + " + Arange("BLOCK_O", ctx_.wide) + "[:, None]");
    w.Line("row_mask = rows < " + IntLiteral(TailRows()));
    WriteTailCombine(w, params);
    w.Line("m_row = rows % " + IntLiteral(m_));
    w.Line("b_row = rows // " + IntLiteral(m_));
    const Coords bc = DecomposeDims(w, "b_row", s_.batch_dims, "bc");
    const Coords mc = DecomposeDims(w, "m_row", s_.m_dims, "mc");
    const Coords at = RowTailCoords(s_.out_at(bc, mc, "0"));
    const std::string zero = "rows * 0";
    ExprEmitter e(p, ctx_.plan.materialized, params, w, "row_mask", zero, counter);
    e.LoadOneElementValuesAsScalars();
    e.Bind(row.result, "rt");
    const std::string val = e.Compute(ctx_.group.output, at);
    w.Line("tl.store(" + params.Address(ctx_.group.output, at, zero) + ", " + val +
           ", mask=row_mask)");
    const int64_t block_c = NextPow2(Chunks());
    const int64_t block_o = std::clamp<int64_t>(kTailTile / block_c, 1, NextPow2(TailRows()));
    EmittedKernel k;
    k.name = ctx_.KernelNamed("tail");
    const std::string comment = GetOp(row.op).name + " over " + IntLiteral(s_.n) + " of " +
                                IntLiteral(TailRows()) + " rows from the GEMM's partials in " +
                                chunks + " chunks of " + IntLiteral(kPartialColumns);
    k.text = KernelText(k.name, comment, params, {"BLOCK_O", "BLOCK_C"}, w.str());
    k.call_args = params.args();
    k.constexprs = {"BLOCK_O=" + IntLiteral(block_o), "BLOCK_C=" + IntLiteral(block_c)};
    k.grid = "(" + IntLiteral(CeilDiv(TailRows(), block_o)) + ",)";
    k.launch.num_warps = 4;
    return k;
  }
  // The finishing kernel's tile: 4096 partials over 4 warps, 32 a thread.
  static constexpr int64_t kTailTile = 4096;

 private:
  // `rt`, the row operator's result for the block's rows, from their chunks' partials loaded
  // as one lane a chunk.
  void WriteTailCombine(PythonWriter& w, KernelParams& params) {
    const RowKind kind = TailKind();
    const std::string chunks = IntLiteral(Chunks());
    w.Line("chunks = tl.arange(0, BLOCK_C)[None, :]");
    w.Line("chunk_mask = row_mask & (chunks < " + chunks + ")");
    w.Line("at = rows * " + chunks + " + chunks");
    const std::string ptr = params.Scratch(TailBuffer());
    const auto load = [&](const std::string& name, int plane, const std::string& other) {
      const std::string at =
          plane == 0 ? "at" : "at + " + IntLiteral(int64_t(plane) * TailRows() * Chunks());
      w.Line(name + " = tl.load(" + ptr + " + " + at + ", mask=chunk_mask, other=" + other + ")");
    };
    const auto across = [](const std::string& f, const std::string& x) {
      return "tl." + f + "(" + x + ", axis=1)[:, None]";
    };
    if (kind == RowKind::kSum || kind == RowKind::kMean) {
      load("p_total", 0, "0.0");
      std::string sum = across("sum", "p_total");
      if (kind == RowKind::kMean) sum += " / " + IntLiteral(s_.n);
      w.Line("rt = " + sum);
    } else if (kind == RowKind::kMax || kind == RowKind::kMin) {
      const bool max = kind == RowKind::kMax;
      load("p_best", 0, max ? kMinusInf : "float('inf')");
      w.Line("rt = " + across(max ? "max" : "min", "p_best") + " + " + NanOfLanes("p_best"));
    } else {
      load("p_max", 0, kMinusInf);
      load("p_sum", 1, "0.0");
      w.Line("rt_max = " + across("max", "p_max"));
      w.Line("rt_shift = tl.where(rt_max == " + std::string(kMinusInf) + ", 0.0, rt_max)");
      w.Line("rt = rt_shift + tl.log(" + across("sum", "p_sum * tl.exp(p_max - rt_shift)") + ")");
    }
  }

  // `@triton.autotune` over c_.tuned: one tile per precision mode (the autotuner's key holds
  // the arguments' dtypes and DOT_PRECISION; a phased kernel's each phase, its own M), timed on
  // the GPU at the first call and cached on disk; the interpreter, which has no do_bench, runs
  // the first (the heuristic's own).
  //
  // The tiles larger than the heuristic's own (TunedTiles' 128x256 and 256x128) are for 16-bit
  // operands: with float32 ones (the splits, tf32 and ieee) a prune function leaves them out
  // before they are compiled.  As float32 tiles they rarely fit shared memory, and where they
  // did (a plain GEMM's 256x128: 224 KB in its sm_90 build) the range guard's second loop
  // spilled (1,168 local stores against none in the own tile); their builds also cost most of
  // the compile time: a 128 x 4096 x 4096 linear's three tiles took 8.2 s to build for sm_90
  // on a CPU core, 6.0 of them the 128x256 one.
  std::string TilePrune(const std::string& name) const {
    return "def " + name + "_tiles(configs, named_args, **kwargs):\n" +
           "    if kwargs[\"DOT_PRECISION\"] in (\"bf16\", \"fp16\"):\n" +
           "        return configs\n" +
           "    own = configs[0].kwargs[\"BLOCK_M\"] * configs[0].kwargs[\"BLOCK_N\"]\n" +
           "    return [c for c in configs if c.kwargs[\"BLOCK_M\"] * c.kwargs[\"BLOCK_N\"] <= " +
           "own]\n\n\n";
  }

  std::string AutotuneDecorator(const std::string& name, bool phased) const {
    std::string text = TilePrune(name) + "@triton.autotune(\n    configs=[\n";
    for (const TileChoice& t : c_.tuned)
      text += "        triton.Config({\"BLOCK_M\": " + IntLiteral(t.block_m) +
              ", \"BLOCK_N\": " + IntLiteral(t.block_n) +
              ", \"BLOCK_K\": " + IntLiteral(c_.block_k) +
              ", \"GROUP_M\": " + IntLiteral(t.group_m) +
              "}, num_warps=" + std::to_string(t.num_warps) +
              ", num_stages=" + std::to_string(t.num_stages) + "),\n";
    text += "    ][: None if torch.cuda.is_available() else 1],\n";
    text += std::string("    key=[\"DOT_PRECISION\"") + (phased ? ", \"PHASE\"" : "") + "],\n";
    text += "    prune_configs_by={\"early_config_prune\": " + name + "_tiles},\n";
    return text + "    cache_results=True,\n)\n";
  }

  // `dot`: the kernel multiplies (tl.dot, taking DOT_PRECISION, unless narrow).
  EmittedKernel Finish(const std::string& name, const KernelParams& params, PythonWriter& w,
                       bool dot, const std::string& grid) {
    const Program& p = ctx_.program;
    const Node& node = p.node(ctx_.group.anchor);
    dot = dot && !c_.narrow;
    std::vector<std::string> constexprs = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"};
    constexprs.insert(constexprs.end(), extra_constexprs_.begin(), extra_constexprs_.end());
    if (dot) constexprs.push_back("DOT_PRECISION");
    // A channels-last copy is laid out as its flat reads expect (a conv weight's (C_out, K)
    // rows): no check, CONTIG is True.
    std::vector<ValueId> copies;
    for (const ChannelsLastCopy& copy : s_.channels_last) copies.push_back(copy.value);
    const std::string check = ContiguityCheck(p, params.flat_values(), copies);
    const bool flat = !params.flat_values().empty();
    if (flat) constexprs.push_back("CONTIG");
    if (Phased() && extra_constexprs_.empty()) constexprs.push_back("PHASE");
    // Sizes as the heuristics saw them (the longest phase's), or the runtime expressions.
    const bool literal = !ctx_.generic();
    std::string shape = GetOp(node.op).name + ": M=" + (literal ? IntLiteral(m_) : m_expr_) +
                        " N=" + s_.n_dim + " K=" + (literal ? IntLiteral(k_) : k_expr_) +
                        " batch=" + batch_expr_;
    if (Phased() && extra_constexprs_.empty())
      shape += ", launched per stride phase (PHASE of " + IntLiteral(s_.phases) + ")";
    else if (Phased())
      shape += ", launched per stride phase (its PHASE0... constexprs)";
    if (c_.split_k > 1) shape += " split_k=" + IntLiteral(c_.split_k);
    EmittedKernel kernel;
    kernel.name = name;
    kernel.text = KernelText(name, shape, params, constexprs, w.str());
    kernel.call_args = params.args();
    kernel.tuned = dot && !c_.tuned.empty();
    if (kernel.tuned)
      kernel.text = AutotuneDecorator(name, Phased()) + kernel.text;
    else
      kernel.constexprs = {"BLOCK_M=" + IntLiteral(c_.block_m), "BLOCK_N=" + IntLiteral(c_.block_n),
                           "BLOCK_K=" + IntLiteral(c_.block_k),
                           "GROUP_M=" + IntLiteral(c_.group_m)};
    if (!guard_body_.empty()) kernel.text = WithRangeGuardTile(kernel.text, params, constexprs);
    if (!check.empty())
      SetContiguityFlag(kernel, check);
    else if (flat)
      kernel.constexprs.push_back("CONTIG=True");
    kernel.grid = grid;
    kernel.launch = c_.launch;
    if (dot) kernel.dot_precision = DotPrecisionName(c_.precision);
    return kernel;
  }

  // `kernel` (its text) with the call's arguments filled in and, before it, the noinline
  // function of WriteRangeGuardTile, which takes the program ids, then the kernel's own
  // parameters and constexprs but DOT_PRECISION (its products are ieee).  Consumes the body.
  std::string WithRangeGuardTile(std::string kernel, const KernelParams& params,
                                 const std::vector<std::string>& constexprs) {
    std::vector<std::string> passed = params.params(), declared = params.params();
    std::vector<std::string> flags = constexprs;
    // The epilogue in the guard's tile reads the libdevice flag as the kernel's does (the
    // kernel, whose body has the same epilogue, declares it: KernelText).
    if (UsesLibdeviceFlag(guard_body_)) flags.push_back(lowering::kLibdeviceFlag);
    for (const std::string& c : flags) {
      if (c == "DOT_PRECISION") continue;
      passed.push_back(c);
      declared.push_back(c + ": tl.constexpr");
    }
    const size_t at = kernel.find(kGuardArgs);
    assert(at != std::string::npos && "WriteRangeGuard wrote the call");
    kernel.replace(at, std::string(kGuardArgs).size(), Join(passed, ", "));
    const std::string function = "@triton.jit(noinline=True)\ndef " + GuardName() + "(" +
                                 GuardPids(*guard_sliced_) + ", " + Join(declared, ", ") +
                                 "):\n" +
                                 "    # the range guard's tile: summed again with ieee products\n" +
                                 guard_body_ + "\n\n";
    guard_body_.clear();
    guard_sliced_.reset();
    return function + kernel;
  }

  const GroupContext& ctx_;
  const ContractionSpec& s_;
  const ContractionConfig& c_;
  OperandLoads loads_{0, 0};  // the most tile loads of a K step building each operand
  bool ieee_steps_ = false;   // writing WriteRangeGuardTile's loop
  std::optional<bool> guard_sliced_;  // WriteRangeGuard wrote a call (in a sliced kernel?)
  std::string guard_body_;            // the body of its function, once written
  std::string guarded_name_;          // the guarded kernel's name when not ctx_.kernel_name
  std::vector<std::string> extra_constexprs_;  // a phased shifted-rows kernel's (Finish)
  const std::vector<ValueId> repacked_;
  const std::vector<ValueId> presplit_;
  const int64_t m_, k_, batch_;
  const std::string m_expr_, k_expr_, batch_expr_;
  // Per operand (A, B): the tile index along its rows where the wrapper may copy them into
  // padded rows (UnitStrideIndex), "" otherwise.
  std::string row_index_[2];
};

// The GPU split of a contraction whose result reaches an operator that magnifies its rounding
// (catalog: kAmplifiesError; softmax, log_softmax, exp, cumprod) through elementwise, layout
// and channelwise operators only.  fp16x3 carries 22 significant bits of each operand, bf16x6
// 24 as float32 does.  On the H200 (2026-12-04) three of the four paper-preset programs the
// verifier rejected were such chains (bmm -> mul -> softmax, conv3d -> softmax, conv3d ->
// cumprod), each a few elements of 30-172M past 1e-4 on the scaled_10 inputs.  The first,
// emulated on the CPU (6 of its 538 batches, benchmarks/dot_split_accuracy.py's step
// arithmetic): elements past the verifier's 1e-4 were 4 of 1.2M with fp16x3, 4 with exact
// float32 products per BLOCK_K step, 6 with torch's own float32 bmm, 0 with bf16x6.  bf16x6
// costs half of fp16x3's speed (72 against 147 TFLOP/s on 4096^3; still 1.4x cuBLAS strict
// SGEMM), so it is kept to these chains (amplify.h says which pass the rounding on).  Pooling
// among them (a max keeps one of its inputs, an average their mean): paper-preset program 39,
// conv_transpose1d -> max_pool1d -> cumprod, lost 1 of 370,152 elements on the H200
// (h200-2026-12-05) once its 9 output channels took fp16x3 instead of an FMA tl.dot.
DotPrecision ContractionPrecision(const GroupContext& ctx, ValueId result) {
  const bool amplified = ctx.amplified != nullptr && (*ctx.amplified)[result.index];
  return amplified ? DotPrecision::kBf16x6 : kDefaultDotPrecision;
}

// The positions a shifted-rows kernel covers per sample, over all its phases.
int64_t ShiftedReach(const ShiftedRows& r) {
  int64_t reach = 0;
  for (const ShiftedPhase& p : r.phases) reach += r.reach(p);
  return reach;
}

// Whether the shifted-rows TMA kernel of `config` computes the pool group `pool` that reads
// the convolution's output (ContractionWriter::ShiftedRowsPoolTma): a 2-D convolution of one
// phase and stride 1 (direct, or transposed of stride 1), pooled by a 2 x 2 max or average
// pool of stride 2 without padding that keeps every whole window (floor).
bool PoolTailFits(const GroupContext& ctx, const ShiftedRows& r, const ContractionConfig& config,
                  const Group& pool) {
  const auto one_step = [](int64_t s) { return s == 1; };
  if (ctx.group.row_tail.valid() || ctx.group.row_tail_partials) return false;  // its own tail
  if (!std::all_of(r.stride.begin(), r.stride.end(), one_step) || !r.fold.empty() ||
      r.phases.size() != 1 || r.grid_sp.size() != 2 || !r.batched || config.block_m != 128)
    return false;
  const PoolSpec ps = PoolSpecOf(ctx, ctx.program.node(pool.anchor));
  const std::vector<int64_t> two = {2, 2}, zero = {0, 0}, one = {1, 1};
  const std::vector<int64_t>& outs = r.phases[0].outs;
  return ps.kind != PoolSpec::kAdaptive && ps.kernel == two && ps.stride == two &&
         ps.pad == zero && ps.dil == one && ps.out_sp == Shape{outs[0] / 2, outs[1] / 2};
}

// The shifted-rows TMA kernel beside the pointer `kernel` (which then runs where it does not):
// the flag bound before the copies; with padding the TMA kernel's padded copy of the input
// and the pointer kernel's unpadded one each allocated and launched only where its kernel
// runs.
void AddShiftedRows(const GroupContext& ctx, const ContractionSpec& s,
                    const ContractionConfig& config, const Group* pool, EmittedKernel& kernel) {
  const ShiftedRows& r = *s.shifted_rows;
  ContractionWriter writer(ctx, s, config, {}, {});
  EmittedKernel tma = pool ? writer.ShiftedRowsPoolTma(r, *pool) : writer.ShiftedRowsTma(r);
  const std::string flag = tma.guard;
  if (pool) kernel.computes_pool_when = flag;
  std::vector<EmittedKernel>& before = kernel.before;
  const std::string plain_name = ChannelsLastBuffer(ctx, r.input) + "_kernel";
  const auto plain = std::find_if(before.begin(), before.end(), [&](const EmittedKernel& k) {
    return k.name == plain_name;
  });
  assert(plain != before.end() && "the input's channels-last copy");
  if (!r.pad_low.empty()) {
    EmittedKernel padded = EmitChannelsLast(ctx, ShiftedRowsInput(r));
    padded.setup[0] += " if " + flag + " else None";
    padded.guard = flag;
    plain->setup[0] += " if not " + flag + " else None";
    plain->guard = "not " + flag;
    before.insert(std::next(plain), std::move(padded));
  }
  before.front().setup.insert(before.front().setup.begin(),
                              flag + " = " + ShiftedRowsCheck(ctx.program, r));
  kernel.guard = "not " + flag;
  for (EmittedKernel& launch : before)  // a phased pointer kernel's other phases
    if (launch.name == kernel.name) launch.guard = kernel.guard;
  for (EmittedKernel& phase : tma.before) before.push_back(std::move(phase));  // other phases
  tma.before.clear();
  before.push_back(std::move(tma));
}

// BLOCK_N at least `columns`, kept by FitSharedMemory (ContractionConfig::min_block_n).  A row
// tail (fusion.h Group::row_tail) reads every output channel in one tile: their power of two
// (fusion caps them at kRowTailMaxChannels); its partials (Group::row_tail_partials) are per
// kPartialColumns columns, so BLOCK_N must be a multiple of them.  The autotuned tiles
// (TunedTiles, from this one) have the same BLOCK_N or 128 or 256.
void KeepColumnsInOneTile(int64_t columns, ContractionConfig* c) {
  c->min_block_n = columns;
  if (c->block_n >= columns) return;
  c->block_n = columns;
  c->launch.num_warps = DotWarps(c->block_m, c->block_n);
}

// The first of `kernel`'s launches (those before it, then itself) set up in every precision
// (not an fp16x3 split's, emit_split.cc): where a buffer every launch reads is allocated.
EmittedKernel& FirstSetUpInEveryPrecision(EmittedKernel& kernel) {
  auto first = std::find_if(kernel.before.begin(), kernel.before.end(),
                            [](const EmittedKernel& k) { return k.for_precision.empty(); });
  return first == kernel.before.end() ? kernel : *first;
}

// The GEMM's launches (`gemm` and those before it) go before the kernel that combines the
// row tail's partials, the partials allocated by the first launch set up in every precision
// (not an fp16x3 split's, emit_split.cc), before the GEMM's own.
EmittedKernel WithRowTailFinish(EmittedKernel gemm, EmittedKernel finish, int64_t floats,
                                const GroupContext& ctx) {
  finish.before = std::move(gemm.before);
  gemm.before.clear();
  finish.before.push_back(std::move(gemm));
  std::vector<std::string>& setup = FirstSetUpInEveryPrecision(finish).setup;
  setup.insert(setup.begin(), ScratchAllocation(ctx.program, ctx.WrapperName("tail"), floats));
  return finish;
}

// The smallest BLOCK_M of the configuration's own tile and its autotuned ones.
int64_t SmallestBlockM(const ContractionConfig& c) {
  int64_t smallest = c.block_m;
  for (const TileChoice& t : c.tuned) smallest = std::min(smallest, t.block_m);
  return smallest;
}

// The group's column statistics (Group::column_stats), `slots` of them for `channels`, zeroed
// (a slot no tile of the launched kernel wrote counts no rows) and allocated by the first
// launch set up in every precision.
EmittedKernel WithColumnStats(EmittedKernel kernel, int64_t slots, int64_t channels,
                              const GroupContext& ctx) {
  if (!ctx.group.column_stats.valid()) return kernel;
  std::vector<std::string>& setup = FirstSetUpInEveryPrecision(kernel).setup;
  setup.insert(setup.begin(), ColumnStatsBuffer(ctx.program, ctx.group.output) +
                                  " = torch.zeros((" + IntLiteral(slots) + ", 3, " +
                                  IntLiteral(channels) + "), device=" +
                                  InputDevice(ctx.program) + ", dtype=torch.float32)");
  return kernel;
}

}  // namespace

Result<EmittedKernel> EmitContraction(const GroupContext& ctx) {
  const Program& p = ctx.program;
  const Node& node = p.node(ctx.group.anchor);
  const ContractionSpec s = SpecOf(ctx, node);
  const int64_t m = Product(s.m_shape), k = Product(s.k_shape), batch = Product(s.batch_shape);
  // Generic mode: the tiles of a large problem for every shape (masks cover the edges).
  const int64_t u = kUnknownSize;
  const DotPrecision precision = ContractionPrecision(ctx, node.result);
  ContractionConfig c = s.window_sum    ? (ctx.generic() ? ChooseWindowSum(u, u, ctx.variant)
                                                         : ChooseWindowSum(m, s.n, ctx.variant))
                        : ctx.generic() ? ChooseContraction(u, u, u, 1, ctx.variant, precision)
                                        : ChooseContraction(m, s.n, k, batch, ctx.variant,
                                                            precision);
  if (ctx.group.row_tail_partials || IsGroupNormTail(ctx))
    KeepColumnsInOneTile(kPartialColumns, &c);
  else if (ctx.group.row_tail.valid())
    KeepColumnsInOneTile(std::max<int64_t>(16, NextPow2(s.n)), &c);
  if (!ctx.generic() && !s.window_sum) c.tuned = TunedTiles(c, m, s.n);
  std::vector<ValueId> repacked = RepackedOperands(ctx, s, c);
  std::vector<ValueId> presplit = PresplitOperands(ctx, s, c);
  const auto write = [&](const ContractionConfig& config, OperandLoads* loads) {
    ContractionWriter writer(ctx, s, config, repacked, presplit);
    EmittedKernel emitted = config.split_k > 1 ? writer.SplitK() : writer.Single();
    if (loads) *loads = writer.operand_loads();
    return emitted;
  };
  // The loads a K step makes are known once it is written: written again if the tiles must
  // shrink to fit shared memory (FitSharedMemory).
  OperandLoads loads;
  EmittedKernel kernel = write(c, &loads);
  const ContractionConfig wanted = c;
  FitSharedMemory(loads, &c);
  const bool refit = c.block_m != wanted.block_m || c.block_n != wanted.block_n ||
                     c.block_k != wanted.block_k || c.tuned != wanted.tuned ||
                     c.launch.num_stages != wanted.launch.num_stages;
  if (refit) kernel = write(c, nullptr);
  std::vector<EmittedKernel> copies;
  for (ValueId v : repacked) copies.push_back(EmitRepack(ctx, v));
  for (const ChannelsLastCopy& copy : s.channels_last)
    copies.push_back(EmitChannelsLast(ctx, copy));
  for (ValueId v : presplit) copies.push_back(SplitPartsOf(ctx, s, repacked, v));
  kernel.before.insert(kernel.before.begin(), copies.begin(), copies.end());
  ContractionConfig tma_config;
  // Column statistics (Group::column_stats): a slot per tile of the pointer kernel's smallest
  // BLOCK_M, or of the TMA kernel's where it has more.  Only a kernel of one phase writes them.
  const bool stats = ctx.group.column_stats.valid();
  int64_t slots = CeilDiv(m, SmallestBlockM(c));
  if (s.shifted_rows && !ctx.wide && c.split_k == 1 &&
      (!stats || s.shifted_rows->phases.size() == 1) &&
      ChooseShiftedRowsTma(s.shifted_rows->samples, ShiftedReach(*s.shifted_rows), s.n,
                           s.shifted_rows->channels, ctx.variant, &tma_config)) {
    const Group* pool = !stats && ctx.pool_after &&
                                PoolTailFits(ctx, *s.shifted_rows, tma_config, *ctx.pool_after)
                            ? ctx.pool_after
                            : nullptr;
    AddShiftedRows(ctx, s, tma_config, pool, kernel);
    const int64_t tiles_p = CeilDiv(ShiftedReach(*s.shifted_rows), tma_config.block_m);
    slots = std::max(slots, s.shifted_rows->samples * tiles_p);
    return WithColumnStats(std::move(kernel), slots, s.n, ctx);
  }
  // Not beside split-K, whose partial kernel the guard would not cover, nor a GEMV's narrow
  // path (ChooseContraction chose them for shapes the tiles serve badly).
  if (c.split_k == 1 && !c.narrow &&
      ChooseTmaContraction(m, s.n, batch, ctx.variant, &tma_config)) {
    if (const std::optional<TmaPlan> plan = TmaPlanOf(ctx, s, tma_config)) {
      ContractionWriter writer(ctx, s, tma_config, {}, {});
      EmittedKernel tma = writer.Tma(*plan);
      kernel.guard = "not " + tma.guard;
      kernel.before.push_back(std::move(tma));
      slots = std::max(slots, CeilDiv(m, tma_config.block_m));
    }
  }
  if (!ctx.group.row_tail_partials) return WithColumnStats(std::move(kernel), slots, s.n, ctx);
  ContractionWriter writer(ctx, s, c, repacked, presplit);
  const int64_t floats = int64_t{writer.TailPlanes()} * writer.TailRows() * writer.Chunks();
  return WithRowTailFinish(std::move(kernel), writer.RowTailFinish(), floats, ctx);
}

}  // namespace drtriton::codegen

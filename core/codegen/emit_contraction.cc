// Contraction kernels through tl.dot: matmul, bmm, linear, and convolution and transposed
// convolution as implicit GEMMs.  Each is C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] where
// (b, m, n, k) map to the operands' own coordinates (for a convolution m = (sample, output
// position), k = (input channel, kernel offset), n = output channel, b = group), so one
// tiled kernel in the style of the Triton matmul tutorial covers all of them.  Operands
// are gathered through their strides (masked where a window leaves the input), inlined
// producers are recomputed per tile, and bias and elementwise consumers form the epilogue.
// The convolutions' specs (stride phases of a transposed one, unclamped windows, the weight
// as a matrix) are in conv_spec.cc.
#include <cassert>
#include <string>
#include <utility>
#include <vector>

#include "codegen/contraction_spec.h"
#include "codegen/expr.h"
#include "codegen/heuristics.h"

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
  if (op.name == "linear") return LinearSpec(ctx, node);
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

// One flat grid axis (CUDA allows 2^31 - 1 programs there, 65535 on the others): batch
// entries outermost, then tiles in the matmul tutorial's grouped order (GROUP_M rows of tiles
// share B columns and A rows in L2).  `tiles` is the literal tile count of a batch entry, or
// 0 when it follows from M (runtime sizes, or a phase's own M).
void WriteTileIds(PythonWriter& w, KernelParams& params, const GroupContext& ctx,
                  const ContractionSpec& s, const std::string& m_expr, int64_t tiles) {
  w.Line("pid = " + ProgramId(0, ctx.wide));
  if (tiles == 0) {
    w.Line("num_pid_m = tl.cdiv(" + params.Sizes(m_expr) + ", BLOCK_M)");
    w.Line("num_pid_n = tl.cdiv(" + params.Sizes(s.n_dim) + ", BLOCK_N)");
    w.Line("pid_b = pid // (num_pid_m * num_pid_n)");
    w.Line("pid = pid % (num_pid_m * num_pid_n)");
  } else {
    w.Line("pid_b = pid // " + IntLiteral(tiles));
    w.Line("pid = pid % " + IntLiteral(tiles));
    w.Line("num_pid_m = tl.cdiv(" + m_expr + ", BLOCK_M)");
    w.Line("num_pid_n = tl.cdiv(" + s.n_dim + ", BLOCK_N)");
  }
  w.Line("num_pid_in_group = GROUP_M * num_pid_n");
  w.Line("first_pid_m = (pid // num_pid_in_group) * GROUP_M");
  w.Line("group_size_m = min(num_pid_m - first_pid_m, GROUP_M)");
  w.Line("pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)");
  w.Line("pid_n = (pid % num_pid_in_group) // group_size_m");
  w.Line("offs_m = pid_m * BLOCK_M + " + Arange("BLOCK_M", ctx.wide) + "[:, None]");
  w.Line("offs_n = pid_n * BLOCK_N + " + Arange("BLOCK_N", ctx.wide) + "[None, :]");
  w.Line("mask_m = offs_m < " + params.Sizes(m_expr));
  w.Line("mask_n = offs_n < " + params.Sizes(s.n_dim));
}

// The body of the K loop: both operand tiles and their product.  A B that the spec can
// address flat (a conv weight) reads `ptr + flat` under the CONTIG constexpr, which the
// wrapper sets from .is_contiguous() (see conv_spec.cc for why).
void WriteKStep(PythonWriter& w, KernelParams& params, const GroupContext& ctx,
                const ContractionSpec& s, const Coords& bc, const Coords& mc,
                const std::string& k_expr, const std::string& sum, int& counter) {
  const Program& p = ctx.program;
  w.Line("offs_ka = k0 + " + Arange("BLOCK_K", ctx.wide) + "[None, :]");
  w.Line("offs_kb = k0 + " + Arange("BLOCK_K", ctx.wide) + "[:, None]");
  const Coords kca = DecomposeDims(w, "offs_ka", s.k_dims, "ka");
  const Coords kcb = DecomposeDims(w, "offs_kb", s.k_dims, "kb");
  Operand a = s.a_at(w, bc, mc, kca);
  Operand b = s.b_at(w, bc, kcb, "offs_n");
  a.coords = Materialize(w, a.coords, "ia");
  b.coords = Materialize(w, b.coords, "ib");
  w.Line("mask_a = mask_m & (offs_ka < " + k_expr + ")" + (a.mask.empty() ? "" : " & " + a.mask));
  w.Line("mask_b = (offs_kb < " + k_expr + ") & mask_n" + (b.mask.empty() ? "" : " & " + b.mask));
  ExprEmitter ea(p, ctx.plan.materialized, params, w, "mask_a", "(offs_m + offs_ka) * 0", counter);
  const std::string av = ea.Emit(s.a, a.coords);
  ExprEmitter eb(p, ctx.plan.materialized, params, w, "mask_b", "(offs_kb + offs_n) * 0", counter);
  if (s.b_flat) {
    params.AddContiguousRead(b.coords, s.b_flat(bc, "offs_kb", "offs_n"));
    eb.SetContiguousFlag("CONTIG");
  }
  const std::string bv = eb.Emit(s.b, b.coords);
  // Masked lanes must be exactly 0 for the dot, whatever the inlined producers made.
  w.Line("a = tl.where(mask_a, " + av + ", 0.0)");
  w.Line("b = tl.where(mask_b, " + bv + ", 0.0)");
  if (s.window_sum) {  // [BLOCK_M, BLOCK_K, BLOCK_N] products summed over K, in fp32
    w.Line(sum + " += tl.sum(a[:, :, None] * b[None, :, :], axis=1)");
    return;
  }
  // DOT_PRECISION: a tensor-core split on the GPU with fp32-level accuracy (heuristics.h,
  // kDefaultDotPrecision), "ieee" in the CPU interpreter.  TF32 is 1e-3 off; tf32x3 (three
  // TF32 products) was measured on the H200 and still put a few elements of large-K
  // contractions past 1e-4 (15 of 3.1M in a linear with K ~ 2k), failing 19 of 21.
  w.Line(sum + " += tl.dot(a, b, input_precision=DOT_PRECISION)");
}

bool IsLiteralSize(const std::string& e) {
  return !e.empty() && e.find_first_not_of("0123456789") == std::string::npos;
}

// The launch grid of `m` rows (a literal or a wrapper expression).
std::string GridOf(const std::string& m, const ContractionSpec& s, const ContractionConfig& c,
                   const std::string& batch_expr) {
  if (IsLiteralSize(m) && IsLiteralSize(s.n_dim) && IsLiteralSize(batch_expr))
    return "(" +
           IntLiteral(CeilDiv(std::stoll(m), c.block_m) * CeilDiv(std::stoll(s.n_dim), c.block_n) *
                      std::stoll(batch_expr)) +
           ",)";
  const std::string bm = IntLiteral(c.block_m), bn = IntLiteral(c.block_n);
  std::string count =
      "triton.cdiv(" + m + ", " + bm + ") * triton.cdiv(" + s.n_dim + ", " + bn + ")";
  if (batch_expr != "1") count += " * " + Atom(batch_expr);
  return "(" + count + ",)";
}

// A phased spec's launches: one per phase with any output, the last carrying the kernel's
// text and the others launched first (EmittedKernel::before) with the same kernel.
void SplitIntoPhases(EmittedKernel& kernel, const ContractionSpec& s, const ContractionConfig& c,
                     const std::string& batch_expr) {
  std::vector<EmittedKernel> launches;
  for (int64_t phase = 0; phase < s.phases; ++phase) {
    const std::string m = s.phase_m(phase);
    if (m.empty()) continue;  // a stride longer than the output: no position in this phase
    EmittedKernel l = kernel;
    l.text.clear();
    l.setup.clear();
    l.constexprs.push_back("PHASE=" + IntLiteral(phase));
    l.grid = GridOf(m, s, c, batch_expr);
    launches.push_back(std::move(l));
  }
  assert(!launches.empty() && "every output position has a phase");
  launches.front().setup = kernel.setup;
  launches.back().text = kernel.text;
  kernel = launches.back();
  launches.pop_back();
  kernel.before = std::move(launches);
  if (!kernel.before.empty()) kernel.setup.clear();
}

}  // namespace

Result<EmittedKernel> EmitContraction(const GroupContext& ctx) {
  const Program& p = ctx.program;
  const Node& node = p.node(ctx.group.anchor);
  const ContractionSpec s = SpecOf(ctx, node);
  const int64_t m = Product(s.m_shape), k = Product(s.k_shape), batch = Product(s.batch_shape);
  // Generic mode: the tiles of a large problem for every shape (masks cover the edges).
  const int64_t u = kUnknownSize;
  const ContractionConfig c = s.window_sum
                                  ? (ctx.generic() ? ChooseWindowSum(u, u, u, ctx.variant)
                                                   : ChooseWindowSum(m, s.n, k, ctx.variant))
                              : ctx.generic() ? ChooseContraction(u, u, u, 1, ctx.variant)
                                              : ChooseContraction(m, s.n, k, batch, ctx.variant);
  KernelParams params(p);
  PythonWriter w(1);
  int counter = 0;
  const std::string m_expr = DimProduct(s.m_dims), k_expr = DimProduct(s.k_dims);
  const std::string batch_expr = DimProduct(s.batch_dims);
  const bool phased = s.phases > 1;
  if (phased) s.phase_lines(w, params);
  const bool literal_tiles = !ctx.generic() && !phased;
  WriteTileIds(w, params, ctx, s, m_expr,
               literal_tiles ? CeilDiv(m, c.block_m) * CeilDiv(s.n, c.block_n) : 0);
  params.Sizes(batch_expr);
  for (const std::string& d : s.operand_dims) params.Sizes(d);
  const Coords bc = DecomposeDims(w, "pid_b", s.batch_dims, "bc");
  const Coords mc = DecomposeDims(w, "offs_m", s.m_dims, "mc");
  w.Line("acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)");
  // A long K is summed chunk by chunk into `part` (heuristics: accuracy); the last chunk may
  // run past K, where the operands' K masks load zeros.  Outside generic mode K is a literal
  // or a phase's constexpr: a constant-bound tl.range.
  const bool chunked = c.chunk_k > 0 && !ctx.generic();
  std::string sum = "acc";
  if (chunked) {
    w.Open("for kc in tl.range(0, " + k_expr + ", " + IntLiteral(c.chunk_k) + "):");
    w.Line("part = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)");
    w.Open("for k0 in tl.range(kc, kc + " + IntLiteral(c.chunk_k) + ", BLOCK_K):");
    sum = "part";
  } else if (!ctx.generic()) {
    w.Open("for k0 in tl.range(0, " + k_expr + ", BLOCK_K):");
  } else {
    OpenLoop(w, "k0", params.Sizes(k_expr), "BLOCK_K");
  }
  WriteKStep(w, params, ctx, s, bc, mc, k_expr, sum, counter);
  if (chunked) {
    w.Dedent();
    w.Line("acc += part");
    w.Dedent();
  } else if (!ctx.generic()) {
    w.Dedent();
  } else {
    CloseLoop(w, "k0", k_expr, "BLOCK_K");
  }
  w.Line("mask = mask_m & mask_n");
  const std::string zero = "(offs_m + offs_n) * 0";
  ExprEmitter e(p, ctx.plan.materialized, params, w, "mask", zero, counter);
  e.LoadOneElementValuesAsScalars();
  if (s.bias.valid()) {
    Coords ch = Materialize(w, {s.channel(bc, "offs_n")}, "ch");
    w.Line("acc += " + e.Emit(s.bias, ch));
  }
  Coords out = Materialize(w, s.out_at(bc, mc, "offs_n"), "oc");
  e.Bind(node.result, "acc");
  const std::string val = e.Compute(ctx.group.output, out);
  w.Line("tl.store(" + params.Address(ctx.group.output, out, zero) + ", " + val + ", mask=mask)");

  std::vector<std::string> constexprs = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"};
  if (!s.window_sum) constexprs.push_back("DOT_PRECISION");
  std::vector<std::string> checks;
  for (ValueId v : params.flat_values()) checks.push_back(p.value(v).name + ".is_contiguous()");
  if (!checks.empty()) constexprs.push_back("CONTIG");
  if (phased) constexprs.push_back("PHASE");
  // Sizes as the heuristics saw them (the longest phase's), or the runtime expressions.
  const bool literal = !ctx.generic();
  std::string shape = GetOp(node.op).name + ": M=" + (literal ? IntLiteral(m) : m_expr) +
                      " N=" + s.n_dim + " K=" + (literal ? IntLiteral(k) : k_expr) +
                      " batch=" + batch_expr;
  if (phased) shape += ", launched per stride phase (PHASE of " + IntLiteral(s.phases) + ")";
  EmittedKernel kernel;
  kernel.name = ctx.kernel_name;
  kernel.text = KernelText(kernel.name, shape, params, constexprs, w.str());
  kernel.call_args = params.args();
  kernel.constexprs = {"BLOCK_M=" + IntLiteral(c.block_m), "BLOCK_N=" + IntLiteral(c.block_n),
                       "BLOCK_K=" + IntLiteral(c.block_k), "GROUP_M=" + IntLiteral(c.group_m)};
  if (!checks.empty()) {
    kernel.setup.push_back("contig = " + Join(checks, " and "));
    kernel.constexprs.push_back("CONTIG=contig");
  }
  kernel.grid = GridOf(literal ? IntLiteral(m) : m_expr, s, c, batch_expr);
  kernel.launch = c.launch;
  if (!s.window_sum) kernel.dot_precision = DotPrecisionName(c.precision);
  if (phased) SplitIntoPhases(kernel, s, c, batch_expr);
  return kernel;
}

}  // namespace drtriton::codegen

// Contraction kernels through tl.dot: matmul, bmm, linear, and convolution and transposed
// convolution as implicit GEMMs.  Each is C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] where
// (b, m, n, k) map to the operands' own coordinates (for a convolution m = (sample, output
// position), k = (input channel, kernel offset), n = output channel, b = group), so one
// tiled kernel in the style of the Triton matmul tutorial covers all of them.  Operands
// are gathered through their strides (masked where a window leaves the input), inlined
// producers are recomputed per tile, and bias and elementwise consumers form the epilogue.
#include <functional>
#include <string>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/expr.h"
#include "codegen/heuristics.h"

namespace drtriton::codegen {
namespace {

using Coords = std::vector<std::string>;

// An operand's coordinates plus an extra validity mask ("" = none).
struct Operand {
  Coords coords;
  std::string mask;
};

struct ContractionSpec {
  Shape batch_shape, m_shape, k_shape;
  int64_t n = 1;
  // The same as text (sizes.h): literals, or runtime sizes in generic mode.
  Dims batch_dims, m_dims, k_dims;
  std::string n_dim;
  Dims operand_dims;  // sizes only the operands' addressing reads (a convolution's input)
  ValueId a, b, bias;
  std::function<Operand(PythonWriter&, const Coords& bc, const Coords& mc, const Coords& kc)> a_at;
  std::function<Operand(PythonWriter&, const Coords& bc, const Coords& kc, const std::string& n)>
      b_at;
  std::function<Coords(const Coords& bc, const Coords& mc, const std::string& n)> out_at;
  std::function<std::string(const Coords& bc, const std::string& n)> channel;  // bias index
};

Coords Concat(Coords a, const Coords& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

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

// `c` times a size (sizes.h): a literal or a runtime size.
std::string ScaledBy(const std::string& c, const std::string& dim) {
  if (c == "0" || dim == "0") return "0";
  return dim == "1" ? c : c + " * " + Atom(dim);
}

// A channel count divided by the group count: the literal `value`, or "(x1_s0 // 2)".
std::string PerGroup(const std::string& dim, int64_t value, int64_t groups) {
  if (groups == 1) return dim;
  if (dim.find_first_not_of("0123456789") == std::string::npos) return IntLiteral(value);
  return "(" + dim + " // " + IntLiteral(groups) + ")";
}

// conv (transpose = false) and conv_transpose as implicit GEMMs, one batch entry per group.
ContractionSpec ConvSpec(const GroupContext& ctx, const Node& node, bool transpose) {
  const Program& p = ctx.program;
  const OpInfo& op = GetOp(node.op);
  const size_t nsp = static_cast<size_t>(op.spatial_dims);
  const Shape in = p.value(node.tensors[0]).shape, wt = p.value(node.tensors[1]).shape;
  const Shape out = p.value(node.result).shape;
  const bool batched = in.size() == nsp + 2;
  const size_t lead = batched ? 1 : 0;
  const auto stride = node.attrs[0].AsInts(nsp), pad = node.attrs[1].AsInts(nsp);
  const auto dil = node.attrs[transpose ? 4 : 2].AsInts(nsp);
  const int64_t groups = node.attrs[transpose ? 3 : 3].i;
  const int64_t cin_g = in[lead] / groups;
  const int64_t cout_g = out[lead] / groups;
  const Shape in_sp(in.end() - static_cast<std::ptrdiff_t>(nsp), in.end());
  const Shape out_sp(out.end() - static_cast<std::ptrdiff_t>(nsp), out.end());
  const Shape k_sp(wt.end() - static_cast<std::ptrdiff_t>(nsp), wt.end());
  // The same as text.  Weights are (C_out, C_in / groups, *k) for conv and
  // (C_in, C_out / groups, *k) for conv_transpose.
  const Dims in_d = ctx.DimsOf(node.tensors[0]), wt_d = ctx.DimsOf(node.tensors[1]);
  const Dims out_d = ctx.DimsOf(node.result);
  const std::string cin_g_dim = transpose ? PerGroup(in_d[lead], cin_g, groups) : wt_d[1];
  const std::string cout_g_dim = transpose ? wt_d[1] : PerGroup(wt_d[0], cout_g, groups);
  const Dims in_sp_d(in_d.end() - static_cast<std::ptrdiff_t>(nsp), in_d.end());
  const Dims out_sp_d(out_d.end() - static_cast<std::ptrdiff_t>(nsp), out_d.end());
  const Dims k_sp_d(wt_d.end() - static_cast<std::ptrdiff_t>(nsp), wt_d.end());

  ContractionSpec s;
  if (groups > 1) s.batch_shape = {groups};
  if (batched) s.m_shape = {in[0]};
  s.m_shape.insert(s.m_shape.end(), out_sp.begin(), out_sp.end());
  s.k_shape = {cin_g};
  s.k_shape.insert(s.k_shape.end(), k_sp.begin(), k_sp.end());
  s.n = cout_g;
  s.a = node.tensors[0];
  s.b = node.tensors[1];
  s.bias = node.tensors[2];
  auto group = [groups](const Coords& bc) { return groups > 1 ? bc[0] : std::string("0"); };
  s.a_at = [=](PythonWriter& w, const Coords& bc, const Coords& mc, const Coords& kc) {
    Operand o;
    if (batched) o.coords.push_back(mc[0]);
    const std::string chan = Sum({ScaledBy(group(bc), cin_g_dim), kc[0]});
    if (chan != "0" && chan != kc[0]) w.Line("ci = " + chan);
    o.coords.push_back(chan != "0" && chan != kc[0] ? "ci" : chan);
    std::vector<std::string> valid;
    for (size_t d = 0; d < nsp; ++d) {
      const std::string oc = mc[lead + d], kk = kc[1 + d], i = "sp" + std::to_string(d);
      if (!transpose) {  // i = o * stride - pad + k * dilation
        w.Line(i + " = " + Sum({Scaled(oc, stride[d]), IntLiteral(-pad[d]), Scaled(kk, dil[d])}));
      } else {  // o = i * stride - pad + k * dilation  =>  i = (o + pad - k * dilation) / stride
        w.Line(i + "_num = " + Sum({oc, IntLiteral(pad[d])}) + " - " + Scaled(kk, dil[d]));
        w.Line(i + " = " + i + "_num // " + IntLiteral(stride[d]));
      }
      // Validity first, then clamp, so that no address (even a masked one) leaves the input.
      std::string ok = "(" + i + " >= 0) & (" + i + " < " + in_sp_d[d] + ")";
      if (transpose)
        ok = "(" + i + "_num >= 0) & (" + i + "_num % " + IntLiteral(stride[d]) + " == 0) & " + ok;
      w.Line("ok" + std::to_string(d) + " = " + ok);
      w.Line(i + " = tl.where(ok" + std::to_string(d) + ", " + i + ", 0)");
      valid.push_back("ok" + std::to_string(d));
      o.coords.push_back(i);
    }
    o.mask = Join(valid, " & ");
    return o;
  };
  s.b_at = [=](PythonWriter&, const Coords& bc, const Coords& kc, const std::string& n) {
    Operand o;
    const std::string g = group(bc);
    if (!transpose)
      o.coords = {Sum({ScaledBy(g, cout_g_dim), n}), kc[0]};
    else
      o.coords = {Sum({ScaledBy(g, cin_g_dim), kc[0]}), n};
    o.coords.insert(o.coords.end(), kc.begin() + 1, kc.end());
    return o;
  };
  s.channel = [=](const Coords& bc, const std::string& n) {
    return Sum({ScaledBy(group(bc), cout_g_dim), n});
  };
  s.out_at = [=](const Coords& bc, const Coords& mc, const std::string& n) {
    Coords c;
    if (batched) c.push_back(mc[0]);
    c.push_back(s.channel(bc, n));
    c.insert(c.end(), mc.begin() + static_cast<std::ptrdiff_t>(lead), mc.end());
    return c;
  };
  if (groups > 1) s.batch_dims = {IntLiteral(groups)};
  if (batched) s.m_dims = {in_d[0]};
  s.m_dims.insert(s.m_dims.end(), out_sp_d.begin(), out_sp_d.end());
  s.k_dims = {cin_g_dim};
  s.k_dims.insert(s.k_dims.end(), k_sp_d.begin(), k_sp_d.end());
  s.n_dim = cout_g_dim;
  s.operand_dims = in_sp_d;
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

// Writes a contraction's kernels: one kernel (K loop, then epilogue), or with split-K a
// partial kernel per K slice (launched first, ContractionConfig::split_k) and a kernel that
// adds the slices' partial tiles in order and runs the epilogue.
class ContractionWriter {
 public:
  ContractionWriter(const GroupContext& ctx, const ContractionSpec& s, const ContractionConfig& c)
      : ctx_(ctx),
        s_(s),
        c_(c),
        m_(Product(s.m_shape)),
        k_(Product(s.k_shape)),
        batch_(Product(s.batch_shape)),
        tiles_(CeilDiv(m_, c.block_m) * CeilDiv(s.n, c.block_n)),
        m_expr_(DimProduct(s.m_dims)),
        k_expr_(DimProduct(s.k_dims)),
        batch_expr_(DimProduct(s.batch_dims)) {}

  EmittedKernel Single() {
    KernelParams params(ctx_.program);
    PythonWriter w(1);
    int counter = 0;
    const Tile t = WriteTile(w, params, /*sliced=*/false);
    WriteKLoop(w, params, counter, t, /*sliced=*/false);
    WriteEpilogue(w, params, counter, t);
    return Finish(ctx_.kernel_name, params, w, /*dot=*/true, Grid());
  }

  EmittedKernel SplitK() {
    KernelParams part_params(ctx_.program);
    PythonWriter pw(1);
    int counter = 0;
    const Tile pt = WriteTile(pw, part_params, /*sliced=*/true);
    WriteKLoop(pw, part_params, counter, pt, /*sliced=*/true);
    pw.Line("tl.store(" + part_params.Scratch(Workspace()) + " + pid_s * " +
            IntLiteral(batch_ * m_ * s_.n) + " + " + WorkspaceIndex() +
            ", acc, mask=mask_m & mask_n)");
    std::string part_name = ctx_.kernel_name;
    part_name.insert(part_name.rfind("_kernel"), "_part");
    EmittedKernel part = Finish(part_name, part_params, pw, /*dot=*/true,
                                "(" + IntLiteral(tiles_ * batch_ * c_.split_k) + ",)");
    const std::string device = ctx_.program.inputs().empty()
                                   ? "'cuda'"
                                   : ctx_.program.value(ctx_.program.inputs()[0]).name + ".device";
    part.setup.push_back(Workspace() + " = torch.empty((" +
                         IntLiteral(c_.split_k * batch_ * m_ * s_.n) + ",), device=" + device +
                         ", dtype=torch.float32)");

    KernelParams params(ctx_.program);
    PythonWriter w(1);
    const Tile t = WriteTile(w, params, /*sliced=*/false);
    w.Line("acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)");
    w.Line("ws = " + WorkspaceIndex());
    // The slices in order 0, 1, ...: the same sum on every run, whatever order the partial
    // programs ran in.
    w.Open("for sk in tl.range(0, " + IntLiteral(c_.split_k) + "):");
    w.Line("acc += tl.load(" + params.Scratch(Workspace()) + " + sk * " +
           IntLiteral(batch_ * m_ * s_.n) + " + ws, mask=mask_m & mask_n, other=0.0)");
    w.Dedent();
    WriteEpilogue(w, params, counter, t);
    EmittedKernel k = Finish(ctx_.kernel_name, params, w, /*dot=*/false, Grid());
    k.before.push_back(std::move(part));
    return k;
  }

 private:
  struct Tile {
    Coords bc, mc;
  };

  // The workspace buffer of the partial tiles (one per kernel group, as rows_split.cc's).
  std::string Workspace() const {
    return ctx_.kernel_name.substr(0, ctx_.kernel_name.find('_')) + "_acc";
  }
  // A tile element's offset in one slice of the workspace: (batch, m, n) row-major.
  std::string WorkspaceIndex() const {
    return "(pid_b * " + IntLiteral(m_) + " + offs_m) * " + IntLiteral(s_.n) + " + offs_n";
  }

  // pid -> (pid_s, pid_b, pid_m, pid_n), the tile's offsets and masks, and the batch and m
  // coordinates.  One flat grid axis (CUDA allows 2^31 - 1 programs there, 65535 on the
  // others): K slices outermost, then batch entries, then tiles in the matmul tutorial's
  // grouped order (GROUP_M rows of tiles share B columns and A rows in L2).
  Tile WriteTile(PythonWriter& w, KernelParams& params, bool sliced) {
    w.Line("pid = " + ProgramId(0, ctx_.wide));
    if (sliced) {
      w.Line("pid_s = pid // " + IntLiteral(tiles_ * batch_));
      w.Line("pid = pid % " + IntLiteral(tiles_ * batch_));
    }
    if (ctx_.generic()) {  // the tile count follows from the runtime sizes
      w.Line("num_pid_m = tl.cdiv(" + params.Sizes(m_expr_) + ", BLOCK_M)");
      w.Line("num_pid_n = tl.cdiv(" + params.Sizes(s_.n_dim) + ", BLOCK_N)");
      w.Line("pid_b = pid // (num_pid_m * num_pid_n)");
      w.Line("pid = pid % (num_pid_m * num_pid_n)");
    } else {
      w.Line("pid_b = pid // " + IntLiteral(tiles_));
      w.Line("pid = pid % " + IntLiteral(tiles_));
      w.Line("num_pid_m = tl.cdiv(" + IntLiteral(m_) + ", BLOCK_M)");
      w.Line("num_pid_n = tl.cdiv(" + IntLiteral(s_.n) + ", BLOCK_N)");
    }
    w.Line("num_pid_in_group = GROUP_M * num_pid_n");
    w.Line("first_pid_m = (pid // num_pid_in_group) * GROUP_M");
    w.Line("group_size_m = min(num_pid_m - first_pid_m, GROUP_M)");
    w.Line("pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)");
    w.Line("pid_n = (pid % num_pid_in_group) // group_size_m");
    w.Line("offs_m = pid_m * BLOCK_M + " + Arange("BLOCK_M", ctx_.wide) + "[:, None]");
    w.Line("offs_n = pid_n * BLOCK_N + " + Arange("BLOCK_N", ctx_.wide) + "[None, :]");
    w.Line("mask_m = offs_m < " + params.Sizes(m_expr_));
    w.Line("mask_n = offs_n < " + params.Sizes(s_.n_dim));
    params.Sizes(batch_expr_);
    Tile t;
    t.bc = DecomposeDims(w, "pid_b", s_.batch_dims, "bc");
    t.mc = DecomposeDims(w, "offs_m", s_.m_dims, "mc");
    return t;
  }

  // acc = the tile's sum over K (sliced: over this program's K slice).
  void WriteKLoop(PythonWriter& w, KernelParams& params, int& counter, const Tile& t, bool sliced) {
    for (const std::string& d : s_.operand_dims) params.Sizes(d);
    w.Line("acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)");
    // A long K is summed chunk by chunk into `part` (heuristics: accuracy); the last chunk
    // may run past K, where the operands' K masks load zeros.  A slice's loop counts from 0
    // (`kk`): the interpreter cannot take a program id as a tl.range bound.
    const bool chunked = c_.chunk_k > 0 && !ctx_.generic();
    const std::string extent = sliced ? IntLiteral(c_.k_slice) : k_expr_;
    const std::string var = sliced ? "kk" : "k0";
    std::string sum = "acc";
    if (chunked) {
      w.Open("for kc in tl.range(0, " + extent + ", " + IntLiteral(c_.chunk_k) + "):");
      w.Line("part = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)");
      w.Open("for " + var + " in tl.range(kc, kc + " + IntLiteral(c_.chunk_k) + ", BLOCK_K):");
      sum = "part";
    } else {
      OpenLoop(w, var, sliced ? extent : params.Sizes(k_expr_), "BLOCK_K");
    }
    if (sliced) w.Line("k0 = pid_s * " + IntLiteral(c_.k_slice) + " + kk");
    w.Line("offs_ka = k0 + " + Arange("BLOCK_K", ctx_.wide) + "[None, :]");
    w.Line("offs_kb = k0 + " + Arange("BLOCK_K", ctx_.wide) + "[:, None]");
    const Coords kca = DecomposeDims(w, "offs_ka", s_.k_dims, "ka");
    const Coords kcb = DecomposeDims(w, "offs_kb", s_.k_dims, "kb");
    Operand a = s_.a_at(w, t.bc, t.mc, kca);
    Operand b = s_.b_at(w, t.bc, kcb, "offs_n");
    a.coords = Materialize(w, a.coords, "ia");
    b.coords = Materialize(w, b.coords, "ib");
    w.Line("mask_a = mask_m & (offs_ka < " + k_expr_ + ")" +
           (a.mask.empty() ? "" : " & " + a.mask));
    w.Line("mask_b = (offs_kb < " + k_expr_ + ") & mask_n" +
           (b.mask.empty() ? "" : " & " + b.mask));
    const Program& p = ctx_.program;
    ExprEmitter ea(p, ctx_.plan.materialized, params, w, "mask_a", "(offs_m + offs_ka) * 0",
                   counter);
    const std::string av = ea.Emit(s_.a, a.coords);
    ExprEmitter eb(p, ctx_.plan.materialized, params, w, "mask_b", "(offs_kb + offs_n) * 0",
                   counter);
    const std::string bv = eb.Emit(s_.b, b.coords);
    // Masked lanes must be exactly 0 for the products, whatever the inlined producers made.
    w.Line("a = tl.where(mask_a, " + av + ", 0.0)");
    w.Line("b = tl.where(mask_b, " + bv + ", 0.0)");
    if (c_.narrow) {
      // BLOCK_N (or BLOCK_M) is 1-4: a (BLOCK_M, BLOCK_K, BLOCK_N) product and a tree sum
      // over K, where tl.dot would pad the narrow dim to 16 (heuristics: kNarrowAtMost).
      w.Line(sum + " += tl.sum(a[:, :, None] * b[None, :, :], axis=1)");
    } else {
      // DOT_PRECISION: a tensor-core split on the GPU with fp32-level accuracy (heuristics.h,
      // kDefaultDotPrecision), "ieee" in the CPU interpreter.  TF32 is 1e-3 off; tf32x3
      // (three TF32 products) was measured on the H200 and still put a few elements of
      // large-K contractions past 1e-4 (15 of 3.1M in a linear with K ~ 2k), failing 19 of 21.
      w.Line(sum + " += tl.dot(a, b, input_precision=DOT_PRECISION)");
    }
    if (chunked) {
      w.Dedent();
      w.Line("acc += part");
      w.Dedent();
    } else {
      CloseLoop(w, var, sliced ? extent : k_expr_, "BLOCK_K");
    }
  }

  // Bias, the elementwise consumers and the store of the group's output.
  void WriteEpilogue(PythonWriter& w, KernelParams& params, int& counter, const Tile& t) {
    w.Line("mask = mask_m & mask_n");
    const std::string zero = "(offs_m + offs_n) * 0";
    ExprEmitter e(ctx_.program, ctx_.plan.materialized, params, w, "mask", zero, counter);
    e.LoadOneElementValuesAsScalars();
    if (s_.bias.valid()) {
      Coords ch = Materialize(w, {s_.channel(t.bc, "offs_n")}, "ch");
      w.Line("acc += " + e.Emit(s_.bias, ch));
    }
    Coords out = Materialize(w, s_.out_at(t.bc, t.mc, "offs_n"), "oc");
    const Node& node = ctx_.program.node(ctx_.group.anchor);
    e.Bind(node.result, "acc");
    const std::string val = e.Compute(ctx_.group.output, out);
    w.Line("tl.store(" + params.Address(ctx_.group.output, out, zero) + ", " + val +
           ", mask=mask)");
  }

  std::string Grid() const {
    if (!ctx_.generic()) return "(" + IntLiteral(tiles_ * batch_) + ",)";
    const std::string bm = IntLiteral(c_.block_m), bn = IntLiteral(c_.block_n);
    std::string count =
        "triton.cdiv(" + m_expr_ + ", " + bm + ") * triton.cdiv(" + s_.n_dim + ", " + bn + ")";
    if (batch_expr_ != "1") count += " * " + Atom(batch_expr_);
    return "(" + count + ",)";
  }

  // `dot`: the kernel multiplies with tl.dot and takes DOT_PRECISION.
  EmittedKernel Finish(const std::string& name, const KernelParams& params, PythonWriter& w,
                       bool dot, const std::string& grid) const {
    const Node& node = ctx_.program.node(ctx_.group.anchor);
    dot = dot && !c_.narrow;
    std::vector<std::string> constexprs = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"};
    if (dot) constexprs.push_back("DOT_PRECISION");
    std::string comment = GetOp(node.op).name + ": M=" + m_expr_ + " N=" + s_.n_dim +
                          " K=" + k_expr_ + " batch=" + batch_expr_;
    if (c_.split_k > 1) comment += " split_k=" + IntLiteral(c_.split_k);
    EmittedKernel kernel;
    kernel.name = name;
    kernel.text = KernelText(name, comment, params, constexprs, w.str());
    kernel.call_args = params.args();
    kernel.constexprs = {"BLOCK_M=" + IntLiteral(c_.block_m), "BLOCK_N=" + IntLiteral(c_.block_n),
                         "BLOCK_K=" + IntLiteral(c_.block_k), "GROUP_M=" + IntLiteral(c_.group_m)};
    kernel.grid = grid;
    kernel.launch = c_.launch;
    if (dot) kernel.dot_precision = DotPrecisionName(c_.precision);
    return kernel;
  }

  const GroupContext& ctx_;
  const ContractionSpec& s_;
  const ContractionConfig& c_;
  const int64_t m_, k_, batch_, tiles_;
  const std::string m_expr_, k_expr_, batch_expr_;
};

}  // namespace

Result<EmittedKernel> EmitContraction(const GroupContext& ctx) {
  const Program& p = ctx.program;
  const Node& node = p.node(ctx.group.anchor);
  const ContractionSpec s = SpecOf(ctx, node);
  const int64_t m = Product(s.m_shape), k = Product(s.k_shape), batch = Product(s.batch_shape);
  // Generic mode: the tiles of a large problem for every shape (masks cover the edges).
  const ContractionConfig c =
      ctx.generic() ? ChooseContraction(kUnknownSize, kUnknownSize, kUnknownSize, 1, ctx.variant)
                    : ChooseContraction(m, s.n, k, batch, ctx.variant);
  ContractionWriter writer(ctx, s, c);
  return c.split_k > 1 ? writer.SplitK() : writer.Single();
}

}  // namespace drtriton::codegen

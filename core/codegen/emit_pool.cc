// Pooling kernels: max_pool, avg_pool and adaptive_avg_pool in 1-3 spatial dims.  A
// program owns BLOCK_O output elements (rows) and walks their windows in BLOCK_R lanes
// (the window volume, usually <= 27, fits one block); lanes outside the input are masked
// out, which is padding for max (-inf) and for avg (0, with torch's divisor rules).
// Max and average pools of literal sizes take the strip kernel instead (emit_pool_strips.cc:
// 16-byte loads, taps combined in registers); this one serves adaptive pools, generic shapes
// and windows too large to unroll.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/expr.h"
#include "codegen/heuristics.h"
#include "codegen/pool_spec.h"

namespace drtriton::codegen {
namespace {

using Coords = std::vector<std::string>;

// Largest adaptive bin along one dim: bins are [floor(o*I/O), ceil((o+1)*I/O)).
int64_t MaxBin(int64_t in, int64_t out) {
  int64_t best = 1;
  for (int64_t o = 0; o < out; ++o)
    best = std::max(best, ((o + 1) * in + out - 1) / out - (o * in) / out);
  return best;
}

}  // namespace

PoolSpec PoolSpecOf(const GroupContext& ctx, const Node& node) {
  const Program& p = ctx.program;
  const OpInfo& op = GetOp(node.op);
  PoolSpec s;
  s.nsp = static_cast<size_t>(op.spatial_dims);
  const Shape& in = p.value(node.tensors[0]).shape;
  const Shape& out = p.value(node.result).shape;
  s.in_sp.assign(in.end() - static_cast<std::ptrdiff_t>(s.nsp), in.end());
  s.out_sp.assign(out.end() - static_cast<std::ptrdiff_t>(s.nsp), out.end());
  const Dims in_dims = ctx.DimsOf(node.tensors[0]);
  s.in_dims.assign(in_dims.end() - static_cast<std::ptrdiff_t>(s.nsp), in_dims.end());
  if (op.name.rfind("adaptive", 0) == 0) {
    s.kind = PoolSpec::kAdaptive;
    for (size_t d = 0; d < s.nsp; ++d) {
      s.window.push_back(MaxBin(s.in_sp[d], s.out_sp[d]));
      const bool literal = IsLiteral(s.in_dims[d]);
      s.window_dims.push_back(literal ? IntLiteral(s.window.back())
                                      : "(" + s.in_dims[d] + " // " + IntLiteral(s.out_sp[d]) +
                                            " + 2)");
    }
    return s;
  }
  s.kind = op.name.rfind("max", 0) == 0 ? PoolSpec::kMax : PoolSpec::kAvg;
  s.kernel = node.attrs[0].AsInts(s.nsp);
  s.stride = node.attrs[1].is_none() ? s.kernel : node.attrs[1].AsInts(s.nsp);
  s.pad = node.attrs[2].AsInts(s.nsp);
  s.dil = s.kind == PoolSpec::kMax ? node.attrs[3].AsInts(s.nsp) : std::vector<int64_t>(s.nsp, 1);
  if (s.kind == PoolSpec::kAvg) s.count_include_pad = node.attrs[4].b;
  s.window = s.kernel;
  s.window_dims = LiteralDims(s.kernel);
  return s;
}

namespace {

std::string PlusPad(const std::string& dim, int64_t pad) {
  return pad == 0 ? dim : dim + " + " + IntLiteral(pad);
}

std::string Times(const std::string& c, int64_t k) {
  if (c == "0") return "0";
  return k == 1 ? c : c + " * " + IntLiteral(k);
}

// `c` times a size (a literal or a runtime size).
std::string TimesDim(const std::string& c, const std::string& dim) {
  if (c == "0") return "0";
  return dim == "1" ? c : c + " * " + dim;
}

}  // namespace

std::string AvgDivisorTerm(const GroupContext& ctx, const PoolSpec& s, size_t d,
                           const std::string& start) {
  // in + pad: a literal, or "x0_s2 + 1" for a runtime length.
  const std::string padded = ctx.generic() && !IsLiteral(s.in_dims[d])
                                 ? PlusPad(s.in_dims[d], s.pad[d])
                                 : IntLiteral(s.in_sp[d] + s.pad[d]);
  const std::string end =
      "tl.minimum(" + start + " + " + IntLiteral(s.kernel[d]) + ", " + padded + ")";
  if (s.count_include_pad) return "(" + end + " - " + start + ")";
  return "(tl.minimum(" + end + ", " + s.in_dims[d] + ") - tl.maximum(" + start + ", 0))";
}

Result<EmittedKernel> EmitPool(const GroupContext& ctx) {
  const Program& p = ctx.program;
  const Node& node = p.node(ctx.group.anchor);
  const PoolSpec s = PoolSpecOf(ctx, node);
  if (std::optional<EmittedKernel> strips = EmitPoolStrips(ctx, s)) return *std::move(strips);
  const Shape& out = p.value(node.result).shape;
  const Dims out_dims = ctx.DimsOf(node.result);
  const int64_t rows = Product(out), kv = Product(s.window);
  const std::string rows_expr = DimProduct(out_dims), kv_expr = DimProduct(s.window_dims);
  // A literal window (the kernel size, a program constant): in generic mode the row block is
  // that of a large problem (masks cover fewer rows).  A runtime window (adaptive bins in
  // generic mode): the wrapper sizes both blocks, and the window is always looped over.
  const bool runtime_window = !IsLiteral(kv_expr);
  RowsConfig config = ChooseRows(ctx.generic() ? kUnknownSize : rows, kv, ctx.variant);
  if (runtime_window) config = ChooseRows(kUnknownSize, kUnknownSize, ctx.variant);
  const bool single = !runtime_window && kv <= config.block_r;
  KernelParams params(p, ctx.allocated_strides());
  PythonWriter w(1);
  int counter = 0;

  w.Line("pid = " + ProgramId(0, ctx.wide));
  w.Line("rows = pid * BLOCK_O + tl.arange(0, BLOCK_O)[:, None]");
  w.Line("row_mask = rows < " + params.Sizes(rows_expr));
  const Coords oc = DecomposeDims(w, "rows", out_dims, "oc");
  const size_t lead = out.size() - s.nsp;
  // Window starts (and adaptive bin ends) per spatial dim, shape [BLOCK_O, 1].
  for (size_t d = 0; d < s.nsp; ++d) {
    const std::string o = oc[lead + d], ds = std::to_string(d);
    if (s.kind == PoolSpec::kAdaptive) {
      const std::string in = params.Sizes(s.in_dims[d]), on = IntLiteral(s.out_sp[d]);
      w.Line("start" + ds + " = (" + TimesDim(o, in) + ") // " + on);
      w.Line("end" + ds + " = ((" + o + " + 1) * " + in + " + " + on + " - 1) // " + on);
    } else {
      w.Line("start" + ds + " = " + Times(o, s.stride[d]) + " - " + IntLiteral(s.pad[d]));
    }
  }
  const bool is_max = s.kind == PoolSpec::kMax;
  const std::string identity = is_max ? "float('-inf')" : "0.0";
  w.Line("acc = tl.full([BLOCK_O, BLOCK_R], " + identity + ", dtype=tl.float32)");
  if (single)
    w.Line("r = " + Arange("BLOCK_R", ctx.wide) + "[None, :]");
  else {
    OpenLoop(w, "r0", params.Sizes(kv_expr), "BLOCK_R");
    w.Line("r = r0 + " + Arange("BLOCK_R", ctx.wide) + "[None, :]");
  }
  const Coords kc = DecomposeDims(w, "r", s.window_dims, "kc");
  Coords in_coords(oc.begin(), oc.begin() + static_cast<std::ptrdiff_t>(lead));
  std::string valid = "row_mask & (r < " + kv_expr + ")";
  for (size_t d = 0; d < s.nsp; ++d) {
    const std::string ds = std::to_string(d), i = "sp" + ds;
    if (s.kind == PoolSpec::kAdaptive) {
      w.Line(i + " = start" + ds + " + " + kc[d]);
      valid += " & (" + i + " < end" + ds + ")";
    } else {
      w.Line(i + " = start" + ds + " + " + Times(kc[d], s.dil[d]));
      // Validity first, then clamp, so that no address (even a masked one) leaves the input.
      w.Line("ok" + ds + " = (" + i + " >= 0) & (" + i + " < " + params.Sizes(s.in_dims[d]) + ")");
      w.Line(i + " = tl.where(ok" + ds + ", " + i + ", 0)");
      valid += " & ok" + ds;
    }
    in_coords.push_back(i);
  }
  w.Line("mask = " + valid);
  {
    ExprEmitter e(p, ctx.plan.materialized, params, w, "mask", "(rows + r) * 0", counter);
    const std::string x = e.Emit(node.tensors[0], in_coords);
    if (is_max)
      w.Line("acc = " + NanMax("acc", "tl.where(mask, " + x + ", " + identity + ")"));
    else
      w.Line("acc += tl.where(mask, " + x + ", 0.0)");
  }
  if (!single) CloseLoop(w, "r0", kv_expr, "BLOCK_R");
  // torch's max pool propagates NaN; tl.max alone drops it on the GPU (expr.h).
  if (is_max)
    w.Line("result = tl.max(acc, axis=1, keep_dims=True) + " + NanOfLanes("acc"));
  else
    w.Line("result = tl.sum(acc, axis=1, keep_dims=True)");
  if (s.kind == PoolSpec::kAdaptive) {
    std::vector<std::string> sizes;
    for (size_t d = 0; d < s.nsp; ++d)
      sizes.push_back("(end" + std::to_string(d) + " - start" + std::to_string(d) + ")");
    w.Line("result = result / (" + Join(sizes, " * ") + ")");
  } else if (s.kind == PoolSpec::kAvg) {
    std::vector<std::string> sizes;
    for (size_t d = 0; d < s.nsp; ++d)
      sizes.push_back(AvgDivisorTerm(ctx, s, d, "start" + std::to_string(d)));
    w.Line("result = result / (" + Join(sizes, " * ") + ")");
  }
  ExprEmitter tail(p, ctx.plan.materialized, params, w, "row_mask", "rows * 0", counter);
  tail.Bind(node.result, "result");
  const std::string val = tail.Compute(ctx.group.output, oc);
  w.Line("tl.store(" + params.Address(ctx.group.output, oc, "rows * 0") + ", " + val +
         ", mask=row_mask)");

  EmittedKernel k;
  k.name = ctx.kernel_name;
  k.text = KernelText(
      k.name, GetOp(node.op).name + ": window " + kv_expr + " for " + rows_expr + " outputs",
      params, {"BLOCK_O", "BLOCK_R"}, w.str());
  k.call_args = params.args();
  k.launch = config.launch;
  if (!runtime_window) {
    k.constexprs = {"BLOCK_O=" + IntLiteral(config.block_o),
                    "BLOCK_R=" + IntLiteral(config.block_r)};
    k.grid = Grid1D(rows_expr, IntLiteral(config.block_o));
    return k;
  }
  // As for rows kernels (emit_rows.cc): blocks no larger than the window and row count.
  const std::string tile = IntLiteral(config.block_r);
  k.setup = {"BLOCK_R = min(triton.next_power_of_2(" + kv_expr + "), " + tile + ")",
             "BLOCK_O = min(triton.next_power_of_2(" + rows_expr + "), " + tile + " // BLOCK_R)"};
  k.constexprs = {"BLOCK_O=BLOCK_O", "BLOCK_R=BLOCK_R"};
  k.grid = Grid1D(rows_expr, "BLOCK_O");
  return k;
}

}  // namespace drtriton::codegen

// Rows kernels: reductions over one dim (sum, mean, amax, amin, argmax, argmin, logsumexp),
// softmax and log_softmax, cumsum and cumprod, and layer/group/instance norm.  Each is a
// set of rows (the coordinates that are kept) times a reduced extent R (the coordinates
// that are combined).  A program owns BLOCK_O rows and walks R in BLOCK_R lanes: once
// when R fits one block (the input is read once and stays in registers), else in loops of
// up to three passes (statistics, second moments, write).  Elementwise producers are
// recomputed inside every pass; elementwise consumers run before the store (epilogue).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/expr.h"
#include "codegen/heuristics.h"

namespace drtriton::codegen {
namespace {

using Coords = std::vector<std::string>;

enum class RowOp {
  kSum,
  kMean,
  kMax,
  kMin,
  kArgmax,
  kArgmin,
  kLogsumexp,
  kSoftmax,
  kLogSoftmax,
  kCumsum,
  kCumprod,
  kNorm
};

// How the input's coordinates follow from (row coordinates, reduced coordinates).  The
// shapes are the program's; the dims the same as text (sizes.h: literals, or runtime sizes).
struct RowLayout {
  Shape row_shape;
  Shape r_shape;
  Dims row_dims;
  Dims r_dims;
  std::function<Coords(PythonWriter&, const Coords& row, const Coords& r)> in_coords;
  // Normalizations: coordinates of weight and bias.
  std::function<Coords(const Coords& row, const Coords& r, const Coords& in)> param_coords;
  // Reductions: coordinates of the (smaller) result; empty function = same shape as input.
  std::function<Coords(const Coords& row)> out_coords;
};

RowOp OpOf(const std::string& name) {
  if (name == "sum") return RowOp::kSum;
  if (name == "mean") return RowOp::kMean;
  if (name == "amax") return RowOp::kMax;
  if (name == "amin") return RowOp::kMin;
  if (name == "argmax") return RowOp::kArgmax;
  if (name == "argmin") return RowOp::kArgmin;
  if (name == "logsumexp") return RowOp::kLogsumexp;
  if (name == "softmax") return RowOp::kSoftmax;
  if (name == "log_softmax") return RowOp::kLogSoftmax;
  if (name == "cumsum") return RowOp::kCumsum;
  if (name == "cumprod") return RowOp::kCumprod;
  return RowOp::kNorm;
}

bool IsReduction(RowOp op) { return op <= RowOp::kLogsumexp; }

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
  l.in_coords = [d](PythonWriter&, const Coords& row, const Coords& r) {
    Coords c = row;
    c.insert(c.begin() + d, r[0]);
    return c;
  };
  l.out_coords = [d, keepdim](const Coords& row) {
    Coords c = row;
    if (keepdim) c.insert(c.begin() + d, "0");
    return c;
  };
  return l;
}

// Trailing dims from `first` on are reduced (layer_norm, instance_norm).
RowLayout Trailing(const Shape& in, const Dims& dims, size_t first, bool params_per_channel) {
  RowLayout l;
  const auto split = static_cast<std::ptrdiff_t>(first);
  l.row_shape.assign(in.begin(), in.begin() + split);
  l.r_shape.assign(in.begin() + split, in.end());
  l.row_dims.assign(dims.begin(), dims.begin() + split);
  l.r_dims.assign(dims.begin() + split, dims.end());
  l.in_coords = [](PythonWriter&, const Coords& row, const Coords& r) {
    Coords c = row;
    c.insert(c.end(), r.begin(), r.end());
    return c;
  };
  l.param_coords = [params_per_channel](const Coords&, const Coords& r, const Coords& coords) {
    return params_per_channel ? Coords{coords[1]} : r;
  };
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
  l.in_coords = [per_group_dim](PythonWriter& w, const Coords& row, const Coords& r) {
    std::string channel;
    if (row[1] == "0")
      channel = r[0];
    else if (r[0] == "0")
      channel = row[1] + " * " + per_group_dim;
    else
      channel = row[1] + " * " + per_group_dim + " + " + r[0];
    if (channel != "0") {
      w.Line("chan = " + channel);
      channel = "chan";
    }
    Coords c = {row[0], channel};
    c.insert(c.end(), r.begin() + 1, r.end());
    return c;
  };
  l.param_coords = [](const Coords&, const Coords&, const Coords& coords) {
    return Coords{coords[1]};
  };
  return l;
}

RowLayout LayoutOf(const GroupContext& ctx, const Node& node, RowOp op) {
  const Shape& in = ctx.program.value(node.tensors[0]).shape;
  const Dims dims = ctx.DimsOf(node.tensors[0]);
  const std::string& name = GetOp(node.op).name;
  if (op != RowOp::kNorm) {
    const bool keepdim = IsReduction(op) && node.attrs[1].b;
    return AlongDim(in, dims, NormDim(node.attrs[0].i, in.size()), keepdim);
  }
  if (name == "layer_norm") return Trailing(in, dims, in.size() - node.attrs[0].ints.size(), false);
  if (name == "instance_norm") return Trailing(in, dims, 2, true);
  return Groups(in, dims, node.attrs[0].i);  // group_norm
}

class RowsEmitter {
 public:
  RowsEmitter(const GroupContext& ctx, const Node& node)
      : ctx_(ctx),
        p_(ctx.program),
        node_(node),
        op_(OpOf(GetOp(node.op).name)),
        layout_(LayoutOf(ctx, node, op_)),
        params_(p_) {
    rows_ = Product(layout_.row_shape);
    r_ = Product(layout_.r_shape);
    rows_expr_ = DimProduct(layout_.row_dims);
    r_expr_ = DimProduct(layout_.r_dims);
    // Generic mode: block caps for a large problem (the wrapper shrinks the blocks to the
    // runtime sizes), and always the loop over R, which is right for every R.
    const int64_t rows_hint = ctx.generic() ? kUnknownSize : rows_;
    const int64_t r_hint = ctx.generic() ? kUnknownSize : r_;
    config_ = Sequential() ? ChooseSequentialRows(rows_hint, ctx.variant)
                           : ChooseRows(rows_hint, r_hint, ctx.variant, ReducesInnermost());
    single_ = !ctx.generic() && r_ <= config_.block_r;
  }

  // cumprod walks R one element at a time (heuristics.h: ChooseSequentialRows).
  bool Sequential() const { return op_ == RowOp::kCumprod; }

  // True unless an along-dim operator reduces a dim with non-unit dims after it.
  bool ReducesInnermost() const {
    if (op_ == RowOp::kNorm) return true;
    const Shape& in = p_.value(node_.tensors[0]).shape;
    const int d = NormDim(node_.attrs[0].i, in.size());
    return Product(in, static_cast<size_t>(d) + 1) == 1;
  }

  EmittedKernel Emit() {
    w_.Line("pid = " + ProgramId(0, ctx_.wide));
    w_.Line("rows = pid * BLOCK_O + tl.arange(0, BLOCK_O)[:, None]");
    w_.Line("row_mask = rows < " + params_.Sizes(rows_expr_));
    row_ = DecomposeDims(w_, "rows", layout_.row_dims, "rc");
    EmitOp();
    EmittedKernel k;
    k.name = ctx_.kernel_name;
    k.text = KernelText(k.name,
                        GetOp(node_.op).name + " over " + r_expr_ + " of " + rows_expr_ + " rows",
                        params_, {"BLOCK_O", "BLOCK_R"}, w_.str());
    k.call_args = params_.args();
    k.launch = config_.launch;
    if (!ctx_.generic()) {
      k.constexprs = {"BLOCK_O=" + IntLiteral(config_.block_o),
                      "BLOCK_R=" + IntLiteral(config_.block_r)};
      k.grid = Grid1D(rows_expr_, IntLiteral(config_.block_o));
      return k;
    }
    // Blocks no larger than the runtime row (and row count), capped at the tile.
    const std::string cap_r = IntLiteral(config_.block_r);
    const std::string cap_o =
        ReducesInnermost() && !Sequential() ? cap_r + " // BLOCK_R" : IntLiteral(config_.block_o);
    k.setup = {"BLOCK_R = min(triton.next_power_of_2(" + r_expr_ + "), " + cap_r + ")",
               "BLOCK_O = min(triton.next_power_of_2(" + rows_expr_ + "), " + cap_o + ")"};
    k.constexprs = {"BLOCK_O=BLOCK_O", "BLOCK_R=BLOCK_R"};
    k.grid = Grid1D(rows_expr_, "BLOCK_O");
    return k;
  }

  // The row length R as a divisor: "8.0" for literals, the runtime size otherwise.
  std::string RCount() const {
    return ctx_.generic() ? Atom(r_expr_) : FloatLiteral(static_cast<double>(r_));
  }

 private:
  // Starts a pass over R: a loop (or, when R fits one block, straight-line code shared by
  // every pass) and returns the input at (rows, r).
  std::string OpenPass() {
    if (single_ && scope_) return x_;
    if (!single_) {
      OpenLoop(w_, "r0", params_.Sizes(r_expr_), "BLOCK_R");
      w_.Line("r = r0 + " + Arange("BLOCK_R", ctx_.wide) + "[None, :]");
    } else {
      w_.Line("r0 = 0");
      w_.Line("r = " + Arange("BLOCK_R", ctx_.wide) + "[None, :]");
    }
    w_.Line("mask = row_mask & (r < " + params_.Sizes(r_expr_) + ")");
    r_coords_ = DecomposeDims(w_, "r", layout_.r_dims, "kc");
    in_coords_ = layout_.in_coords(w_, row_, r_coords_);
    scope_ = std::make_unique<ExprEmitter>(p_, ctx_.plan.materialized, params_, w_, "mask",
                                           "(rows + r) * 0", counter_);
    x_ = scope_->Emit(node_.tensors[0], in_coords_);
    return x_;
  }
  void ClosePass() {
    if (!single_) CloseLoop(w_, "r0", r_expr_, "BLOCK_R");
  }

  // acc = combine(acc, where(mask, f(x), identity)) over R, then reduce to `name`.
  // `propagate_nan`: a NaN in the row makes a max/min NaN (torch.amax/amin). Softmax and
  // logsumexp do not need it for their row max: a NaN reaches their row sum anyway.
  void Accumulate(const std::string& name, const std::string& f_of_x, const std::string& kind,
                  bool propagate_nan = false) {
    const bool is_max = kind == "max", is_min = kind == "min";
    const std::string identity = is_max ? "float('-inf')" : is_min ? "float('inf')" : "0.0";
    w_.Line("acc = tl.full([BLOCK_O, BLOCK_R], " + identity + ", dtype=tl.float32)");
    const std::string x = OpenPass();
    std::string v = f_of_x;
    for (size_t pos; (pos = v.find("{x}")) != std::string::npos;) v.replace(pos, 3, x);
    const std::string masked = "tl.where(mask, " + v + ", " + identity + ")";
    if (is_max && propagate_nan)
      w_.Line("acc = " + NanMax("acc", masked));
    else if (is_min && propagate_nan)
      w_.Line("acc = " + NanMin("acc", masked));
    else if (is_max || is_min)
      w_.Line("acc = tl." + std::string(is_max ? "maximum" : "minimum") + "(acc, " + masked + ")");
    else
      w_.Line("acc += " + masked);
    ClosePass();
    std::string reduced = "tl." + kind + "(acc, axis=1, keep_dims=True)";
    if (propagate_nan && (is_max || is_min)) reduced += " + " + NanOfLanes("acc");
    w_.Line(name + " = " + reduced);
  }

  // Stores the group's output at `coords`, computing the epilogue from `val`.
  void Store(const std::string& val, const Coords& coords, const std::string& mask,
             const std::string& zero) {
    ExprEmitter* e = scope_.get();
    std::unique_ptr<ExprEmitter> tail;
    if (IsReduction(op_)) {
      tail = std::make_unique<ExprEmitter>(p_, ctx_.plan.materialized, params_, w_, mask, zero,
                                           counter_);
      e = tail.get();
    }
    // Formulas use their inputs as atoms: bind a variable, never an expression.
    std::string var = val;
    if (val.find_first_of(" (") != std::string::npos) {
      var = "result";
      w_.Line(var + " = " + val);
    }
    e->Bind(node_.result, var);
    const std::string out = e->Compute(ctx_.group.output, coords);
    w_.Line("tl.store(" + params_.Address(ctx_.group.output, coords, zero) + ", " + out +
            ", mask=" + mask + ")");
  }
  void StoreReduced(const std::string& val) {
    Store(val, layout_.out_coords(row_), "row_mask", "rows * 0");
  }
  void StoreElements(const std::string& val) { Store(val, in_coords_, "mask", "(rows + r) * 0"); }

  void EmitOp();
  void EmitArg(bool is_max);
  void EmitScan(bool is_prod);
  void EmitNorm();

  const GroupContext& ctx_;
  const Program& p_;
  const Node& node_;
  RowOp op_;
  RowLayout layout_;
  KernelParams params_;
  PythonWriter w_{1};
  int counter_ = 0;
  int64_t rows_ = 1, r_ = 1;
  std::string rows_expr_, r_expr_;  // the same as text (sizes.h)
  RowsConfig config_;
  bool single_ = true;
  Coords row_, r_coords_, in_coords_;
  std::unique_ptr<ExprEmitter> scope_;
  std::string x_;
};

void RowsEmitter::EmitOp() {
  const std::string r = RCount();
  switch (op_) {
    case RowOp::kSum:
    case RowOp::kMean:
      Accumulate("total", "{x}", "sum");
      StoreReduced(op_ == RowOp::kMean ? "total / " + r : "total");
      return;
    case RowOp::kMax:
    case RowOp::kMin:
      Accumulate("result", "{x}", op_ == RowOp::kMax ? "max" : "min", /*propagate_nan=*/true);
      StoreReduced("result");
      return;
    case RowOp::kArgmax:
    case RowOp::kArgmin:
      return EmitArg(op_ == RowOp::kArgmax);
    case RowOp::kLogsumexp:
      Accumulate("row_max", "{x}", "max");
      Accumulate("row_sum", "tl.exp({x} - row_max)", "sum");
      StoreReduced("row_max + tl.log(row_sum)");
      return;
    case RowOp::kSoftmax:
    case RowOp::kLogSoftmax: {
      Accumulate("row_max", "{x}", "max");
      Accumulate("row_sum", "tl.exp({x} - row_max)", "sum");
      const std::string x = OpenPass();
      const std::string y = op_ == RowOp::kSoftmax ? "tl.exp(" + x + " - row_max) / row_sum"
                                                   : x + " - row_max - tl.log(row_sum)";
      w_.Line("out = " + y);
      StoreElements("out");
      ClosePass();
      return;
    }
    case RowOp::kCumsum:
    case RowOp::kCumprod:
      return EmitScan(op_ == RowOp::kCumprod);
    case RowOp::kNorm:
      return EmitNorm();
  }
}

// First index of the max (min) as torch does: the block's first extreme lane, kept
// across blocks only when a later block is strictly better.
void RowsEmitter::EmitArg(bool is_max) {
  const std::string worst = is_max ? "float('-inf')" : "float('inf')";
  const std::string red = is_max ? "max" : "min";
  const std::string n = ctx_.generic() ? Atom(params_.Sizes(r_expr_)) : IntLiteral(r_);
  w_.Line("best_v = tl.full([BLOCK_O, 1], " + worst + ", dtype=tl.float32)");
  w_.Line("best_i = tl.zeros([BLOCK_O, 1], dtype=tl.int32)");
  // torch ranks NaN above everything (argmax and argmin alike): the first NaN wins.  A
  // runtime size is added to zeros: tl.full takes a compile-time fill value.
  if (ctx_.generic())
    w_.Line("first_nan = tl.zeros([BLOCK_O, 1], dtype=tl.int32) + " + n);
  else
    w_.Line("first_nan = tl.full([BLOCK_O, 1], " + n + ", dtype=tl.int32)");
  const std::string x = OpenPass();
  w_.Line("is_nan = mask & (" + x + " != " + x + ")");
  w_.Line("first_nan = tl.minimum(first_nan, tl.min(tl.where(is_nan, r, " + n +
          "), axis=1, keep_dims=True))");
  w_.Line("xm = tl.where(mask & ~is_nan, " + x + ", " + worst + ")");
  w_.Line("blk_v = tl." + red + "(xm, axis=1, keep_dims=True)");
  w_.Line("blk_i = tl.arg" + red + "(xm, axis=1, tie_break_left=True, keep_dims=True) + r0");
  w_.Line(std::string("better = blk_v ") + (is_max ? ">" : "<") + " best_v");
  w_.Line("best_i = tl.where(better, blk_i, best_i)");
  w_.Line("best_v = tl.where(better, blk_v, best_v)");
  ClosePass();
  w_.Line("best_i = tl.where(first_nan < " + n + ", first_nan, best_i)");
  StoreReduced("best_i.to(tl.int64)");
}

// A running carry joins the blocks: cumsum adds it, cumprod multiplies by it; the last
// lane of each block's scan (masked lanes hold the identity) is the next carry.  cumprod's
// blocks are one element wide, so its product is sequential, as torch's.
void RowsEmitter::EmitScan(bool is_prod) {
  const std::string identity = is_prod ? "1.0" : "0.0";
  // torch's CPU cumprod multiplies in float64 and rounds each output; its CUDA one scans in
  // float32.  A float64 running product is right for both where the verifier's float64
  // evaluation arbitrates (a float32 product overflowing before a later 0 is inf * 0 = NaN).
  const std::string carry_type = is_prod ? "tl.float64" : "tl.float32";
  w_.Line("carry = tl.full([BLOCK_O, 1], " + identity + ", dtype=" + carry_type + ")");
  const std::string x = OpenPass();
  w_.Line("xm = tl.where(mask, " + x + ", " + identity + ")");
  if (is_prod) {  // BLOCK_R is 1: the running product is the output and the next carry
    w_.Line("out = carry * xm.to(tl.float64)");
    StoreElements("out.to(tl.float32)");
    if (!single_) w_.Line("carry = out");
    ClosePass();
    return;
  }
  w_.Line("out = tl.cumsum(xm, axis=1) + carry");
  StoreElements("out");
  if (!single_) {
    w_.Line("last = tl.arange(0, BLOCK_R)[None, :] == BLOCK_R - 1");
    w_.Line("carry = tl.sum(tl.where(last, out, 0.0), axis=1, keep_dims=True)");
  }
  ClosePass();
}

// Mean, then the biased variance from a second pass over (x - mean) (more accurate than
// E[x^2] - mean^2), then (x - mean) * rstd * weight + bias.
void RowsEmitter::EmitNorm() {
  const std::string name = GetOp(node_.op).name;
  const std::string r = RCount();
  double eps = node_.attrs.back().AsFloat();
  ValueId weight, bias;
  if (name == "layer_norm" || name == "group_norm") {
    weight = node_.tensors[1];
    bias = node_.tensors[2];
  } else {  // instance_norm(input, running_mean, running_var, weight, bias, ...)
    weight = node_.tensors[3];
    bias = node_.tensors[4];
  }
  Accumulate("row_sum", "{x}", "sum");
  w_.Line("mean = row_sum / " + r);
  Accumulate("row_var", "({x} - mean) * ({x} - mean)", "sum");
  w_.Line("rstd = 1.0 / tl.sqrt(row_var / " + r + " + " + FloatLiteral(eps) + ")");
  const std::string x = OpenPass();
  std::string y = "(" + x + " - mean) * rstd";
  const Coords pc = layout_.param_coords(row_, r_coords_, in_coords_);
  if (weight.valid()) y += " * " + scope_->Emit(weight, pc);
  if (bias.valid()) y += " + " + scope_->Emit(bias, pc);
  w_.Line("out = " + y);
  StoreElements("out");
  ClosePass();
}

}  // namespace

Result<EmittedKernel> EmitRows(const GroupContext& ctx) {
  const Node& node = ctx.program.node(ctx.group.anchor);
  RowsEmitter emitter(ctx, node);
  return emitter.Emit();
}

}  // namespace drtriton::codegen

// Rows kernels: reductions over one dim (sum, mean, amax, amin, argmax, argmin, logsumexp),
// softmax and log_softmax, cumsum and cumprod, and layer/group/instance norm (rows.h: the
// layout).  A program owns BLOCK_O rows and walks their reduced extent R in blocks of
// BLOCK_R lanes.  Each byte moves as few times as the operator allows:
// - A row that fits one block (heuristics.h: OnePassLimit) is read once: straight-line code
//   loads it, reduces it and, for softmax and norms, normalizes the same registers.
// - Longer rows: reductions and scans read them once, in one loop; softmax and norms take two
//   passes, running statistics (online softmax: a running max and a rescaled sum per lane;
//   Welford: a running mean and squared deviations per lane) and then the write.  The first
//   block stays in registers from the first pass to the second, so that in generic-shape
//   mode, where R is a runtime size, a row that fits one block is still read once (both
//   loops then run zero times).
// - A contiguous input is addressed as row * R + r (`row_off + r`) under a CONTIG flag that
//   the wrapper sets, where the strided path would split r into several coordinates with a
//   division per element (a norm over (H, W)); outputs, allocated by the wrapper, always are.
// - Norm weights and biases vary per row (instance_norm: loaded once per row), along R
//   (layer_norm: one [1, BLOCK_R] load per block, shared by its rows) or per element
//   (group_norm: the channel of each element).
// Elementwise producers are recomputed inside every pass; elementwise consumers run before
// the store (epilogue).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/expr.h"
#include "codegen/heuristics.h"
#include "codegen/rows.h"

namespace drtriton::codegen {
namespace {

constexpr const char* kMinusInf = "float('-inf')";

// Reduced dims that are not 1: with two or more, a strided address divides per element.
int NonUnitDims(const Dims& dims) {
  int n = 0;
  for (const auto& d : dims) n += d != "1";
  return n;
}

class RowsEmitter {
 public:
  RowsEmitter(const GroupContext& ctx, const Node& node)
      : ctx_(ctx),
        p_(ctx.program),
        node_(node),
        op_(RowOpOf(GetOp(node.op).name)),
        layout_(LayoutOf(ctx, node, op_)),
        params_(p_) {
    rows_ = Product(layout_.row_shape);
    r_ = Product(layout_.r_shape);
    rows_expr_ = DimProduct(layout_.row_dims);
    r_expr_ = DimProduct(layout_.r_dims);
    // Generic mode: block caps for a large problem (the wrapper shrinks the blocks to the
    // runtime sizes), and the loops, which run zero times past a row that fits.
    const int64_t rows_hint = ctx.generic() ? kUnknownSize : rows_;
    const int64_t r_hint = ctx.generic() ? kUnknownSize : r_;
    config_ = Sequential() ? ChooseSequentialRows(rows_hint, ctx.variant)
                           : ChooseReduceRows(rows_hint, r_hint, ctx.variant, ReducesInnermost());
    single_ = !ctx.generic() && r_ <= config_.block_r;
    contiguous_ = layout_.trailing && NonUnitDims(layout_.r_dims) >= 2;
  }

  EmittedKernel Emit();

 private:
  // cumprod walks R one element at a time (heuristics.h: ChooseSequentialRows).
  bool Sequential() const { return op_ == RowOp::kCumprod; }
  // True unless an along-dim operator reduces a dim with non-unit dims after it.
  bool ReducesInnermost() const { return op_ == RowOp::kNorm || layout_.trailing; }
  // Softmax and norms store one value per input element and need the row's statistics
  // first: the operators with two passes over a long row.
  bool TwoPasses() const {
    return op_ == RowOp::kSoftmax || op_ == RowOp::kLogSoftmax || op_ == RowOp::kNorm;
  }
  // The row length R: an int expression (runtime sizes registered as parameters), and as a
  // divisor ("8.0" for literals, the runtime size otherwise).
  std::string R() { return params_.Sizes(r_expr_); }
  std::string RCount() const {
    return ctx_.generic() ? Atom(r_expr_) : FloatLiteral(static_cast<double>(r_));
  }
  std::string Schedule() const;

  std::unique_ptr<ExprEmitter> NewScope(const std::string& mask, const std::string& zero) {
    auto scope = std::make_unique<ExprEmitter>(p_, ctx_.plan.materialized, params_, w_, mask, zero,
                                               counter_);
    if (contiguous_) scope->SetContiguousFlag("CONTIG");
    return scope;
  }

  // Writes `r` and `mask` for the block of R starting at `start` ("0", "r0") and opens a
  // scope over it; returns the input at (rows, r).
  std::string OpenBlock(const std::string& start);
  // `body` on every block from `from` on ("0" or "BLOCK_R"): a loop over R, or, when the row
  // fits one block, the first block alone in straight-line code (and nothing after it).
  void ForEachBlock(const std::string& from, const std::function<void(const std::string&)>& body);
  // After the statistics pass: `r` and `mask` of the first block again, and its scope, whose
  // values are still in registers.  Returns the input there.
  std::string ReopenFirstBlock();

  void Accumulate(const std::string& name, const std::string& f_of_x, const std::string& kind,
                  bool propagate_nan = false);
  void Store(const std::string& val, const Coords& coords, const std::string& mask,
             const std::string& zero, const std::string& address);
  void StoreReduced(const std::string& val);
  void StoreElements(const std::string& val);

  void EmitOp();
  void EmitArg(bool is_max);
  void EmitScan(bool is_prod);
  void EmitLogsumexp();
  void EmitSoftmax(bool log);
  void EmitNorm();
  // Online softmax statistics: running max `m_acc` and sum of exp(x - m_acc) per lane.
  void MaxSumInit();
  void MaxSumUpdate(const std::string& x);
  void MaxSumFinish();
  // Welford statistics per lane: running mean and sum of squared deviations.
  void WelfordFirst(const std::string& x);
  void WelfordUpdate(const std::string& x);
  void WelfordFinish();
  // The normalized row at the current block: `centered` (x - mean) scaled and shifted.
  std::string NormOutput(const std::string& centered);

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
  bool single_ = true;       // the row is one block (specialized mode only)
  bool contiguous_ = false;  // the kernel has a CONTIG path
  Coords row_, r_coords_, in_coords_;
  std::string block_start_ = "0";
  std::unique_ptr<ExprEmitter> scope_, first_;
  std::string first_x_;
  // Norms: weight and bias, and the per-row scale of instance_norm.
  ValueId weight_, bias_;
  std::string row_scale_, row_shift_;
};

std::string RowsEmitter::Schedule() const {
  if (!TwoPasses()) return single_ ? "one block" : "one pass";
  if (single_) return "one pass, the row in registers";
  if (ctx_.generic()) return "one pass when the row fits BLOCK_R, else statistics then write";
  return "two passes: statistics, then write";
}

EmittedKernel RowsEmitter::Emit() {
  w_.Line("pid = " + ProgramId(0, ctx_.wide));
  w_.Line("rows = pid * BLOCK_O + tl.arange(0, BLOCK_O)[:, None]");
  w_.Line("row_mask = rows < " + params_.Sizes(rows_expr_));
  row_ = DecomposeDims(w_, "rows", layout_.row_dims, "rc");
  r_coords_ = InlineCoords("r", layout_.r_dims);
  in_coords_ = layout_.in_coords(row_, r_coords_);
  if (layout_.trailing && (contiguous_ || !IsReduction(op_)))
    w_.Line("row_off = rows * " + Atom(R()));
  if (contiguous_) {
    params_.AddContiguousRead(in_coords_, "row_off + r");
    params_.AddContiguousRead(r_coords_, "r");  // values of R's shape: layer_norm's weight
  }
  EmitOp();

  std::vector<std::string> constexprs = {"BLOCK_O", "BLOCK_R"};
  std::vector<std::string> checks;
  for (ValueId v : params_.flat_values()) checks.push_back(p_.value(v).name + ".is_contiguous()");
  if (!checks.empty()) constexprs.push_back("CONTIG");
  EmittedKernel k;
  k.name = ctx_.kernel_name;
  k.text = KernelText(
      k.name,
      GetOp(node_.op).name + " over " + r_expr_ + " of " + rows_expr_ + " rows: " + Schedule(),
      params_, constexprs, w_.str());
  k.call_args = params_.args();
  k.launch = config_.launch;
  if (!ctx_.generic()) {
    k.constexprs = {"BLOCK_O=" + IntLiteral(config_.block_o),
                    "BLOCK_R=" + IntLiteral(config_.block_r)};
    k.grid = Grid1D(rows_expr_, IntLiteral(config_.block_o));
  } else {
    // Blocks no larger than the runtime row (and row count), capped at the tile.
    const std::string cap_r = IntLiteral(config_.block_r);
    const std::string cap_o =
        ReducesInnermost() && !Sequential() ? cap_r + " // BLOCK_R" : IntLiteral(config_.block_o);
    k.setup = {"BLOCK_R = min(triton.next_power_of_2(" + r_expr_ + "), " + cap_r + ")",
               "BLOCK_O = min(triton.next_power_of_2(" + rows_expr_ + "), " + cap_o + ")"};
    k.constexprs = {"BLOCK_O=BLOCK_O", "BLOCK_R=BLOCK_R"};
    k.grid = Grid1D(rows_expr_, "BLOCK_O");
  }
  if (!checks.empty()) {
    k.setup.push_back("contig = " + Join(checks, " and "));
    k.constexprs.push_back("CONTIG=contig");
  }
  return k;
}

std::string RowsEmitter::OpenBlock(const std::string& start) {
  const std::string lanes = Arange("BLOCK_R", ctx_.wide) + "[None, :]";
  w_.Line("r = " + (start == "0" ? lanes : start + " + " + lanes));
  w_.Line("mask = row_mask & (r < " + R() + ")");
  block_start_ = start;
  scope_ = NewScope("mask", "(rows + r) * 0");
  return scope_->Emit(node_.tensors[0], in_coords_);
}

void RowsEmitter::ForEachBlock(const std::string& from,
                               const std::function<void(const std::string&)>& body) {
  if (single_) {
    if (from == "0") body(OpenBlock("0"));
    return;
  }
  OpenLoop(w_, "r0", R(), "BLOCK_R", from);
  body(OpenBlock("r0"));
  CloseLoop(w_, "r0", R(), "BLOCK_R");
}

std::string RowsEmitter::ReopenFirstBlock() {
  if (!single_) {
    w_.Line("r = " + Arange("BLOCK_R", ctx_.wide) + "[None, :]");
    w_.Line("mask = row_mask & (r < " + R() + ")");
    block_start_ = "0";
    scope_ = std::move(first_);
  }
  return first_x_;
}

// acc = combine(acc, where(mask, f(x), identity)) over R, then reduce to `name`.
// `propagate_nan`: a NaN in the row makes a max/min NaN (torch.amax/amin).
void RowsEmitter::Accumulate(const std::string& name, const std::string& f_of_x,
                             const std::string& kind, bool propagate_nan) {
  const bool is_max = kind == "max", is_min = kind == "min";
  const std::string identity = is_max ? kMinusInf : is_min ? "float('inf')" : "0.0";
  w_.Line("acc = tl.full([BLOCK_O, BLOCK_R], " + identity + ", dtype=tl.float32)");
  ForEachBlock("0", [&](const std::string& x) {
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
  });
  std::string reduced = "tl." + kind + "(acc, axis=1, keep_dims=True)";
  if (propagate_nan && (is_max || is_min)) reduced += " + " + NanOfLanes("acc");
  w_.Line(name + " = " + reduced);
}

// Stores the group's output at `address` (its `coords`), computing the epilogue from `val`.
void RowsEmitter::Store(const std::string& val, const Coords& coords, const std::string& mask,
                        const std::string& zero, const std::string& address) {
  ExprEmitter* e = scope_.get();
  std::unique_ptr<ExprEmitter> tail;
  if (IsReduction(op_)) {
    tail = NewScope(mask, zero);
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
  w_.Line("tl.store(" + address + ", " + out + ", mask=" + mask + ")");
}

// The output is allocated by the wrapper, so contiguous: one value per row at `rows`.
void RowsEmitter::StoreReduced(const std::string& val) {
  Store(val, layout_.out_coords(row_), "row_mask", "rows * 0",
        params_.Pointer(ctx_.group.output) + " + rows");
}

void RowsEmitter::StoreElements(const std::string& val) {
  const std::string zero = "(rows + r) * 0";
  const std::string address = layout_.trailing
                                  ? params_.Pointer(ctx_.group.output) + " + row_off + r"
                                  : params_.Address(ctx_.group.output, in_coords_, zero);
  Store(val, in_coords_, "mask", zero, address);
}

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
      return EmitLogsumexp();
    case RowOp::kSoftmax:
    case RowOp::kLogSoftmax:
      return EmitSoftmax(op_ == RowOp::kLogSoftmax);
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
  const std::string worst = is_max ? kMinusInf : "float('inf')";
  const std::string red = is_max ? "max" : "min";
  const std::string n = ctx_.generic() ? Atom(R()) : IntLiteral(r_);
  w_.Line("best_v = tl.full([BLOCK_O, 1], " + worst + ", dtype=tl.float32)");
  w_.Line("best_i = tl.zeros([BLOCK_O, 1], dtype=tl.int32)");
  // torch ranks NaN above everything (argmax and argmin alike): the first NaN wins.  A
  // runtime size is added to zeros: tl.full takes a compile-time fill value.
  if (ctx_.generic())
    w_.Line("first_nan = tl.zeros([BLOCK_O, 1], dtype=tl.int32) + " + n);
  else
    w_.Line("first_nan = tl.full([BLOCK_O, 1], " + n + ", dtype=tl.int32)");
  ForEachBlock("0", [&](const std::string& x) {
    const std::string offset = block_start_ == "0" ? "" : " + " + block_start_;
    w_.Line("is_nan = mask & (" + x + " != " + x + ")");
    w_.Line("first_nan = tl.minimum(first_nan, tl.min(tl.where(is_nan, r, " + n +
            "), axis=1, keep_dims=True))");
    w_.Line("xm = tl.where(mask & ~is_nan, " + x + ", " + worst + ")");
    w_.Line("blk_v = tl." + red + "(xm, axis=1, keep_dims=True)");
    w_.Line("blk_i = tl.arg" + red + "(xm, axis=1, tie_break_left=True, keep_dims=True)" + offset);
    w_.Line(std::string("better = blk_v ") + (is_max ? ">" : "<") + " best_v");
    w_.Line("best_i = tl.where(better, blk_i, best_i)");
    w_.Line("best_v = tl.where(better, blk_v, best_v)");
  });
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
  ForEachBlock("0", [&](const std::string& x) {
    w_.Line("xm = tl.where(mask, " + x + ", " + identity + ")");
    if (is_prod) {  // BLOCK_R is 1: the running product is the output and the next carry
      w_.Line("out = carry * xm.to(tl.float64)");
      StoreElements("out.to(tl.float32)");
      if (!single_) w_.Line("carry = out");
      return;
    }
    w_.Line("out = tl.cumsum(xm, axis=1) + carry");
    StoreElements("out");
    if (!single_) {
      w_.Line("last = tl.arange(0, BLOCK_R)[None, :] == BLOCK_R - 1");
      w_.Line("carry = tl.sum(tl.where(last, out, 0.0), axis=1, keep_dims=True)");
    }
  });
}

// --- Online softmax: m_acc and s_acc per lane, s_acc = sum over the lane's elements of
// exp(x - m_acc), rescaled by exp(m_old - m_new) whenever the max grows. -------------------

void RowsEmitter::MaxSumInit() {
  w_.Line("m_acc = tl.full([BLOCK_O, BLOCK_R], " + std::string(kMinusInf) + ", dtype=tl.float32)");
  w_.Line("s_acc = tl.zeros([BLOCK_O, BLOCK_R], dtype=tl.float32)");
}

void RowsEmitter::MaxSumUpdate(const std::string& x) {
  w_.Line("xm = tl.where(mask, " + x + ", " + kMinusInf + ")");
  w_.Line("m_new = tl.maximum(m_acc, xm)");
  // A lane that has seen only -inf (masked lanes, or -inf inputs) keeps s = 0: exp(-inf - 0)
  // is 0 where exp(-inf - (-inf)) would be NaN.
  w_.Line("m_ref = tl.where(m_new == " + std::string(kMinusInf) + ", 0.0, m_new)");
  w_.Line("s_acc = s_acc * tl.exp(m_acc - m_ref) + tl.exp(xm - m_ref)");
  w_.Line("m_acc = m_new");
}

void RowsEmitter::MaxSumFinish() {
  w_.Line("row_max = tl.max(m_acc, axis=1, keep_dims=True)");
  w_.Line("row_sum = tl.sum(s_acc * tl.exp(m_acc - row_max), axis=1, keep_dims=True)");
}

void RowsEmitter::EmitLogsumexp() {
  if (single_) {
    const std::string x = OpenBlock("0");
    w_.Line("xm = tl.where(mask, " + x + ", " + kMinusInf + ")");
    w_.Line("row_max = tl.max(xm, axis=1, keep_dims=True)");
    w_.Line("row_sum = tl.sum(tl.exp(xm - row_max), axis=1, keep_dims=True)");
  } else {
    MaxSumInit();
    ForEachBlock("0", [&](const std::string& x) { MaxSumUpdate(x); });
    MaxSumFinish();
  }
  StoreReduced("row_max + tl.log(row_sum)");
}

void RowsEmitter::EmitSoftmax(bool log) {
  if (single_) {  // the exponentials computed for the sum are the output's numerators
    const std::string x = OpenBlock("0");
    w_.Line("xm = tl.where(mask, " + x + ", " + kMinusInf + ")");
    w_.Line("row_max = tl.max(xm, axis=1, keep_dims=True)");
    w_.Line("e = tl.exp(xm - row_max)");
    w_.Line("row_sum = tl.sum(e, axis=1, keep_dims=True)");
    StoreElements(log ? x + " - row_max - tl.log(row_sum)" : "e / row_sum");
    return;
  }
  MaxSumInit();
  first_x_ = OpenBlock("0");
  MaxSumUpdate(first_x_);
  first_ = std::move(scope_);
  ForEachBlock("BLOCK_R", [&](const std::string& x) { MaxSumUpdate(x); });
  MaxSumFinish();
  if (log)
    w_.Line("row_lse = row_max + tl.log(row_sum)");
  else
    w_.Line("row_inv = 1.0 / row_sum");
  auto write = [&](const std::string& x) {
    StoreElements(log ? x + " - row_lse" : "tl.exp(" + x + " - row_max) * row_inv");
  };
  write(ReopenFirstBlock());
  ForEachBlock("BLOCK_R", write);
}

// --- Welford per lane: lane l has seen c_l elements with mean mean_acc and squared
// deviations m2_acc.  Every block but the last is full, so at block k (from 0) every lane in
// range has seen k elements before: the update weight is 1 / (k + 1), one scalar per block.
// The lanes combine exactly (Chan et al.): mean = sum(c_l * mean_l) / R and
// M2 = sum(m2_l + c_l * (mean_l - mean)^2), with c_l the blocks that covered lane l. ---------

void RowsEmitter::WelfordFirst(const std::string& x) {
  w_.Line("mean_acc = tl.where(mask, " + x + ", 0.0)");
  w_.Line("m2_acc = tl.zeros([BLOCK_O, BLOCK_R], dtype=tl.float32)");
}

void RowsEmitter::WelfordUpdate(const std::string& x) {
  w_.Line("delta = " + x + " - mean_acc");
  w_.Line("mean_acc += tl.where(mask, delta * (1.0 / (r0 // BLOCK_R + 1)), 0.0)");
  w_.Line("m2_acc += tl.where(mask, delta * (" + x + " - mean_acc), 0.0)");
}

void RowsEmitter::WelfordFinish() {
  const std::string r = RCount();
  w_.Line("lane = tl.arange(0, BLOCK_R)[None, :]");
  w_.Line("cnt = ((" + R() + " - lane + BLOCK_R - 1) // BLOCK_R).to(tl.float32)");
  w_.Line("mean = tl.sum(cnt * mean_acc, axis=1, keep_dims=True) / " + r);
  w_.Line("dev = mean_acc - mean");
  w_.Line("var = tl.sum(m2_acc + cnt * dev * dev, axis=1, keep_dims=True) / " + r);
}

std::string RowsEmitter::NormOutput(const std::string& centered) {
  switch (layout_.params) {
    case ParamsVary::kPerRow: {  // instance_norm: rstd * weight, bias, once per row
      std::string y = centered + " * " + row_scale_;
      return row_shift_.empty() ? y : y + " + " + row_shift_;
    }
    case ParamsVary::kAlongR: {  // layer_norm: one [1, BLOCK_R] load per block
      std::string y = centered + " * rstd";
      if (!weight_.valid() && !bias_.valid()) return y;
      w_.Line("r_mask = r < " + R());
      auto along_r = NewScope("r_mask", "r * 0");
      if (weight_.valid()) y += " * " + along_r->Emit(weight_, r_coords_);
      if (bias_.valid()) y += " + " + along_r->Emit(bias_, r_coords_);
      return y;
    }
    default: {  // group_norm: the element's channel (a warp of one channel reads one address)
      std::string y = centered + " * rstd";
      const Coords pc = layout_.param_coords(row_, r_coords_, in_coords_);
      if (weight_.valid()) y += " * " + scope_->Emit(weight_, pc);
      if (bias_.valid()) y += " + " + scope_->Emit(bias_, pc);
      return y;
    }
  }
}

// Biased variance, as torch: from the deviations of the row held in registers, or from
// Welford's per-lane statistics; then (x - mean) * rstd * weight + bias.
void RowsEmitter::EmitNorm() {
  const std::string name = GetOp(node_.op).name;
  const double eps = node_.attrs.back().AsFloat();
  const size_t first_param = name == "instance_norm" ? 3 : 1;  // after running mean and var
  weight_ = node_.tensors[first_param];
  bias_ = node_.tensors[first_param + 1];
  const std::string r = RCount();
  if (single_) {
    const std::string x = OpenBlock("0");
    w_.Line("mean = tl.sum(tl.where(mask, " + x + ", 0.0), axis=1, keep_dims=True) / " + r);
    w_.Line("xc = tl.where(mask, " + x + " - mean, 0.0)");
    w_.Line("var = tl.sum(xc * xc, axis=1, keep_dims=True) / " + r);
  } else {
    first_x_ = OpenBlock("0");
    WelfordFirst(first_x_);
    first_ = std::move(scope_);
    ForEachBlock("BLOCK_R", [&](const std::string& x) { WelfordUpdate(x); });
    WelfordFinish();
  }
  w_.Line("rstd = 1.0 / tl.sqrt(var + " + FloatLiteral(eps) + ")");
  if (layout_.params == ParamsVary::kPerRow) {
    auto per_row = NewScope("row_mask", "rows * 0");
    const Coords channel = {row_[1]};
    row_scale_ = "rstd";
    if (weight_.valid()) {
      w_.Line("scale = rstd * " + per_row->Emit(weight_, channel));
      row_scale_ = "scale";
    }
    if (bias_.valid()) row_shift_ = per_row->Emit(bias_, channel);
  }
  if (single_) {
    StoreElements(NormOutput("xc"));
    return;
  }
  auto write = [&](const std::string& x) { StoreElements(NormOutput("(" + x + " - mean)")); };
  write(ReopenFirstBlock());
  ForEachBlock("BLOCK_R", write);
}

}  // namespace

Result<EmittedKernel> EmitRows(const GroupContext& ctx) {
  const Node& node = ctx.program.node(ctx.group.anchor);
  RowsEmitter emitter(ctx, node);
  return emitter.Emit();
}

}  // namespace drtriton::codegen

// Softmax, log_softmax, logsumexp and the norms (rows_emitter.h): their statistics in every
// schedule (the row in registers, online over blocks, a split row's partials) and the write.
#include <functional>
#include <string>
#include <vector>

#include "codegen/rows_emitter.h"

namespace drtriton::codegen {

// Softmax's row_max and row_sum: from the row in registers (computed by the caller), from a
// split row's partials, or online over the blocks (the first one kept for the write).
void RowsEmitter::SoftmaxStats() {
  if (role_ == Role::kCoop) {  // the chunk's own statistics first, then the row's
    first_x_ = OpenBlock("start");
    PublishMaxSum(first_x_);
  }
  if (role_ == Role::kWrite || role_ == Role::kCoop) {
    LoadPartials({{"row_max", kMinusInf}, {"row_sum", "0.0"}});
    return MaxSumCombine(w_, "p_row_max", "p_row_sum", PartialsReduce());
  }
  MaxSumInit(w_);
  first_x_ = OpenBlock("0");
  MaxSumUpdate(w_, first_x_);
  first_ = std::move(scope_);
  ForEachBlock("BLOCK_R", [&](const std::string& x) { MaxSumUpdate(w_, x); });
  MaxSumCombine(w_, "m_acc", "s_acc");
}

void RowsEmitter::MaxSumOfRow() {
  if (single_) {
    const std::string x = OpenBlock("0");
    w_.Line("xm = tl.where(mask, " + x + ", " + kMinusInf + ")");
    w_.Line("row_max = tl.max(xm, axis=1, keep_dims=True)");
    w_.Line("row_sum = tl.sum(tl.exp(xm - row_max), axis=1, keep_dims=True)");
    return;
  }
  MaxSumInit(w_);
  ForEachBlock("0", [&](const std::string& x) { MaxSumUpdate(w_, x); });
  MaxSumCombine(w_, "m_acc", "s_acc");
}

void RowsEmitter::EmitLogsumexp() {
  if (!single_ && role_ == Role::kWrite) {
    LoadPartials({{"row_max", kMinusInf}, {"row_sum", "0.0"}});
    MaxSumCombine(w_, "p_row_max", "p_row_sum");
  } else {
    MaxSumOfRow();
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
  SoftmaxStats();
  if (log)
    w_.Line("row_lse = row_max + tl.log(row_sum)");
  else
    w_.Line("row_inv = 1.0 / row_sum");
  WriteBlocks([&](const std::string& x) {
    StoreElements(log ? x + " - row_lse" : "tl.exp(" + x + " - row_max) * row_inv");
  });
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
    default: {  // group_norm
      std::string y = centered + " * rstd";
      const std::string block_channel = BlockChannel();
      if (!block_channel.empty()) {  // one load per row and block
        auto per_row = NewScope("row_mask", "rows * 0");
        if (weight_.valid()) y += " * " + per_row->Emit(weight_, {block_channel});
        if (bias_.valid()) y += " + " + per_row->Emit(bias_, {block_channel});
        return y;
      }
      // The element's channel: a gather, though the lanes of a warp read one address when a
      // channel spans 32 elements or more.
      const Coords pc = layout_.param_coords(row_, r_coords_, in_coords_);
      if (weight_.valid()) y += " * " + scope_->Emit(weight_, pc);
      if (bias_.valid()) y += " + " + scope_->Emit(bias_, pc);
      return y;
    }
  }
}

// group_norm's channel of the whole current block, "" when a block may cross channels.  When
// the spatial size S is a multiple of BLOCK_R (KernelBench L1 35: 512 x 512 = 32 blocks of
// 8192), blocks start at multiples of BLOCK_R and never straddle two channels: the channel is
// the group's first plus block_start // S, one weight and bias per row instead of a gather
// per element.
std::string RowsEmitter::BlockChannel() const {
  const int64_t per_group = layout_.r_shape[0];
  const int64_t spatial = r_ / per_group;
  if (ctx_.generic() || spatial % config_.block_r != 0) return "";
  std::vector<std::string> terms;
  if (row_[1] != "0") terms.push_back(row_[1] + " * " + IntLiteral(per_group));
  if (block_start_ != "0") terms.push_back(Atom(block_start_) + " // " + IntLiteral(spatial));
  return terms.empty() ? "0" : Join(terms, " + ");
}

// The norms' mean and biased variance (as torch): from the deviations of the row held in
// registers, from a split row's partials, or from Welford's per-lane statistics.
void RowsEmitter::NormStats() {
  const std::string r = RCount();
  if (single_) {
    const std::string x = OpenBlock("0");
    w_.Line("mean = tl.sum(tl.where(mask, " + x + ", 0.0), axis=1, keep_dims=True) / " + r);
    w_.Line("xc = tl.where(mask, " + x + " - mean, 0.0)");
    w_.Line("var = tl.sum(xc * xc, axis=1, keep_dims=True) / " + r);
    return;
  }
  if (role_ == Role::kCoop) {  // the chunk's own statistics first, then the row's
    first_x_ = OpenBlock("start");
    PublishWelford(first_x_);
  }
  if (role_ == Role::kWrite && FromColumns()) {  // counted partials (rows_column_stats.cc)
    LoadPartials({{"n", "0.0"}, {"mean", "0.0"}, {"m2", "0.0"}}, kColumnStatsParts);
    WelfordCombine(w_, "p_n", "p_mean", "p_m2", r, PartialsReduce());
  } else if (role_ == Role::kWrite || role_ == Role::kCoop) {
    LoadPartials({{"mean", "0.0"}, {"m2", "0.0"}});
    const std::string chunk = IntLiteral(config_.chunk);
    w_.Line("p_n = tl.where(chunk_mask, tl.minimum(" + R() + " - chunks * " + chunk + ", " + chunk +
            "), 0).to(tl.float32)");
    WelfordCombine(w_, "p_n", "p_mean", "p_m2", r, PartialsReduce());
  } else {
    first_x_ = OpenBlock("0");
    WelfordFirst(w_, first_x_);
    first_ = std::move(scope_);
    ForEachBlock("BLOCK_R", [&](const std::string& x) { WelfordUpdate(w_, x); });
    // Lane l was covered by the blocks that reach it: ceil((R - l) / BLOCK_R).
    w_.Line("lane = tl.arange(0, BLOCK_R)[None, :]");
    w_.Line("cnt = ((" + R() + " - lane + BLOCK_R - 1) // BLOCK_R).to(tl.float32)");
    WelfordCombine(w_, "cnt", "mean_acc", "m2_acc", r);
  }
  w_.Line("var = m2 / " + r);
}

// (x - mean) * rstd * weight + bias.
void RowsEmitter::EmitNorm() {
  const OpInfo& op = GetOp(node_.op);
  const bool instance = op.row == RowKind::kInstanceNorm;
  const size_t first_param = instance ? 3 : 1;  // after running mean and var
  weight_ = node_.tensors[first_param];
  bias_ = node_.tensors[first_param + 1];
  NormStats();
  const double eps = node_.attrs[static_cast<size_t>(op.attr_index("eps"))].AsFloat();
  w_.Line("rstd = 1.0 / tl.sqrt(var + " + FloatLiteral(eps) + ")");
  if (layout_.params == ParamsVary::kPerRow) {
    auto per_row = NewScope("row_mask", "rows * 0");
    const Coords channel = {row_.back()};  // instance_norm's rows (n, c), batch_norm's (c)
    row_scale_ = "rstd";
    if (weight_.valid()) {
      w_.Line("scale = rstd * " + per_row->Emit(weight_, channel));
      row_scale_ = "scale";
    }
    if (bias_.valid()) row_shift_ = per_row->Emit(bias_, channel);
  }
  if (single_) return StoreElements(NormOutput("xc"));
  WriteBlocks([&](const std::string& x) { StoreElements(NormOutput("(" + x + " - mean)")); });
}

}  // namespace drtriton::codegen

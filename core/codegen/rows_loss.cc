// nll_loss rows (rows_emitter.h), and cross_entropy: nll_loss of the log_softmax along the
// classes that it absorbs (fusion.h LossLogSoftmax).  A program owns BLOCK_O rows:
// - Each row's target is read once, one [BLOCK_O, 1] load of int64s (a scalar a row).
// - With the log_softmax, the row's max and sum of exponentials come from one read of the row
//   (the online statistics of rows_stats.cc over blocks when it is longer than one), and the
//   target's score is one more load a row, of an element that read has just brought into the
//   cache: loss = row_max + log(row_sum) - x[target].  Without it, loss = -x[target], and
//   nothing else of the row is read.  So KernelBench L1 95 (32768 x 4096 scores) reads its
//   512 MiB of scores once and writes no (N, C) log-probabilities.
// - A row whose target is ignore_index loses 0 and does not count towards the mean; a target
//   outside [0, C) reads nothing (PyTorch raises there, so no program computes one).
// - reduction 'none' stores each row's loss; 'mean' and 'sum' store a partial sum (and a count
//   of the rows not ignored) per program into `k<i>_part`, which a kernel of one program adds
//   up (EmitLossTotal): a few KB to read after hundreds of MB, where atomics would make the
//   sum's order, and so its last bits, differ from run to run.
#include <algorithm>
#include <string>

#include "codegen/rows_emitter.h"

namespace drtriton::codegen {
namespace {

// The node's reduction attribute ('mean', 'sum' or 'none').
const std::string& Reduction(const Node& node) {
  return node.attrs[static_cast<size_t>(GetOp(node.op).attr_index("reduction"))].s;
}

int64_t IgnoreIndex(const Node& node) {
  return node.attrs[static_cast<size_t>(GetOp(node.op).attr_index("ignore_index"))].i;
}

// Partial sums the total kernel adds per iteration: 1024 lanes over 4 warps.
constexpr int64_t kTotalBlock = 1024;

}  // namespace

bool RowsEmitter::ReducesRows() const {
  return op_ == RowOp::kNllLoss && Reduction(node_) != "none";
}

void RowsEmitter::EmitNllLoss() {
  auto per_row = NewScope("row_mask", "rows * 0");
  const std::string target = per_row->Emit(node_.tensors[1], row_);
  w_.Line("counted = row_mask & (" + target + " != " + IntLiteral(IgnoreIndex(node_)) + ")");
  w_.Line("hit = counted & (" + target + " >= 0) & (" + target + " < " + R() + ")");
  if (absorbed_) MaxSumOfRow();
  // The target's score, computed from the scores' producers (an elementwise prologue) there.
  auto at_target = NewScope("hit", "rows * 0");
  const std::string score = at_target->Emit(row_input_, layout_.in_coords(row_, {target}));
  const std::string loss = absorbed_ ? "row_max + tl.log(row_sum) - " + score : "-" + score;
  w_.Line("loss = tl.where(counted, " + loss + ", 0.0)");
  if (!ReducesRows()) return StoreReduced("loss");
  const std::string part = params_.Scratch(PartialsBuffer());
  w_.Line("tl.store(" + part + " + pid, tl.sum(loss))");
  if (Reduction(node_) == "mean")
    w_.Line("tl.store(" + part + " + " + IntLiteral(LossPrograms()) +
            " + pid, tl.sum(counted.to(tl.float32)))");
}

EmittedKernel RowsEmitter::EmitLossTotal() {
  const bool mean = Reduction(node_) == "mean";
  const std::string programs = IntLiteral(LossPrograms());
  const std::string part = params_.Scratch(PartialsBuffer());
  w_.Line("offs = tl.arange(0, BLOCK_P)");
  w_.Line("total = tl.zeros([BLOCK_P], dtype=tl.float32)");
  if (mean) w_.Line("count = tl.zeros([BLOCK_P], dtype=tl.float32)");
  OpenLoop(w_, "p0", programs, "BLOCK_P");
  w_.Line("p_mask = p0 + offs < " + programs);
  w_.Line("total += tl.load(" + part + " + p0 + offs, mask=p_mask, other=0.0)");
  if (mean)
    w_.Line("count += tl.load(" + part + " + " + programs +
            " + p0 + offs, mask=p_mask, other=0.0)");
  CloseLoop(w_, "p0", programs, "BLOCK_P");
  w_.Line(std::string("result = tl.sum(total, axis=0)") + (mean ? " / tl.sum(count, axis=0)" : ""));
  // The epilogue of a 0-d result: its other operands are 0-d too, loaded as scalars.
  ExprEmitter epilogue(p_, ctx_.plan.materialized, params_, w_, "p_mask", "", counter_);
  epilogue.LoadOneElementValuesAsScalars();
  epilogue.Bind(node_.result, "result");
  const std::string out = epilogue.Compute(ctx_.group.output, {});
  w_.Line("tl.store(" + params_.Pointer(ctx_.group.output) + ", " + out + ")");

  EmittedKernel k;
  k.name = ctx_.kernel_name;
  k.text = KernelText(k.name,
                      "nll_loss: the " + Reduction(node_) + " over " + IntLiteral(rows_) +
                          " rows from " + programs + " partial sums",
                      params_, {"BLOCK_P"}, w_.str());
  k.call_args = params_.args();
  k.constexprs = {"BLOCK_P=" + IntLiteral(std::min(NextPow2(LossPrograms()), kTotalBlock))};
  k.grid = "(1,)";
  k.launch.num_warps = 4;
  return k;
}

}  // namespace drtriton::codegen

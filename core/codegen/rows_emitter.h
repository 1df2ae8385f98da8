// Private to codegen/: the emitter of rows kernels.  emit_rows.cc holds its framework (blocks,
// passes, stores), the reductions and the scans; rows_normalize.cc softmax and the norms;
// rows_split.cc the partial statistics of rows split across programs.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/expr.h"
#include "codegen/heuristics.h"
#include "codegen/rows.h"

namespace drtriton::codegen {

inline constexpr const char* kMinusInf = "float('-inf')";

// The kernel being emitted: the whole operator, or one of the two kernels of a split row:
// the chunks' partial statistics, then the output from them; or the total of a loss's rows
// (nll_loss's mean and sum) from the partial sums its rows kernel wrote; or the cooperative
// kernel of a split row (heuristics.h CooperativeRows), which does both kernels' work with
// each chunk read once.
enum class Role { kWhole, kStats, kWrite, kTotal, kCoop };

class RowsEmitter {
 public:
  RowsEmitter(const GroupContext& ctx, const Node& node, Role role = Role::kWhole);

  EmittedKernel Emit();

  // The heuristics split the rows and the operator's statistics combine across chunks (the
  // first index of argmax and the carries of scans are not split, nor a loss's rows).
  bool Splits() const {
    return (config_.split > 1 || FromColumns()) && !ctx_.generic() && Combinable();
  }
  // A training batch norm whose statistics a contraction's tiles wrote (fusion.h
  // Group::stats_from_columns): its output kernel reads the partials a combining kernel
  // (EmitColumnStatsCombine) makes of them, and no statistics kernel reads the input.
  bool FromColumns() const {
    return ctx_.group.stats_from_columns && op_ == RowOp::kBatchNorm && !ctx_.generic();
  }
  // rows_column_stats.cc: the contraction's column statistics combined into
  // kColumnStatsParts partials (count, mean, squared deviations) per row.
  EmittedKernel EmitColumnStatsCombine();
  bool Combinable() const {
    return op_ != RowOp::kArgmax && op_ != RowOp::kArgmin && op_ != RowOp::kCumsum &&
           op_ != RowOp::kCumprod && op_ != RowOp::kProd && op_ != RowOp::kNllLoss;
  }
  // nll_loss with reduction 'mean' or 'sum': its rows kernel stores each program's partial sum
  // (and count of rows not ignored), and a kernel of one program (Role::kTotal) adds them up.
  bool ReducesRows() const;
  // The split rows also have a cooperative kernel, launched instead of the split pair where
  // the GPU holds all of a row's programs at once (EmitRows).
  bool Cooperates() const { return Splits() && config_.cooperative; }

 private:
  bool Split() const { return role_ != Role::kWhole; }
  // The programs of this kernel are (row, chunk) pairs: the statistics kernel, and the output
  // kernel of softmax and norms (a reduction's output kernel has one program per row).
  bool PerChunk() const {
    return role_ == Role::kStats || role_ == Role::kCoop || (role_ == Role::kWrite && TwoPasses());
  }
  void WritePrologue();
  EmittedKernel Launch(const std::string& name, std::vector<std::string> constexprs);
  bool Products() const { return op_ == RowOp::kCumprod || op_ == RowOp::kProd; }
  // cumprod and prod walk R one element at a time (heuristics.h: ChooseSequentialRows),
  // except along the contiguous dim in even variants (tiled_products_).
  bool Sequential() const { return Products() && !tiled_products_; }
  // A cumsum of a flip along the scan dim walks the row from its end (ScanInputFlip).
  bool Reversed() const { return input_flip_ != nullptr; }
  const Node* ScanInputFlip() const;
  // Walking from the row's end, a block is read in groups of 4 lanes (16 bytes of float32).
  static constexpr int kGroup = 4;
  // True unless an along-dim operator reduces a dim with non-unit dims after it, or one that
  // is a stride apart in the stored value it reads (rows.h ReducedDimStrided).
  bool ReducesInnermost() const { return (IsNorm(op_) || layout_.trailing) && !strided_r_; }
  // Softmax and norms store one value per input element and need the row's statistics
  // first: the operators with two passes over a long row.
  bool TwoPasses() const {
    return op_ == RowOp::kSoftmax || op_ == RowOp::kLogSoftmax || IsNorm(op_);
  }
  std::string ChannelRowsFlat();  // batch norm's contiguous address of (rows, r)
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
    // Every read of a row feeds a tl.where over the block's mask (or an epilogue that
    // broadcasts against the row's value), so a one-element tensor may load as a scalar:
    // loaded as a tile, it cost a load instruction per element of the block from one address
    // (KernelBench L1 100, hinge loss: 77% of the copy bandwidth against torch.compile's 92%).
    scope->LoadOneElementValuesAsScalars();
    // Likewise a value read at the row's coordinates alone (an embedding's token index) loads
    // once a row, [BLOCK_O, 1]: as a tile it cost BLOCK_R loads of one address a row.
    Coords outer;
    for (const std::string& c : row_)
      if (c != "0") outer.push_back(c);
    scope->LoadRowsAlong(outer, "row_mask", "rows * 0");
    for (const auto& [v, var] : lead_values_) scope->Bind(v, var);
    return scope;
  }

  // Writes `r` and `mask` for the block of R starting at `start` ("0", "r0") and opens a
  // scope over it; returns the input at (rows, r).  Walking from the row's end, the lanes
  // hold the block's groups from its end (`lane` and `r` written).
  std::string OpenBlock(const std::string& start);
  // The anchor's input at lane r of the open block (through input_flip_ when Reversed), or
  // a leading statistic's input while EmitLeadingStats accumulates them.
  std::string ReadInput();
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
  void StoreScanned(const std::string& val);

  // Split rows: the partials buffer, and its (`count` floats per chunk) stores and loads;
  // LoadPartials writes `p_<name>` for each (name, identity), one lane per chunk.
  std::string PartialsBuffer() const;
  std::string WrapperName(const std::string& what) const { return ctx_.WrapperName(what); }
  int PartialsPerChunk() const;
  // Floats of one statistic over all rows and `chunks` (0: the split's) partials a row.
  int64_t PartialsPlane(int64_t chunks = 0) const;
  // A row's partials made of a contraction's column statistics (FromColumns): enough
  // programs along them that the combine is not a serial walk (C / 32 x 32 programs).
  static constexpr int64_t kColumnStatsParts = 32;
  // The output kernel's programs are (row, chunk) pairs of one row (BLOCK_O = 1): its
  // partials are one row's vector, combined to scalars (kToScalar).
  bool ScalarPartials() const {
    return (role_ == Role::kWrite || role_ == Role::kCoop) && PerChunk() && config_.block_o == 1;
  }
  // How the output kernel's combine reduces the partials LoadPartials wrote.
  const char* PartialsReduce() const { return ScalarPartials() ? kToScalar : kAcrossLanes; }
  void StorePartials(const std::vector<std::string>& names);
  // The cooperative kernel (rows_coop.cc): its persistent loop over (row, chunk) items, the
  // per-row arrival counters, the wait for the row's other chunks, and the wrapper lines that
  // size its grid by the GPU's SMs.
  std::string CountBuffer() const;
  void OpenItemLoop();
  void CloseItemLoop();
  void AwaitRow();
  void SetCoopLaunch(EmittedKernel& k) const;
  // The chunk's own statistics, from its one block in registers (`x`), published for the row.
  void PublishMaxSum(const std::string& x);
  void PublishWelford(const std::string& x);
  // `chunks` partials a row (0: the split's).
  void LoadPartials(const std::vector<std::pair<std::string, std::string>>& names,
                    int64_t chunks = 0);
  void EmitPartials();
  // A reduction's `name` over the row: accumulated over R, or combined from partials.
  void ReduceRow(const std::string& name, const std::string& kind, bool propagate_nan);
  // `write` on every block after the statistics: the first block from registers, then the
  // rest, or a split row's chunk.
  void WriteBlocks(const std::function<void(const std::string&)>& write);

  void EmitOp();
  // A reduction whose epilogue writes back over its rows (fusion.h Group::broadcast): the
  // statistic, then every block of the row stored through the epilogue (from registers when
  // the row is one block).
  bool Broadcasts() const { return ctx_.group.broadcast; }
  void EmitReduceBroadcast();
  // The group's leading statistics (fusion.h Group::leading_stats) over each row, into
  // registers as `lead0`, `lead1`..., bound in every scope opened after them.
  void EmitLeadingStats();
  // One pass over the row for the statistics at indices `now` (Group::leading_stats).
  void EmitLeadingPass(const std::vector<size_t>& now);
  void EmitArg(bool is_max);
  void EmitScan(bool is_prod);
  void EmitProd();
  // `name` = lane BLOCK_R - 1 of `x` ([BLOCK_O, BLOCK_R]), as [BLOCK_O, 1].
  void WriteLastLane(const std::string& name, const std::string& x);
  // Writes `name`: `x` with each group of kGroup lanes reversed (in registers).
  std::string ReverseGroups(const std::string& x, const std::string& name);
  void EmitLogsumexp();
  // row_max and row_sum (of exp(x - row_max)) over the whole row, unsplit: from its one block
  // in registers, or online over its blocks.
  void MaxSumOfRow();
  // rows_loss.cc: nll_loss's rows (with the log_softmax it absorbs: cross_entropy), and the
  // total of their partial sums.
  void EmitNllLoss();
  EmittedKernel EmitLossTotal();
  int64_t LossPrograms() const { return CeilDiv(rows_, config_.block_o); }
  void EmitSoftmax(bool log);
  void EmitNorm();
  // Softmax's row_max and row_sum, and the norms' mean and var, for every schedule.
  void SoftmaxStats();
  void NormStats();
  // The normalized row at the current block: `centered` (x - mean) scaled and shifted.
  std::string NormOutput(const std::string& centered);
  std::string BlockChannel() const;

  const GroupContext& ctx_;
  Role role_;
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
  bool strided_r_ = false;   // rows.h ReducedDimStrided
  // Even variants of a product along a contiguous dim (the teacher's first): tiles of BLOCK_R
  // consecutive elements, multiplied in registers in tl.cumprod's tree order, where the
  // sequential walk of odd variants loads one element a row a step, rows R apart (a 32-byte
  // sector for 4 bytes).  A cumprod of 16384 rows of 32768 on the H100 (h100-2026-12-07f):
  // tiled 1.42 ms, 1.65x eager and torch.compile; sequential 10.0 ms, 0.23x; both 1.3e-7 off
  // float64.  The order can move where a product leaves float32's range (heuristics.cc
  // ChooseSequentialRows): the verifier judges each variant, and the search keeps one that
  // passes.
  bool tiled_products_ = false;
  bool contiguous_ = false;  // the kernel has a CONTIG path
  Coords row_, r_coords_, in_coords_;
  // The tensor whose rows the kernel reads: the anchor's input, or the input of the producer
  // it computes itself (Group::absorbed: nll_loss's log_softmax), which is then non-null.
  const Node* absorbed_ = nullptr;
  ValueId row_input_;
  // Group::leading_stats' nodes; their values' variables once computed; the input that
  // ReadInput reads meanwhile.
  std::vector<const Node*> leads_;
  std::vector<std::pair<ValueId, std::string>> lead_values_;  // each stored value's variable
  ValueId block_read_;
  bool keep_block_ = false;  // the next OpenBlock keeps scope_ (one block: EmitLeadingStats)
  // Scans: the dim scanned, and the flip along it that the scan reads (null: none).
  int scan_dim_ = -1;
  const Node* input_flip_ = nullptr;
  std::string block_start_ = "0";
  std::unique_ptr<ExprEmitter> scope_, first_;
  std::string first_x_;
  // Norms: weight and bias, and the per-row scale of instance_norm.
  ValueId weight_, bias_;
  std::string row_scale_, row_shift_;
};

}  // namespace drtriton::codegen

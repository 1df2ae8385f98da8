// Rows split across programs (emit_rows.cc, heuristics.h RowsConfig::split): chunk c of row
// i keeps its j-th statistic at partials[j * rows * split + i * split + c], one plane per
// statistic.  The statistics kernel writes them; the output kernel of the row loads all of its
// row's chunks as one vector (a lane per chunk) and combines them as the lanes of one program
// combine.
//
// An output kernel whose programs are (row, chunk) pairs of one row each (ScalarPartials)
// loads that vector in 1-D and combines it to scalars.  As a [1, chunks] tile beside its
// [1, BLOCK_R] ones, KernelBench L1 40's combine took 39 barriers a program in the sm_90 build
// (63 at 17 chunks) and the pair ran 1.35 ms on the H200; benchmarks/split_rows_probe.py's
// 1-D combine has 5, and its pair ran 0.23-0.28 ms at the teacher's 16 warps.
//
// Planes, not (mean, m2) pairs: a row's chunks of one statistic are contiguous, so that
// vector loads 16 bytes at a time.  Interleaved, L1 40's output kernel (16 x 128 chunks)
// loaded its partials with 128 scalar loads a thread and held 128 registers in its sm_90
// build; planes alone did not change its time (1.364 ms).
#include <string>
#include <utility>
#include <vector>

#include "codegen/rows_emitter.h"

namespace drtriton::codegen {

std::string RowsEmitter::PartialsBuffer() const { return WrapperName("part"); }

int RowsEmitter::PartialsPerChunk() const {
  switch (op_) {
    case RowOp::kSum:
    case RowOp::kMean:
    case RowOp::kMax:
    case RowOp::kMin:
      return 1;
    default:
      return 2;  // (max, sum of exponentials) or (mean, squared deviations)
  }
}

int64_t RowsEmitter::PartialsPlane(int64_t chunks) const {
  return rows_ * (chunks > 0 ? chunks : config_.split);
}

void RowsEmitter::StorePartials(const std::vector<std::string>& names) {
  const std::string ptr = params_.Scratch(PartialsBuffer());
  w_.Line("part = rows * " + IntLiteral(config_.split) + " + chunk");
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string at = i == 0 ? "part" : "part + " + IntLiteral(int64_t(i) * PartialsPlane());
    w_.Line("tl.store(" + ptr + " + " + at + ", " + names[i] + ", mask=row_mask)");
  }
}

void RowsEmitter::LoadPartials(const std::vector<std::pair<std::string, std::string>>& names,
                               int64_t chunks) {
  if (chunks <= 0) chunks = config_.split;
  const std::string ptr = params_.Scratch(PartialsBuffer());
  const std::string split = IntLiteral(chunks);
  const std::string lanes = "tl.arange(0, " + IntLiteral(NextPow2(chunks)) + ")";
  if (ScalarPartials()) {  // one row: a vector of its chunks, combined to scalars
    w_.Line("chunks = " + lanes);
    w_.Line("chunk_mask = chunks < " + split);
    // The cooperative kernel's row is its item's; the output kernel's programs are
    // chunk-major (emit_rows.cc WritePrologue).
    const std::string row = role_ == Role::kCoop ? "row" : "pid % " + IntLiteral(rows_);
    w_.Line("part = " + row + " * " + split + " + chunks");
  } else {
    w_.Line("chunks = " + lanes + "[None, :]");
    w_.Line("chunk_mask = row_mask & (chunks < " + split + ")");
    w_.Line("part = rows * " + split + " + chunks");
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string at =
        i == 0 ? "part" : "part + " + IntLiteral(int64_t(i) * PartialsPlane(chunks));
    // Other programs wrote them during this kernel: read from L2 (rows_coop.cc).
    const std::string volatile_read = role_ == Role::kCoop ? ", volatile=True" : "";
    w_.Line("p_" + names[i].first + " = tl.load(" + ptr + " + " + at +
            ", mask=chunk_mask, other=" + names[i].second + volatile_read + ")");
  }
}

// The statistics kernel: each program reduces its chunk of a row.
void RowsEmitter::EmitPartials() {
  switch (op_) {
    case RowOp::kSum:
    case RowOp::kMean:
      Accumulate("total", "{x}", "sum");
      return StorePartials({"total"});
    case RowOp::kMax:
    case RowOp::kMin:
      Accumulate("result", "{x}", op_ == RowOp::kMax ? "max" : "min", /*propagate_nan=*/true);
      return StorePartials({"result"});
    case RowOp::kLayerNorm:
    case RowOp::kGroupNorm:
    case RowOp::kInstanceNorm:
    case RowOp::kBatchNorm:
      WelfordInit(w_);
      ForEachBlock("0", [&](const std::string& x) { WelfordUpdate(w_, x); });
      w_.Line("n_chunk = tl.minimum(" + R() + " - start, " + IntLiteral(config_.chunk) + ")");
      w_.Line("lane = tl.arange(0, BLOCK_R)[None, :]");
      w_.Line("cnt = ((n_chunk - lane + BLOCK_R - 1) // BLOCK_R).to(tl.float32)");
      WelfordCombine(w_, "cnt", "mean_acc", "m2_acc", "n_chunk");
      return StorePartials({"mean", "m2"});
    default:  // logsumexp, softmax, log_softmax
      MaxSumInit(w_);
      ForEachBlock("0", [&](const std::string& x) { MaxSumUpdate(w_, x); });
      MaxSumCombine(w_, "m_acc", "s_acc");
      return StorePartials({"row_max", "row_sum"});
  }
}

}  // namespace drtriton::codegen

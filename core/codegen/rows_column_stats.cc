// A training batch norm's statistics from the column statistics of the contraction that
// computes its input (fusion.h Group::column_stats, emit_contraction.cc WriteColumnStats):
// each of the contraction's tiles stored, per channel, its rows' count, mean and squared
// deviations at (slot, statistic, channel).  This kernel combines the slots of BLOCK_C
// channels, one of kColumnStatsParts parts of them a program, by Chan's formula (the
// deviation of a block's mean from the running one, weighted by both counts), and stores each
// part as a counted partial in the split rows' planes (rows_split.cc): the norm's output
// kernel combines a row's parts (NormStats) and writes its chunk.  The input is read once,
// by the output kernel, where the statistics kernel read it once more (KernelBench L2 52: 520
// MB of float32 convolution output).
//
// Channels along a tile's columns: a slot's BLOCK_C channels are contiguous (the
// contraction's stores are rows of channels), so the loads are coalesced; a program walks its
// part's slots BLOCK_S at a time.  The buffer's slot count is its shape's (the contraction's
// kernels differ in tiles: emit_contraction.cc WithColumnStats), a constexpr of the launch.
#include <string>

#include "codegen/fusion.h"
#include "codegen/rows.h"
#include "codegen/rows_emitter.h"

namespace drtriton::codegen {
namespace {

constexpr int64_t kCombineChannels = 32;  // BLOCK_C: 128-byte rows of a slot
constexpr int64_t kCombineSlots = 128;    // BLOCK_S: 4096 values of a statistic a step

}  // namespace

EmittedKernel RowsEmitter::EmitColumnStatsCombine() {
  const std::string stats = ColumnStatsBuffer(p_, node_.tensors[0]);
  const std::string channels = IntLiteral(rows_);
  const std::string parts = IntLiteral(kColumnStatsParts);
  KernelParams params(p_, ctx_.allocated_strides());
  const std::string in = params.Scratch(stats);
  const std::string out = params.Scratch(PartialsBuffer());
  PythonWriter w(1);
  w.Line("pid_p = tl.program_id(1)");
  w.Line("rows = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]");
  w.Line("row_mask = rows < " + channels);
  for (const char* acc : {"n_acc", "mean_acc", "m2_acc"})
    w.Line(std::string(acc) + " = tl.zeros([1, BLOCK_C], dtype=tl.float32)");
  w.Open("for s0 in tl.range(0, PER_PART, BLOCK_S):");
  w.Line("lane = s0 + tl.arange(0, BLOCK_S)[:, None]");
  w.Line("s = pid_p * PER_PART + lane");
  w.Line("mask = row_mask & (lane < PER_PART) & (s < SLOTS)");
  w.Line("at = s * " + IntLiteral(3 * rows_) + " + rows");
  w.Line("c_n = tl.load(" + in + " + at, mask=mask, other=0.0)");
  w.Line("c_mean = tl.load(" + in + " + at + " + channels + ", mask=mask, other=0.0)");
  w.Line("c_m2 = tl.load(" + in + " + at + " + IntLiteral(2 * rows_) + ", mask=mask, other=0.0)");
  w.Line("b_n = tl.sum(c_n, axis=0, keep_dims=True)");
  w.Line("b_mean = tl.sum(c_n * c_mean, axis=0, keep_dims=True) / tl.maximum(b_n, 1.0)");
  w.Line("b_dev = c_mean - b_mean");
  w.Line("b_m2 = tl.sum(c_m2 + c_n * b_dev * b_dev, axis=0, keep_dims=True)");
  w.Line("total = n_acc + b_n");
  w.Line("share = b_n / tl.maximum(total, 1.0)");
  w.Line("delta = b_mean - mean_acc");
  w.Line("mean_acc += delta * share");
  w.Line("m2_acc += b_m2 + delta * delta * n_acc * share");
  w.Line("n_acc = total");
  w.Dedent();
  const int64_t plane = PartialsPlane(kColumnStatsParts);
  w.Line("part = rows * " + parts + " + pid_p");
  w.Line("tl.store(" + out + " + part, n_acc, mask=row_mask)");
  w.Line("tl.store(" + out + " + part + " + IntLiteral(plane) + ", mean_acc, mask=row_mask)");
  w.Line("tl.store(" + out + " + part + " + IntLiteral(2 * plane) + ", m2_acc, mask=row_mask)");

  EmittedKernel k;
  k.name = ctx_.kernel_name;
  k.name.insert(k.name.rfind("_kernel"), "_colstats");
  const std::string comment = GetOp(node_.op).name + " statistics of " + channels +
                              " channels from the contraction's column statistics, " + parts +
                              " parts a channel";
  k.text = KernelText(k.name, comment, params, {"SLOTS", "PER_PART", "BLOCK_C", "BLOCK_S"},
                      w.str());
  k.call_args = params.args();
  k.constexprs = {"SLOTS=" + stats + ".shape[0]",
                  "PER_PART=triton.cdiv(" + stats + ".shape[0], " + parts + ")",
                  "BLOCK_C=" + IntLiteral(kCombineChannels),
                  "BLOCK_S=" + IntLiteral(kCombineSlots)};
  k.grid = "(" + IntLiteral(CeilDiv(rows_, kCombineChannels)) + ", " + parts + ")";
  k.launch.num_warps = 4;
  k.setup.push_back(ScratchAllocation(p_, PartialsBuffer(), 3 * plane));
  return k;
}

}  // namespace drtriton::codegen

// Partitions a Program into fused groups, one kernel each.
//
// Every node is either an *anchor* (reduction, scan, softmax-like row, layer/group/instance
// norm, contraction, convolution, pooling) that needs a kernel of its own shape, or
// *inlinable* (elementwise, transpose, inference batch_norm): its value at any coordinates
// is a cheap function of its inputs at related coordinates.  Inlinable values are never
// stored; every kernel that reads one recomputes it from its producers (prologue fusion),
// but for a contraction's computed operands that enter many products (OperandReuse), which a
// pointwise kernel stores first.
// A reduction over rows whose kept-dim result (or its epilogue) is read back over those rows by
// one elementwise node (normalizing by a statistic: RMSNorm's x / rms, an L2 normalization's
// x / norm, x - mean) extends its epilogue through that node: the rows kernel reads each row
// once when it fits a block, twice otherwise, and stores the rows (Group::broadcast), where a
// reduction kernel and a pointwise kernel read them twice and store the statistic besides.
// Not where the rows would be split across programs (too few to fill the GPU).  Statistics of
// the same rows that a reduction's kernel alone reads (the mean in sum((x - mean)^2)) are
// computed by that kernel first, in a pass of its own (Group::leading_stats), not stored.
// An anchor whose result feeds a single chain of same-shape elementwise or channelwise nodes
// (inference batch norm) computes the chain in its own registers and stores only the chain's
// end (epilogue fusion): conv -> batch_norm -> relu is one kernel, whose output the next
// convolution reads stored (OperandReuse).  Program
// outputs are always stored; an output produced by inlinable nodes alone gets a pointwise
// kernel.  So `conv -> relu -> add` is one kernel, and so is any elementwise program.
// A scan's epilogue may also pass one flip along the scan dim (and only that dim): the scan
// kernel stores each value at its mirrored position (Group::mirrored), so that
// flip(cumsum(flip(x))) is one kernel and no copy.
#pragma once

#include <vector>

#include "ir/program.h"

namespace drtriton::codegen {

enum class GroupKind { kPointwise, kRows, kContraction, kPool };

struct Group {
  GroupKind kind = GroupKind::kPointwise;
  NodeId anchor;   // invalid for pointwise groups
  ValueId output;  // the value this kernel stores: the anchor's result or its epilogue's end
  // A scan whose epilogue flips the scan dim: `output`'s coordinate along it is the
  // anchor result's mirrored (n - 1 - i).
  bool mirrored = false;
  // A rows producer this kernel computes itself, never stored (LossLogSoftmax): invalid
  // for every other group.
  NodeId absorbed;
  // A reduction whose (keepdim) result's epilogue ends in an elementwise node of the reduced
  // input's shape, which `output` ends the chain of (BroadcastBack in fusion.cc): the kernel
  // writes whole rows, x / sqrt(mean(x * x, 1, keepdim) + eps) in one kernel.
  bool broadcast = false;
  // A contraction whose epilogue ends in a row operator over its output's channels (a sum,
  // mean, max, min, logsumexp, softmax or log_softmax along ChannelAxis) that one tile of
  // BLOCK_N channels holds whole (RowTailOf in fusion.cc): the kernel computes that operator
  // across its tile's columns in registers and `output` ends the chain after it.  Invalid for
  // every other group.  Why: the convolution's output was stored, then read back by a rows
  // kernel; H100, bf16 (results/h100-2026-12-06b): KernelBench L2 91's channel softmax took
  // 0.73 ms after its transposed convolution, torch.compile's whole epilogue 0.88.
  // Or a group norm of a GEMM's (M, C) output whose groups every tile holds whole
  // (GroupsFitTiles in fusion.cc): the tile computes each group's mean and variance across
  // its columns.  Why: KernelBench L2 37's 32768 x 4096 GEMM output was stored in float32
  // (537 MB; a norm reads it: amplify.h) and read back by a rows kernel, 0.88x torch.compile
  // on the H100 (h100-2026-12-06d, bf16).
  NodeId row_tail;
  // The row tail is a reduction (sum, mean, max, min, logsumexp) over more channels than one
  // tile holds, of a GEMM (a linear's, matmul's or bmm's last dim): each tile stores a partial
  // statistic per kPartialColumns of its columns, and a second kernel of the group combines a
  // row's partials and computes the rest of the epilogue (emit_contraction.cc, RowTailFinish).
  // Why: KernelBench level 2's GEMMs end in such reductions over 8192 features (L2 22, 64,
  // 80: logsumexp, max) or 32768 (L2 56: a sum); the GEMM's float32 output (32 MB at 1024 x
  // 8192) was stored and read back by a rows kernel, 0.20 ms against torch.compile's 0.19
  // on the H100 (h100-2026-12-06, bf16), whose GEMM alone is cuBLAS's.
  bool row_tail_partials = false;
  // A contraction whose output (its epilogue's end) a training batch norm reads over the
  // output's channels (ColumnStatsOf in fusion.cc): every tile also stores, per column, its
  // rows' count, mean and squared deviations (emit_contraction.cc WriteColumnStats), and the
  // batch norm's group, marked `stats_from_columns`, combines them instead of reading the
  // output once more for its statistics (rows_column_stats.cc).  Why: KernelBench L2 52
  // stores its convolution's epilogue, 130M float32 values (520 MB: a norm reads them,
  // amplify.h), and the batch norm read them twice, once for the statistics and once to
  // write; 1.32 ms on the H100 against torch.compile's 1.08 (h100-2026-12-06e, bf16).  No
  // gain measured yet: the statistics cost L2 52's TMA kernel 0.18 ms (h100-2026-12-07: 1.328
  // ms against 1.148 with their lines removed), about what the saved read took.  And they
  // hold its registers: sm_90 builds on the CPU (kernels at literal strides, kernel.h
  // AllocatedStrides) took 228 registers with the statistics, one program an SM, against 117
  // without, two (the count from the row mask: 241; sums and squares in one pass: 209; either
  // bounded to 128 registers: 347-465 spilled instructions).  So only on request:
  // CodegenOptions::column_stats, a variant of its own that the search times (EmitVariants).
  NodeId column_stats;
  bool stats_from_columns = false;
  // Row reductions (sum, mean, max, min of an input of the same shape over the same dim) whose
  // results only this group reads, through its input or its epilogue: the kernel computes
  // them first, in passes of their own over each row (one for those that read no other, the
  // next for those that read them: LeadingStat::pass), and keeps them in registers, where a
  // reduction kernel stored each and this one loaded it (AbsorbLeadingStats).  Why: statistics
  // of deviations from statistics, written out, read the input from HBM once a kernel: a
  // variance's sum((x - mean(x))^2) (beyond-dev task 1008, 16384 rows of 16384: 0.23x
  // torch.compile on the H100, h100-2026-12-07f), a cosine similarity's two norms and its dot
  // product (three kernels, 4 reads of a tensor's size where one kernel reads 2), a triplet
  // loss's two distances.  A row of one block is then read once; a longer one again from L2.
  // Empty otherwise.  This group's rows are never split (one program owns a row).
  struct LeadingStat {
    NodeId node;     // the reduction
    ValueId stored;  // what its group stored: its result, or the end of its epilogue
    int pass = 0;    // the statistics of one pass read none of that pass's or a later one's
  };
  std::vector<LeadingStat> leading_stats;
};

// The buffer of a contraction's column statistics (Group::column_stats), named after the value
// its group stores so that the batch norm's group finds it: (slots, 3, channels) float32,
// zeroed, a slot a tile's rows (count, mean, squared deviations).
std::string ColumnStatsBuffer(const Program& program, ValueId stored);

// The columns of a tile whose partial statistic one store holds (Group::row_tail_partials):
// every BLOCK_N of the GEMM's tiles (autotuned at 128 and 256, 64 at least) is a multiple, so
// the partials' layout does not depend on the tile the autotuner picks.
inline constexpr int64_t kPartialColumns = 64;

struct FusionPlan {
  std::vector<Group> groups;       // in an order where every group's inputs come first
  std::vector<bool> materialized;  // per value: stored in memory (inputs, group outputs)
};

// The nodes that read each value, a node once per tensor argument it passes the value as.
std::vector<std::vector<NodeId>> Consumers(const Program& program);
// Whether `v` is one of the program's outputs.
bool IsOutput(const Program& program, ValueId v);

// The log_softmax along the classes whose only reader is the nll_loss `loss` (and which the
// program does not return): the loss's rows kernel computes its row statistics in the same
// read of the scores, so cross_entropy stores no (N, C) log-probabilities.  Null otherwise.
const Node* LossLogSoftmax(const Program& program, const Node& loss);

// True for nodes computed inline by whichever kernel reads them.
bool IsInlinable(const Program& program, NodeId node);
// A convolution or transposed convolution of one input channel per group, more than one group
// (depthwise, any channel multiplier): its kernel sums windows lane by lane (ChooseWindowSum).
bool IsWindowSum(const Program& program, const Node& node);
// How many products each element of a contraction's operand (0: A, the input; 1: B, the
// weight) enters: A's the N columns (a convolution's output channels per group times its
// window taps, per stride phase for a transposed one), B's the batch x M rows.  A computed
// operand whose reuse is above kInlineOperandReuse is stored by a kernel of its own before
// the contraction reads it (PlanFusion); at or below it, it stays inline (prologue fusion).
int64_t OperandReuse(const Program& program, const Node& node, size_t operand);
// Why: on the H200 (results h200-2026-12-05, benchmarks/teacher_profile.py) the tensor-core
// kernels of the paper-preset programs with a prologue ran at 0.06x - 0.3x eager, their K
// loops spilling at 255 registers (program 57's maximum -> exp -> linear, N 2275 on a 64x64
// tile: 412 spill instructions, 10.4 ms against eager's 0.80; program 26's maximum ->
// conv_transpose1d, 24 channels x 15 taps: 138, 6.8 against 0.64; program 12's batch_norm ->
// hardsigmoid -> conv_transpose1d: 896); a computed input reads NCHW through gathers where a
// stored one gets a channels-last copy and 16-byte loads; and the prologue is recomputed once
// per N tile and window tap.  Storing costs a write and a read of the operand (57: 2 x 28 MB,
// ~0.02 ms).  Where an element enters few products (N at most one 64-wide tile, one tap) the
// contraction is memory-bound and the prologue computed once: program 37's hardtanh -> tanh
// -> linear, N 12 over a 3 GB input, would pay 1.4 ms to store what a 0.7 ms read needs.
// Depthwise window sums (IsWindowSum) store a computed input at any reuse: their kernels gave
// wrong answers on the GPU with the producer recomputed in the K loop (results
// h200-2026-12-04c: KernelBench L3 23, 4,605,346 of 4,608,000 elements outside 1e-4; none
// with a stored input; cause not found).
inline constexpr int64_t kInlineOperandReuse = 64;
// Whether `v` is computed inline by its readers: not stored, and an elementwise or
// channelwise node on its way back through layout operators to stored values.
bool ComputedInline(const Program& program, const std::vector<bool>& materialized, ValueId v);
// The output dim whose elements a contraction's tile spreads over its BLOCK_N columns (its
// channels): a batched, one-group convolution's or transposed convolution's dim 1, a linear's,
// bmm's or matrix-by-matrix matmul's last; -1 for the others (a row tail is not fused there).
int ChannelAxis(const Program& program, const Node& contraction);
// Row tails are fused where the channels fit one tile of at most this many columns (the
// largest BLOCK_N of the shifted-rows and TMA kernels below 256, which would halve their
// epilogue) and at least kRowTailMinChannels (below, the narrow GEMV path may be chosen).
inline constexpr int64_t kRowTailMaxChannels = 128;
inline constexpr int64_t kRowTailMinChannels = 8;
// A training batch norm takes its statistics from a contraction's columns (fusion.cc
// ColumnStatsFit) over more rows than kColumnStatsMinRows (a channel of fewer fits one block
// of the norm's one-pass kernels, heuristics.h OnePassLimit, read once anyway) and at least
// kColumnStatsMinElements in all: the read it saves (4 MB of float32, ~1.3 us at 3.3 TB/s)
// then outweighs the combining kernel's launch.  KernelBench L2 41 (16384 x 4096) reads its
// GEMM's 268 MB output twice in the norm's split schedule.
inline constexpr int64_t kColumnStatsMinRows = 4096;
inline constexpr int64_t kColumnStatsMinElements = int64_t{1} << 20;
// A group norm's channels per group (C / num_groups of its (N, C, ...) input).
int64_t NormGroupChannels(const Program& program, const Node& group_norm);
// The group kind of an anchor node.
GroupKind AnchorKind(const Program& program, NodeId node);

// Whether the rows of a reduction of `in` to `kept` (its keepdim shape: each reduced dim 1)
// fill the GPU unsplit (heuristics.h ChooseReduceRows at variant 0): a split row's chunks are
// other programs', where rows written back (Group::broadcast) and leading statistics need the
// whole row in one program.
bool RowsStayWhole(const Shape& in, const Shape& kept);

// Gives each sum, mean, max or min group the statistics it alone reads (Group::leading_stats)
// and drops their own groups.  Their values stay marked materialized (never computed inline):
// the absorbing kernel binds them.
void AbsorbLeadingStats(const Program& program, FusionPlan& plan);

// `literal_shapes`: the kernels are emitted for the program's own sizes (false: generic-shape
// mode, where a row tail's partials are not fused).  `column_stats`: training batch norms take
// their statistics from the contractions' tiles where they fit (Group::column_stats).
FusionPlan PlanFusion(const Program& program, bool fuse_epilogue, bool literal_shapes = true,
                      bool column_stats = false);

}  // namespace drtriton::codegen

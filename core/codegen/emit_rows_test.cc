// Expected-output tests for the rows kernels' schedules (emit_rows.cc): how many times each
// row is read, which statistics run online, how contiguous rows are addressed and where norm
// weights are loaded.  A "read" is a `tl.load` of the input; a row that fits one block has
// one load and no loop, a longer one a first block plus one loop per pass.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/heuristics.h"
#include "codegen/text_checks_for_tests.h"
#include "ir/parse_for_tests.h"

namespace drtriton::codegen {
namespace {

std::string Emit(const std::string& call, const std::string& inputs, bool generic = false) {
  const std::string args = inputs.find("), torch") == std::string::npos ? "x0" : "x0, x1, x2";
  const Program p = MustParse(
      "def fused_operator(" + args + "):\n    t0 = " + call + "\n    return t0\n", inputs);
  CodegenOptions options;
  options.generic_shapes = generic;
  auto c = EmitCandidate(p, options);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().ToString());
  return c.ok() ? c.value() : "";
}

// Loops over R: `for r0 in` (literal sizes) or `while r0 <` (runtime sizes).
int Loops(const std::string& text) { return Count(text, "for r0 in") + Count(text, "while r0 <"); }

// The kernel text alone (the wrapper launches with `x0, x0.stride(0)`: no loads there).
std::string KernelOf(const std::string& candidate) {
  return candidate.substr(0, candidate.find("def triton_fused_operator"));
}

TEST(EmitRowsTest, OnePassLimitIsEightThousandElements) {
  EXPECT_EQ(OnePassLimit(0), 8192);
  const RowsConfig fits = ChooseReduceRows(64, 5000, 0, true);
  EXPECT_EQ(fits.block_r, 8192);
  EXPECT_EQ(fits.block_o, 1);
  EXPECT_EQ(fits.launch.num_warps, 16);  // 16 fp32 per thread
  const RowsConfig loops = ChooseReduceRows(64, 20000, 0, true);
  EXPECT_EQ(loops.block_r, 8192);
  const RowsConfig short_rows = ChooseReduceRows(1000, 100, 0, true);
  EXPECT_EQ(short_rows.block_r, 128);
  EXPECT_EQ(short_rows.block_o, 64);  // several rows per program: one 8192-element tile
}

TEST(EmitRowsTest, ManyLongRowsLoopInBlocksOfFourThousand) {
  // KernelBench L1 34: 7168 instance-norm rows of 262144, one row a program, 4096-element
  // blocks over 8 warps (5.71 ms on the H200 against 7.15 at 8192 over 16).
  const RowsConfig many = ChooseReduceRows(7168, 262144, 0, true);
  EXPECT_EQ(many.block_r, 4096);
  EXPECT_EQ(many.block_o, 1);
  EXPECT_EQ(many.launch.num_warps, 8);
  EXPECT_EQ(many.split, 1);
  EXPECT_EQ(ChooseReduceRows(7168, 262144, 1, true).block_r, 8192);  // variants stay distinct
  EXPECT_EQ(ChooseReduceRows(7168, 262144, 3, true).block_r, 2048);
  // A row that fits the one-pass limit stays one block however many rows there are.
  EXPECT_EQ(ChooseReduceRows(7168, 8192, 0, true).block_r, 8192);
  // Few long rows keep the one-pass tile for their split (L1 40, measured at 8192).
  const RowsConfig few = ChooseReduceRows(16, 4194304, 0, true);
  EXPECT_EQ(few.block_r, 8192);
  EXPECT_GT(few.split, 1);
  // Unknown sizes (generic mode) keep the tile too.
  EXPECT_EQ(ChooseReduceRows(kUnknownSize, kUnknownSize, 0, true).block_r, 8192);
  // Rows under kCooperativeMinRow (L1 34's rows of 262144 cooperate: rows_coop_test.cc): a
  // sum loops in 4096-element blocks; softmax and instance norm, which read a row twice,
  // widen to blocks of 16384 (heuristics.h WidenRereadRows), group norm does not.
  const std::string sum = Emit("torch.sum(x0, -1)", "torch.randn(7168, 32768)");
  ExpectInOrder(sum, {"for r0 in tl.range(0, 32768, BLOCK_R):", "BLOCK_O=1, BLOCK_R=4096",
                      "num_warps=8"});
  const std::string k = Emit("F.instance_norm(x0)", "torch.randn(112, 64, 128, 256)");
  ExpectInOrder(k, {"for r0 in tl.range(BLOCK_R, 32768, BLOCK_R):", "BLOCK_O=1, BLOCK_R=16384",
                    "num_warps=16"});
  const std::string one = Emit("torch.softmax(x0, -1)", "torch.randn(32768, 16384)");
  EXPECT_EQ(Loops(KernelOf(one)), 0);  // one pass
  ExpectInOrder(one, {"BLOCK_O=1, BLOCK_R=16384", "num_warps=16"});
  RowsConfig split_rows = ChooseReduceRows(100, 32768, 0, true);
  EXPECT_FALSE(WidenRereadRows(100, 32768, 0, split_rows));  // too few rows: they split
  RowsConfig other = ChooseReduceRows(7168, 32768, 1, true);
  EXPECT_FALSE(WidenRereadRows(7168, 32768, 1, other));
  const std::string group = Emit("F.group_norm(x0, 8)", "torch.randn(112, 64, 64, 64)");
  EXPECT_NE(group.find("BLOCK_R=4096"), std::string::npos);
}

TEST(EmitRowsTest, SoftmaxOfARowThatFitsReadsItOnce) {
  // 5000 elements, not a power of two, under the one-pass limit: one load, no loop, one exp
  // per element (the numerators are the sum's terms).
  for (const char* op : {"torch.softmax", "torch.log_softmax"}) {
    const std::string k = KernelOf(Emit(std::string(op) + "(x0, -1)", "torch.randn(6, 5000)"));
    EXPECT_EQ(Count(k, "tl.load("), 1) << op;
    EXPECT_EQ(Loops(k), 0) << op;
    ExpectInOrder(
        k, {"over 5000 of 6 rows: one pass, the row in registers", "mask = row_mask & (r < 5000)",
            "xm = tl.where(mask, x0, float('-inf'))",
            "row_max = tl.max(xm, axis=1, keep_dims=True)", "e = tl.exp(xm - row_max)",
            "row_sum = tl.sum(e, axis=1, keep_dims=True)", "tl.store(t0_ptr + row_off + r"});
  }
}

TEST(EmitRowsTest, LongSoftmaxIsOnlineInTwoPasses) {
  // 20000 > 8192: a running max and a rescaled running sum per lane (one pass for the
  // statistics), then the write; the first block is read once, the rest twice.
  const std::string k = KernelOf(Emit("torch.softmax(x0, -1)", "torch.randn(3, 20000)"));
  EXPECT_EQ(Count(k, "tl.load("), 3);  // the first block, the statistics loop, the write loop
  EXPECT_EQ(Count(k, "for r0 in tl.range(BLOCK_R, 20000, BLOCK_R):"), 2);
  // Two per update (the first block and the loop), one per lane at the end, one per write.
  EXPECT_EQ(Count(k, "tl.exp("), 7);
  ExpectInOrder(
      k, {"two passes: statistics, then write",
          "m_acc = tl.full([BLOCK_O, BLOCK_R], float('-inf'), dtype=tl.float32)", "x0 = tl.load(",
          "m_new = tl.maximum(m_acc, xm)", "m_ref = tl.where(m_new == float('-inf'), 0.0, m_new)",
          "s_acc = s_acc * tl.exp(m_acc - m_ref) + tl.exp(xm - m_ref)",
          "for r0 in tl.range(BLOCK_R, 20000, BLOCK_R):", "x1 = tl.load(",
          "row_max = tl.max(m_acc, axis=1, keep_dims=True)",
          "row_sum = tl.sum(s_acc * tl.exp(m_acc - row_max), axis=1, keep_dims=True)",
          "row_inv = 1.0 / row_sum",
          // The write walks from the row's end (3 blocks of 8192): the last block read is
          // the first written, the first block, still in registers, the last.
          "for r0 in tl.range(BLOCK_R, 20000, BLOCK_R):", "rb = 24576 - r0",
          "r = rb + tl.arange(0, BLOCK_R)[None, :]", "x2 = tl.load(",
          "tl.exp(x2 - row_max) * row_inv", "tl.store(", "r = tl.arange(0, BLOCK_R)[None, :]",
          "tl.exp(x0 - row_max) * row_inv", "tl.store("});
}

TEST(EmitRowsTest, BatchNormInTrainingModeIsARowPerChannelOverSamplesAndPositions) {
  // (4, 3, 5, 5): 3 rows (channels) of 100 = 4 samples x 25 positions.  Contiguous (CONTIG), an
  // element is (r // 25) * 75 + rows * 25 + r % 25; else the sample and each spatial dim go
  // through their strides.  The output (the wrapper's, contiguous) is stored flat; weight and
  // bias are loaded once per channel.
  const std::string c =
      Emit("torch.batch_norm(x0, x1, x2, None, None, True, 0.1, 1e-05, True)",
           "torch.randn(4, 3, 5, 5), torch.randn(3), torch.randn(3)");
  const std::string k = KernelOf(c);
  EXPECT_EQ(Count(k, "@triton.jit"), 1);
  EXPECT_EQ(Count(k, "row_off"), 0);  // the row is not one contiguous run
  ExpectInOrder(k, {"row_mask = rows < 3", "if CONTIG:",
                    "tl.load(x0_ptr + (r // 25) * 75 + rows * 25 + r % 25, mask=mask",
                    "else:", "tl.load(x0_ptr + (r // 25) * stride_x0_0 + rc0 * stride_x0_1",
                    "mean = tl.sum(", "var = tl.sum(xc * xc, axis=1, keep_dims=True) / 1e+02",
                    "rstd = 1.0 / tl.sqrt(var + 1e-05)", "tl.load(x1_ptr + rc0 * stride_x1_0",
                    "tl.load(x2_ptr + rc0 * stride_x2_0", "result = xc * scale + x2",
                    "tl.store(t0_ptr + (r // 25) * 75 + rows * 25 + r % 25, result"});
  // Generic shapes: the same addresses from the runtime sizes.
  const std::string g =
      KernelOf(Emit("torch.batch_norm(x0, x1, x2, None, None, True, 0.1, 1e-05, True)",
                    "torch.randn(4, 3, 5, 5), torch.randn(3), torch.randn(3)", true));
  EXPECT_GE(Count(g, "// (x0_s2 * x0_s3)) * (x0_s1 * (x0_s2 * x0_s3)) + rows * (x0_s2 * x0_s3)"),
            1);
}

TEST(EmitRowsTest, LongLogsumexpReadsOnce) {
  const std::string k = KernelOf(Emit("torch.logsumexp(x0, 1)", "torch.randn(3, 20000)"));
  EXPECT_EQ(Count(k, "tl.load("), 1);
  ExpectInOrder(k, {"for r0 in tl.range(0, 20000, BLOCK_R):", "m_new = tl.maximum(m_acc, xm)",
                    "row_max + tl.log(row_sum)", "tl.store(t0_ptr + rows, result, mask=row_mask)"});
}

TEST(EmitRowsTest, LongInstanceNormIsWelfordAndReadsContiguousRowsFlat) {
  // (2, 3, 126, 126): 6 rows of 15876, contiguous under CONTIG (`row_off + r`, no division
  // per element there); the strided branch splits r into (h, w).  Welford statistics in one
  // pass; weight and bias once per row.
  const std::string c = Emit("F.instance_norm(x0, None, None, x1, x2)",
                             "torch.randn(2, 3, 126, 126), torch.randn(3), torch.randn(3)");
  const std::string k = KernelOf(c);
  EXPECT_EQ(Count(k, "for r0 in tl.range(BLOCK_R, 15876, BLOCK_R):"), 2);
  EXPECT_EQ(Count(k, "tl.load(x0_ptr + row_off + r, mask=mask"), 3);
  EXPECT_EQ(Count(k, "(r // 126) * stride_x0_2 + (r % 126) * stride_x0_3"), 3);  // else branches
  ExpectInOrder(k, {"BLOCK_R: tl.constexpr, CONTIG: tl.constexpr):", "row_off = rows * 15876",
                    "if CONTIG:", "x0 = tl.load(x0_ptr + row_off + r, mask=mask, other=0.0)",
                    "else:", "mean_acc = tl.where(mask, x0, 0.0)",
                    "for r0 in tl.range(BLOCK_R, 15876, BLOCK_R):", "delta = x1 - mean_acc",
                    "mean_acc += tl.where(mask, delta * (1.0 / (r0 // BLOCK_R + 1)), 0.0)",
                    "m2_acc += tl.where(mask, delta * (x1 - mean_acc), 0.0)",
                    "cnt = ((15876 - lane + BLOCK_R - 1) // BLOCK_R).to(tl.float32)",
                    "m2 = tl.sum(m2_acc + cnt * dev * dev, axis=1, keep_dims=True)",
                    "var = m2 / 15876.0", "rstd = 1.0 / tl.sqrt(var + 1e-05)",
                    "tl.load(x1_ptr + rc1 * stride_x1_0, mask=row_mask, other=0.0)",
                    "scale = rstd * x", "tl.load(x2_ptr + rc1 * stride_x2_0, mask=row_mask",
                    "result = (x0 - mean) * scale + x", "tl.store(t0_ptr + row_off + r, result"});
  // Weight and bias are loaded outside every loop: two loads of x1/x2 in the whole kernel.
  EXPECT_EQ(Count(k, "tl.load(x1_ptr"), 1);
  EXPECT_EQ(Count(k, "tl.load(x2_ptr"), 1);
  ExpectInOrder(c, {"contig = x0.is_contiguous()\n", "CONTIG=contig"});
}

TEST(EmitRowsTest, LayerNormWeightIsOneLoadPerBlockSharedByRows) {
  // Normalized shape (4, 6): the weight varies along R only, so it is a [1, BLOCK_R] load
  // under `r_mask`, flat when contiguous, shared by the BLOCK_O rows of the program.
  const std::string c = Emit("F.layer_norm(x0, [4, 6], x1, x2)",
                             "torch.randn(30, 4, 6), torch.randn(4, 6), torch.randn(4, 6)");
  const std::string k = KernelOf(c);
  EXPECT_EQ(Loops(k), 0);
  ExpectInOrder(
      k, {"layer_norm over 24 of 30 rows: one pass", "x0 = tl.load(x0_ptr + row_off + r",
          "xc = tl.where(mask, x0 - mean, 0.0)", "r_mask = r < 24",
          "if CONTIG:", "x1 = tl.load(x1_ptr + r, mask=r_mask, other=0.0)", "else:",
          "x1 = tl.load(x1_ptr + (r // 6) * stride_x1_0 + (r % 6) * stride_x1_1, mask=r_mask",
          "result = xc * rstd * x1 + x2", "tl.store(t0_ptr + row_off + r"});
  ExpectInOrder(c, {"contig = x0.is_contiguous() and x1.is_contiguous() and x2.is_contiguous()"});
}

TEST(EmitRowsTest, OneDimensionalRowsNeedNoContiguousPath) {
  // A strided read of a 1-D reduced extent has no division per element: no flag, one body.
  for (const char* call : {"torch.softmax(x0, -1)", "torch.sum(x0, 1)", "F.layer_norm(x0, [50])"}) {
    const std::string c = Emit(call, "torch.randn(7, 50)");
    EXPECT_EQ(c.find("CONTIG"), std::string::npos) << call;
    EXPECT_EQ(c.find("r //"), std::string::npos) << call;
  }
}

TEST(EmitRowsTest, ReductionsStoreOneValuePerRowFlat) {
  ExpectInOrder(Emit("torch.mean(x0, 1, True)", "torch.randn(4, 9, 3)"),
                {"total / 9.0", "tl.store(t0_ptr + rows, result, mask=row_mask)"});
}

TEST(EmitRowsTest, GenericNormReadsARowThatFitsOnce) {
  // R is a runtime size: the first block is loaded before the loops, and both loops start
  // after it, so they run zero times for a row of up to BLOCK_R elements.
  const std::string k = KernelOf(Emit("F.group_norm(x0, 2, x1, x2)",
                                      "torch.randn(2, 4, 3, 3), torch.randn(4), torch.randn(4)",
                                      /*generic=*/true));
  EXPECT_EQ(Count(k, "r0 = pid * 0 + BLOCK_R"), 2);
  EXPECT_EQ(Loops(k), 2);
  ExpectInOrder(k, {"one pass when the row fits BLOCK_R", "x0 = tl.load(x0_ptr + row_off + r",
                    "mean_acc = tl.where(mask, x0, 0.0)", "r0 = pid * 0 + BLOCK_R",
                    "while r0 < (x0_s1 // 2) * x0_s2 * x0_s3:", "r0 += BLOCK_R",
                    "rstd =", "r0 = pid * 0 + BLOCK_R", "while r0 <",
                    "rb = ((x0_s1 // 2) * x0_s2 * x0_s3 - 1) // BLOCK_R * BLOCK_R + BLOCK_R - r0",
                    "result = (x0 - mean) * rstd * x", "tl.store(t0_ptr + row_off + r"});
}

TEST(EmitRowsTest, GenericSoftmaxKeepsTheFirstBlock) {
  const std::string c = Emit("torch.softmax(x0, -1)", "torch.randn(4, 8)", /*generic=*/true);
  const std::string k = KernelOf(c);
  EXPECT_EQ(Count(k, "tl.load("), 3);
  ExpectInOrder(k, {"x0 = tl.load(", "r0 = pid * 0 + BLOCK_R", "while r0 < x0_s1:",
                    "row_inv = 1.0 / row_sum", "tl.exp(x0 - row_max) * row_inv"});
  ExpectInOrder(c, {"BLOCK_R = min(triton.next_power_of_2(x0_s1), 8192)", "num_warps=16"});
}

TEST(EmitRowsTest, GroupNormLoadsWeightsOncePerBlockWhenChannelsAreWholeBlocks) {
  // KernelBench L1 35's layout at 1/64 of its channel size: 896 rows (batch 112 x 8 groups)
  // of 8 channels x 64 x 64 (its own rows, 2M elements, cooperate: rows_coop_test.cc).  A
  // channel is one block of 4096, so each block has one channel: weight and bias are
  // [BLOCK_O, 1] loads.
  const std::string k =
      KernelOf(Emit("F.group_norm(x0, 8, x1, x2)",
                    "torch.randn(112, 64, 64, 64), torch.randn(64), torch.randn(64)"));
  ExpectInOrder(k, {"for r0 in tl.range(BLOCK_R, 32768, BLOCK_R):", "rb = 32768 - r0",
                    "tl.load(x1_ptr + (rc1 * 8 + rb // 4096) * stride_x1_0, mask=row_mask",
                    "tl.load(x1_ptr + (rc1 * 8) * stride_x1_0, mask=row_mask",
                    "tl.load(x2_ptr + (rc1 * 8) * stride_x2_0, mask=row_mask"});
  EXPECT_EQ(k.find("x1_ptr + (rc1 * 8 + r // "), std::string::npos);  // no gather per element
  // Channels of 100 elements: blocks cross channels, the element's channel is gathered.
  const std::string small = KernelOf(Emit("F.group_norm(x0, 2, x1, x2)",
                                          "torch.randn(2, 4, 10, 10), torch.randn(4), "
                                          "torch.randn(4)"));
  ExpectInOrder(small, {"tl.load(x1_ptr + (rc1 * 2 + r // 100) * stride_x1_0 + (rows + r) * 0"});
}

TEST(EmitRowsTest, FewLongRowsAreSplitAcrossPrograms) {
  // KernelBench L1 40: 16 rows of 4M elements would be 16 programs on 132 SMs.  Chunks of 32
  // blocks of 8192 give 16 x 16 = 256 programs, about one round of two programs per SM,
  // chunk-major (the 16 rows' programs of one chunk share its weight and bias in L2); the
  // statistics kernel writes each chunk's mean and M2 into two planes, the output kernel
  // combines a row's 16 lanes of each and normalizes its chunk.
  const RowsConfig c = ChooseReduceRows(16, 4194304, 0, true);
  EXPECT_EQ(c.split, 16);
  EXPECT_EQ(c.chunk, 32 * 8192);
  EXPECT_EQ(ChooseReduceRows(300, 20000, 0, true).split, 1);  // rows enough for two waves
  EXPECT_EQ(ChooseReduceRows(16, 8192, 0, true).split, 1);    // one block per row
  const std::string c40 = Emit("F.layer_norm(x0, [64, 256, 256])", "torch.randn(16, 64, 256, 256)");
  ExpectInOrder(c40,
                {"def k0_layer_norm_stats_kernel(x0_ptr",
                 "k0_part_ptr",
                 "partial statistics of 16 chunks of 262144",
                 "chunk = pid // 16",
                 "rows = pid % 16 * BLOCK_O",
                 "start = chunk * 262144",
                 "for r0 in tl.range(0, 262144, BLOCK_R):",
                 "r = start + r0 + tl.arange(0, BLOCK_R)[None, :]",
                 "x0 = tl.load(x0_ptr + row_off + r",
                 "delta = x0 - mean_acc",
                 "n_chunk = tl.minimum(4194304 - start, 262144)",
                 "mean = tl.sum(cnt * mean_acc, axis=1, keep_dims=True) / n_chunk",
                 "part = rows * 16 + chunk\n",
                 "tl.store(k0_part_ptr + part, mean",
                 "tl.store(k0_part_ptr + part + 256, m2",
                 "def k0_layer_norm_kernel(k0_part_ptr",
                 "chunks = tl.arange(0, 16)\n",
                 "chunk_mask = chunks < 16\n",
                 "part = pid % 16 * 16 + chunks\n",
                 "p_mean = tl.load(k0_part_ptr + part, mask=chunk_mask",
                 "p_m2 = tl.load(k0_part_ptr + part + 256, mask=chunk_mask",
                 "p_n = tl.where(chunk_mask, tl.minimum(4194304 - chunks * 262144, 262144), 0)",
                 "mean = tl.sum(p_n * p_mean, axis=0) / 4194304.0",
                 "m2 = tl.sum(p_m2 + p_n * dev * dev, axis=0)",
                 "var = m2 / 4194304.0",
                 "for r0 in tl.range(0, 262144, BLOCK_R):",
                 "tl.store(t0_ptr + row_off + r",
                 "k0_part = torch.empty((512,), device=x0.device, dtype=torch.float32)",
                 "k0_layer_norm_stats_kernel[(256,)](",
                 "k0_layer_norm_kernel[(256,)]("});
  EXPECT_EQ(Count(KernelOf(c40), "tl.load(x0_ptr + row_off + r"), 2);  // two reads in all
}

TEST(EmitRowsTest, SplitSoftmaxCombinesOneRowsChunksToScalars) {
  // The output kernel's programs are (row, chunk) pairs of one row: the row's partials load as
  // one vector and combine to scalars (a [1, chunks] tile beside the [1, BLOCK_R] ones took 39
  // barriers in L1 40's sm_90 build).  A reduction's output kernel (one program per row)
  // keeps the tile.
  const std::string c = Emit("torch.softmax(x0, -1)", "torch.randn(16, 4194304)");
  ExpectInOrder(c, {"def k0_softmax_stats_kernel(", "def k0_softmax_kernel(k0_part_ptr",
                    "chunks = tl.arange(0, 16)\n", "chunk_mask = chunks < 16\n",
                    "part = pid % 16 * 16 + chunks\n",
                    "p_row_max = tl.load(k0_part_ptr + part, mask=chunk_mask",
                    "p_row_sum = tl.load(k0_part_ptr + part + 256, mask=chunk_mask",
                    "row_max = tl.max(p_row_max, axis=0)\n",
                    "row_sum = tl.sum(p_row_sum * tl.exp(p_row_max - row_max), axis=0)\n"});
  const std::string r = Emit("torch.logsumexp(x0, -1)", "torch.randn(16, 4194304)");
  ExpectInOrder(r, {"def k0_logsumexp_kernel(k0_part_ptr", "chunks = tl.arange(0, 16)[None, :]",
                    "row_max = tl.max(p_row_max, axis=1, keep_dims=True)"});
}

TEST(EmitRowsTest, SplitReductionCombinesPartialsPerRow) {
  const std::string c = Emit("torch.amax(x0, -1)", "torch.randn(4, 1000000)");
  ExpectInOrder(c, {"def k0_amax_stats_kernel(", "acc = tl.maximum(acc, tl.where(mask",
                    "part = rows * 62 + chunk\n", "tl.store(k0_part_ptr + part, result",
                    "def k0_amax_kernel(k0_part_ptr, t0_ptr",
                    "p_result = tl.load(k0_part_ptr + part, mask=chunk_mask, other=float('-inf'))",
                    "result = tl.max(p_result, axis=1, keep_dims=True) + tl.sum(tl.where(p_result "
                    "!= p_result",
                    "tl.store(t0_ptr + rows, result, mask=row_mask)",
                    "k0_amax_stats_kernel[(248,)](", "k0_amax_kernel[(4,)](", "num_warps=1"});
  // argmax keeps its first index in one program per row: not split.
  EXPECT_EQ(Emit("torch.argmax(x0, -1)", "torch.randn(4, 1000000)").find("_stats"),
            std::string::npos);
}

// `lines` (the last one's result returned) over one input x0.
std::string EmitLines(const std::vector<std::string>& lines, const std::string& input,
                      int variant = 0) {
  std::string body;
  for (const auto& line : lines) body += "    " + line + "\n";
  const std::string out = lines.back().substr(0, lines.back().find(" ="));
  CodegenOptions options;
  options.variant = variant;
  auto c = EmitCandidate(
      MustParse("def fused_operator(x0):\n" + body + "    return " + out + "\n", input), options);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().ToString());
  return c.ok() ? c.value() : "";
}

// KernelBench L1 91: one kernel walks each row from its end, reading the input in 16-byte
// groups at increasing addresses, reversing the groups in registers for a forward scan and
// back for the store, at the input's own positions (the flips cancel).  No flip kernel.
TEST(EmitRowsTest, FlipCumsumFlipIsOneScanFromTheRowsEnd) {
  const std::string c = EmitLines(
      {"t0 = torch.flip(x0, [1])", "t1 = torch.cumsum(t0, 1)", "t2 = torch.flip(t1, [1])"},
      "torch.randn(32768, 32768)");
  EXPECT_EQ(Count(c, "@triton.jit"), 1);
  ExpectInOrder(c, {"cumsum over 32768 of 32768 rows: one pass from the row's end",
                    "for r0 in tl.range(0, 32768, BLOCK_R):",
                    "r = 32767 // BLOCK_R * BLOCK_R - r0 + (BLOCK_R // 4 - 1 - lane // 4) * 4 + "
                    "lane % 4\n",
                    "x0_ptr + rc0 * stride_x0_0 + r * stride_x0_1 +",
                    "ev, od = tl.split(tl.reshape(xm, [BLOCK_O, BLOCK_R // 4, 2, 2]))",
                    "xs = tl.reshape(tl.join(tl.join(od1, od0), tl.join(ev1, ev0)), [BLOCK_O, "
                    "BLOCK_R])",
                    "out = tl.cumsum(xs, axis=1) + carry",
                    "ev, od = tl.split(tl.reshape(out, [BLOCK_O, BLOCK_R // 4, 2, 2]))",
                    "tl.store(t2_ptr + row_off + r, res, mask=mask)",
                    "last = tl.arange(0, BLOCK_R)[None, :] == BLOCK_R - 1"});
  EXPECT_EQ(Count(c, "32767 - "), 0);  // no decreasing address
  EXPECT_EQ(Count(c, "reverse=True"), 0);
}

// Without the trailing flip the result lands mirrored, in the scanned order: increasing, the
// lanes past the row's end first.  A row that fits one block is that block read from its end.
TEST(EmitRowsTest, FlipCumsumStoresTheScannedOrderMirrored) {
  const std::string c = KernelOf(EmitLines(
      {"t0 = torch.flip(x0, [-1])", "t1 = torch.cumsum(t0, -1)"}, "torch.randn(6, 1003)"));
  ExpectInOrder(
      c, {"one block, reversed", "r = (BLOCK_R // 4 - 1 - lane // 4) * 4 + lane % 4\n",
          "r * stride_x0_1", "out = tl.cumsum(xs, axis=1) + carry", "q = 1003 - BLOCK_R + lane\n",
          "tl.store(t1_ptr + row_off + q, out, mask=row_mask & (q >= 0))"});
  EXPECT_EQ(Loops(c), 0);
  EXPECT_EQ(Count(c, "res ="), 0);  // the scanned groups stay reversed
  const std::string longer =
      EmitLines({"t0 = torch.flip(x0, [-1])", "t1 = torch.cumsum(t0, -1)", "t2 = torch.exp(t1)"},
                "torch.randn(6, 20000)");
  ExpectInOrder(longer, {"for r0 in tl.range(0, 20000, BLOCK_R):",
                         "q = 20000 - BLOCK_R - (19999 // BLOCK_R * BLOCK_R - r0) + lane\n",
                         "# exp", "tl.store(t2_ptr + row_off + q, y"});
}

// A flip after a forward scan is its mirrored store; a flip of another dim too stays a copy,
// and so does the flip of a scan whose result has another reader.
TEST(EmitRowsTest, ScanStoresThroughAFlipOfTheScanDimAlone) {
  const std::string mirrored =
      EmitLines({"t0 = torch.cumsum(x0, 1)", "t1 = torch.flip(t0, [1])", "t2 = torch.relu(t1)"},
                "torch.randn(5, 1000)");
  EXPECT_EQ(Count(mirrored, "@triton.jit"), 1);
  ExpectInOrder(mirrored, {"r = tl.arange(0, BLOCK_R)[None, :]", "tl.cumsum(xm, axis=1)", "# relu",
                           "tl.store(t2_ptr + row_off + (999 - r)"});
  const std::string both_dims = EmitLines(
      {"t0 = torch.cumsum(x0, 1)", "t1 = torch.flip(t0, [0, 1])"}, "torch.randn(5, 1000)");
  EXPECT_EQ(Count(both_dims, "@triton.jit"), 2);
  const std::string shared = EmitLines({"t0 = torch.flip(x0, [1])", "t1 = torch.cumsum(t0, 1)",
                                        "t2 = torch.flip(t1, [1])", "t3 = torch.add(t1, t2)"},
                                       "torch.randn(5, 1000)");
  EXPECT_EQ(Count(shared, "@triton.jit"), 2);
  // The scan still reads from the row's end, and stores its result unflipped.
  ExpectInOrder(shared, {"lane // 4", "tl.store(t1_ptr + row_off + q, out"});
}

// Along a dim that is not the contiguous one, and for cumprod (one element a row at a time),
// the walk stays forward: the loads are vectors across rows, or single elements, whatever the
// order of r.  The flips are index arithmetic, the trailing one the store's.
TEST(EmitRowsTest, StridedAndSequentialScansReadFlipsAsIndexArithmetic) {
  const std::string dim0 = EmitLines(
      {"t0 = torch.flip(x0, [0, 1])", "t1 = torch.cumsum(t0, 0)", "t2 = torch.flip(t1, [0])"},
      "torch.randn(300, 7)");
  EXPECT_EQ(Count(dim0, "@triton.jit"), 1);
  ExpectInOrder(dim0, {"r = r0 + tl.arange(0, BLOCK_R)[None, :]",
                       "x0_ptr + ((299 - r)) * stride_x0_0 + ((6 - rc0)) * stride_x0_1",
                       "tl.store(t2_ptr + ((299 - r)) * 7 + rc0 "});
  // cumprod along the contiguous dim: the sequential walk (variant 1) and the tiled scan
  // (variant 0) both read and store through the flips.
  const std::vector<std::string> reversed = {
      "t0 = torch.flip(x0, [1])", "t1 = torch.cumprod(t0, 1)", "t2 = torch.flip(t1, [1])"};
  const std::string prod = EmitLines(reversed, "torch.rand(4, 300)", 1);
  EXPECT_EQ(Count(prod, "@triton.jit"), 1);
  ExpectInOrder(prod, {"r = r0 + tl.arange(0, BLOCK_R)[None, :]", "((299 - r)) * stride_x0_1",
                       "out = carry * xm.to(carry.dtype)",
                       "tl.store(t2_ptr + row_off + (299 - r)"});
  const std::string tiled = EmitLines(reversed, "torch.rand(4, 300)");
  EXPECT_EQ(Count(tiled, "@triton.jit"), 1);
  ExpectInOrder(tiled, {"((299 - r)) * stride_x0_1", "tl.cumprod(", "(299 - r)"});
}

// The sum over the last dim of a transpose reads its stored input down a column: the rows
// schedule of an outer dim (adjacent rows a program, here 16, and a loop over r), not one row
// of 4096 lanes a program, each lane 2 KB from the next.  A per-row bias, constant along r,
// does not make a contiguous row strided.
TEST(EmitRowsTest, ReducingAStoredColumnTilesAdjacentRows) {
  auto emit = [](const std::string& body, const std::string& inputs) {
    const Program p = MustParse("def fused_operator(x0, x1):\n" + body, inputs);
    auto c = EmitCandidate(p);
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().ToString());
    return c.ok() ? c.value() : "";
  };
  const std::string transposed =
      emit("    t0 = torch.transpose(x0, 0, 1)\n    t1 = torch.relu(t0)\n"
           "    t2 = torch.sum(t1, 1)\n    t3 = torch.add(t2, x1)\n    return t3\n",
           "torch.randn(4096, 512), torch.randn(512)");
  // 512 rows are 8 tiles of 64: R is cut into 32 chunks (a statistics kernel, then the sums)
  // rather than the tile narrowed to 16 rows (heuristics.cc SplitFewStridedRows).
  EXPECT_EQ(Count(transposed, "BLOCK_O=64,"), 2) << transposed;
  ExpectInOrder(transposed, {"def k0_sum_stats_kernel(", "def k0_sum_kernel(k0_part_ptr",
                             "k0_sum_stats_kernel[(256,)](", "k0_sum_kernel[(8,)]("});
  // An argmin's first index does not combine across chunks: the narrow tiles, unsplit.
  const std::string argmin = emit(
      "    t0 = torch.transpose(x0, 0, 1)\n    t1 = torch.argmin(t0, 1)\n    return t1\n",
      "torch.randn(4096, 512), torch.randn(1)");
  EXPECT_EQ(Count(argmin, "BLOCK_O=16,"), 1) << argmin;
  EXPECT_EQ(Count(argmin, "_stats_kernel"), 0) << argmin;
  const std::string biased =
      emit("    t0 = torch.add(x0, x1)\n    t1 = torch.sum(t0, 1)\n    return t1\n",
           "torch.randn(512, 4096), torch.randn(512, 1)");
  EXPECT_EQ(Count(biased, "BLOCK_O=1,"), 1) << biased;
  EXPECT_EQ(Loops(KernelOf(biased)), 0) << biased;
  // A unit dim after the reduced one moves no address (KernelBench L1 37's sums with keepdim).
  const std::string unit =
      emit("    t0 = torch.sum(x0, 2, True)\n    t1 = torch.add(t0, x1)\n    return t1\n",
           "torch.randn(8, 64, 4096, 1), torch.randn(1)");
  EXPECT_EQ(Count(unit, "BLOCK_O=1,"), 1) << unit;
  EXPECT_EQ(Loops(KernelOf(unit)), 0) << unit;
  // Nor does a reduced dim of size 1 (L2 80's mean over (1024, 1)): rows one block each.
  const std::string single =
      emit("    t0 = torch.mean(x0, 1, True)\n    t1 = torch.add(t0, x1)\n    return t1\n",
           "torch.randn(1024, 1), torch.randn(1)");
  EXPECT_EQ(Count(single, "BLOCK_O=1024,"), 1) << single;
}

// A value read at the row's coordinates alone loads once a row ([BLOCK_O, 1] under row_mask):
// an embedding's token index ahead of a layer norm (a tile of the index cost BLOCK_R loads of
// one address a row); the gathered weight row is a tile, masked by the block and the index.
TEST(EmitRowsTest, AnEmbeddingsIndexLoadsOnceARow) {
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n    t0 = F.embedding(x0, x1)\n"
      "    t1 = F.layer_norm(t0, [256])\n    return t1\n",
      "torch.randint(0, 1000, (64, 16)), torch.randn(1000, 256)");
  auto c = EmitCandidate(p, CodegenOptions{});
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  const std::string k = KernelOf(c.value());
  ExpectInOrder(k, {"tl.load(x0_ptr + rc0 * stride_x0_0 + rc1 * stride_x0_1, "
                    "mask=row_mask, other=0)",
                    "tl.load(x1_ptr + row1 * stride_x1_0 + r * stride_x1_1"});
  EXPECT_EQ(Count(k, "mask=row_mask"), 1) << k;
}

}  // namespace
}  // namespace drtriton::codegen

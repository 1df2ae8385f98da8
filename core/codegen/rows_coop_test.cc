// Expected-output tests for the cooperative schedule of softmax and the norms over long rows
// (heuristics.h CooperativeRows, rows_coop.cc): one kernel that reads each chunk once on the
// GPU, and the split pair of kernels, guarded, where it cannot run.
#include <gtest/gtest.h>

#include <string>

#include "codegen/emit_for_tests.h"
#include "codegen/heuristics.h"
#include "codegen/text_checks_for_tests.h"

namespace drtriton::codegen {
namespace {


// The text of the kernel `name` alone.
std::string KernelNamed(const std::string& candidate, const std::string& name) {
  const size_t at = candidate.find("def " + name + "(");
  if (at == std::string::npos) return "";
  const size_t end = candidate.find("\n\n\n", at);
  return candidate.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

TEST(CooperativeRowsTest, LongRowsAreChunksOfOneBlockWithTwoProgramsAnSm) {
  RowsConfig c;
  // Rows of 262,144 (KernelBench L1 34's) are 32 chunks of 8192 over 16 warps, 2 programs an
  // SM at 64 registers a thread.
  ASSERT_TRUE(CooperativeRows(262144, 0, c));
  EXPECT_TRUE(c.cooperative);
  EXPECT_EQ(c.block_r, 8192);
  EXPECT_EQ(c.chunk, 8192);
  EXPECT_EQ(c.split, 32);
  EXPECT_EQ(c.block_o, 1);
  EXPECT_EQ(c.launch.num_warps, 16);
  EXPECT_EQ(c.programs_per_sm, 2);
  EXPECT_EQ(c.coop_max_registers, 64);
  // Variant 3's 2048-element blocks: 4 warps, 8 programs an SM (32 chunks at most).
  RowsConfig v3;
  ASSERT_TRUE(CooperativeRows(65536, 3, v3));
  EXPECT_EQ(v3.block_r, 2048);
  EXPECT_EQ(v3.split, 32);
  EXPECT_EQ(v3.launch.num_warps, 4);
  EXPECT_EQ(v3.programs_per_sm, 8);
  // Variant 2's 16384 is capped at 8192: 32 warps could not fit two programs an SM.
  RowsConfig v2;
  ASSERT_TRUE(CooperativeRows(262144, 2, v2));
  EXPECT_EQ(v2.block_r, 8192);
  // Variant 1 keeps the two-pass loop, the schedule to compare with.
  RowsConfig v1;
  EXPECT_FALSE(CooperativeRows(262144, 1, v1));
  // L1 23's rows of 393,216 (48 chunks) loop: the H200 ran them cooperatively 1.13x slower.
  RowsConfig l1_23;
  EXPECT_FALSE(CooperativeRows(393216, 0, l1_23));
  // Too short (the loop's second read may come from L2), too many chunks to be resident at
  // once, or a runtime size: unchanged.
  RowsConfig untouched;
  EXPECT_FALSE(CooperativeRows(kCooperativeMinRow - 1, 0, untouched));
  EXPECT_FALSE(CooperativeRows(8192 * (kCooperativeMaxSplit + 1), 0, untouched));
  EXPECT_FALSE(CooperativeRows(kUnknownSize, 0, untouched));
  EXPECT_FALSE(untouched.cooperative);
  EXPECT_EQ(untouched.split, 1);
}

TEST(CooperativeRowsTest, SoftmaxReadsEachChunkOnceAndWaitsForItsRow) {
  const std::string c = EmitOneOp("torch.softmax(x0, 1)", "torch.randn(4096, 262144)");
  const std::string coop = KernelNamed(c, "k0_softmax_coop_kernel");
  ASSERT_FALSE(coop.empty()) << c;
  EXPECT_EQ(Count(coop, "tl.load(x0_ptr"), 1);  // the chunk, read once
  ExpectInOrder(coop, {"item = pid\n", "while item < 131072:", "row = item // 32",
                       "chunk = item % 32", "start = chunk * 8192",
                       "r = start + tl.arange(0, BLOCK_R)[None, :]", "tl.load(x0_ptr",
                       "c_max = tl.max(xm, axis=1, keep_dims=True)",
                       "c_ref = tl.where(c_max == float('-inf'), 0.0, c_max)",
                       "c_sum = tl.sum(tl.exp(xm - c_ref), axis=1, keep_dims=True)",
                       "tl.store(k0_part_ptr + part, c_max",
                       "tl.store(k0_part_ptr + part + 131072, c_sum",
                       "tl.debug_barrier()",
                       "arrived = tl.atomic_add(k0_count_ptr + row, 1, sem=\"acq_rel\") + 1",
                       "while arrived < 32:",
                       "arrived = tl.atomic_add(k0_count_ptr + row, 0, sem=\"acquire\")",
                       "tl.debug_barrier()", "part = row * 32 + chunks",
                       "p_row_max = tl.load(k0_part_ptr + part, mask=chunk_mask, "
                       "other=float('-inf'), volatile=True)",
                       "row_max = tl.max(p_row_max, axis=0)",
                       "result = tl.exp(x0 - row_max) * row_inv",
                       "tl.store(t0_ptr + row_off + r, result, mask=mask)",
                       "item += tl.num_programs(0)"});
  // The wrapper: one partials buffer, the counters, a grid of whole rows of resident programs,
  // and the split pair where that is no row (the CPU, or a GPU under 24 SMs).
  EXPECT_EQ(Count(c, "k0_part = torch.empty("), 1);
  ExpectInOrder(
      c, {"def triton_fused_operator(x0):",
          "k0_part = torch.empty((262144,), device=x0.device, dtype=torch.float32)",
          "k0_count = torch.zeros((4096,), device=x0.device, dtype=torch.int32)",
          "k0_programs = min(131072, torch.cuda.get_device_properties(x0.device)"
          ".multi_processor_count * 2 // 32 * 32) if x0.device.type == \"cuda\" else 0",
          "k0_coop = k0_programs >= 32", "if k0_coop:", "k0_softmax_coop_kernel[(k0_programs,)](",
          "num_warps=16, maxnreg=64, launch_cooperative_grid=True", "if not k0_coop:",
          "k0_softmax_stats_kernel[(131072,)](", "if not k0_coop:",
          "k0_softmax_kernel[(131072,)]("});
  // The split pair's launches take neither option.
  EXPECT_EQ(Count(c, "maxnreg="), 1);
  EXPECT_EQ(Count(c, "launch_cooperative_grid"), 1);
}

TEST(CooperativeRowsTest, NormsPublishTheirChunksMeanAndSquaredDeviations) {
  // KernelBench L1 34: 7168 instance-norm rows of 512 x 512 (32 chunks).
  const std::string c = EmitOneOp("F.instance_norm(x0)", "torch.randn(112, 64, 512, 512)");
  const std::string coop = KernelNamed(c, "k0_instance_norm_coop_kernel");
  ASSERT_FALSE(coop.empty()) << c;
  ExpectInOrder(coop, {"while item < 229376:", "row = item // 32",
                       "n_chunk = tl.minimum(262144 - start, 8192).to(tl.float32)",
                       "c_mean = tl.sum(tl.where(mask, x0, 0.0), axis=1, keep_dims=True) / n_chunk",
                       "c_m2 = tl.sum(xc * xc, axis=1, keep_dims=True)",
                       "while arrived < 32:", "p_mean = tl.load(", "volatile=True",
                       "p_n = tl.where(chunk_mask, tl.minimum(262144 - chunks * 8192, 8192), 0)",
                       "mean = tl.sum(p_n * p_mean, axis=0) / 262144.0", "var = m2 / 262144.0",
                       "rstd = 1.0 / tl.sqrt(var + 1e-05)", "(x0 - mean) * rstd",
                       "item += tl.num_programs(0)"});
  // Contiguous rows are read flat under CONTIG, strided otherwise: one read on each path.
  EXPECT_EQ(Count(coop, "tl.load(x0_ptr"), 2);
  EXPECT_NE(coop.find("if CONTIG:"), std::string::npos);
}

TEST(CooperativeRowsTest, OtherRowsKeepTheirSchedules) {
  // Under the cooperative row length: the two-pass loop, one kernel.
  const std::string shorter = EmitOneOp("torch.softmax(x0, 1)", "torch.randn(4096, 32768)");
  EXPECT_EQ(shorter.find("coop"), std::string::npos);
  EXPECT_EQ(Count(shorter, "@triton.jit"), 1);
  // A reduction reads a long row once anyway.
  EXPECT_EQ(EmitOneOp("torch.sum(x0, 1)", "torch.randn(4096, 393216)").find("coop"),
            std::string::npos);
  // Along a middle dim the reduced elements are strided: 64-row tiles, no chunks of a row.
  EXPECT_EQ(EmitOneOp("torch.softmax(x0, 1)", "torch.randn(2, 100000, 8)").find("coop"),
            std::string::npos);
  // Runtime sizes: the generic kernel's loop.
  EXPECT_EQ(EmitOneOp("torch.softmax(x0, 1)", "torch.randn(64, 100000)", true).find("coop"),
            std::string::npos);
  // More chunks than resident programs (L1 40's rows of 4M are 512 blocks): the split pair
  // alone, unguarded.
  const std::string few = EmitOneOp("torch.softmax(x0, -1)", "torch.randn(16, 4194304)");
  EXPECT_EQ(few.find("coop"), std::string::npos);
  EXPECT_EQ(few.find("if not"), std::string::npos);
}

}  // namespace
}  // namespace drtriton::codegen

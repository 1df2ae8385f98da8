// Expected-output tests for the pooling strip kernels (emit_pool_strips.cc): which pools take
// them, how many 16-byte chunks each strip loads, that no address of the contiguous dim is
// clamped or masked lane by lane (Triton would then load 4 bytes at a time), and the tiles.
#include <gtest/gtest.h>

#include <string>

#include "codegen/emit_for_tests.h"
#include "codegen/heuristics.h"
#include "codegen/text_checks_for_tests.h"

namespace drtriton::codegen {
namespace {


std::string KernelOf(const std::string& candidate) {
  return candidate.substr(0, candidate.find("def triton_fused_operator"));
}

TEST(EmitPoolStripsTest, DilatedMaxPool1dLoadsAlignedChunks) {
  // KernelBench L1 41's window (k=8, s=1, p=4, d=3): lanes 0-3 of a strip read inputs
  // -4 .. 24 past its start, chunks -1 .. 5 (7 loads, 1.75 an output).
  const std::string k =
      KernelOf(EmitOneOp("F.max_pool1d(x0, 8, 1, 4, 3)", "torch.randn(2, 3, 4096)"));
  EXPECT_EQ(Count(k, "tl.load("), 7);
  EXPECT_EQ(Count(k, "tl.where(ok"), 0);  // no clamped index
  EXPECT_EQ(Count(k, "% "), 2);  // the row's channel, and the strip of a program's row
  ExpectInOrder(k, {"strips of 4 along dim 2, 7 chunk loads a strip", "row = pid // ROW_BLOCKS",
                    "first = strip * 4", "cs0 = first - 4", "cok0 = (cs0 >= 0)",
                    "cs6 = first + 20", "cok6 = (cs6 < 4096)",
                    "(cs0 + lanes) * stride_x0_2", "win = tl.where(m0_0, x0, float('-inf'))",
                    "tl.split(tl.reshape(win, [BLOCK_R * BLOCK_G, 2, 2]))",
                    "acc0 = col0", "acc0 = tl.maximum(acc0, col3, propagate_nan=",
                    "result = tl.reshape(tl.join(resulte, resulto), [BLOCK_R * BLOCK_G, 4])",
                    "out_mask = strip_mask & (ow < 4083)", "mask=out_mask)"});
  // Chunks 1-4 are inside the row for every strip: no mask term beyond strip_mask, no refill.
  EXPECT_EQ(Count(k, "cok"), 2 * 3);  // cok0, cok5, cok6: defined, then in one mask each
  EXPECT_EQ(Count(k, "win = tl.where("), 3);
}

TEST(EmitPoolStripsTest, AvgPool3dStrideTwoReadsEachRowTapOnce) {
  // L1 46's window (k=3, s=2, p=1): 9 row taps x 3 chunks (inputs -1 .. 7 of a strip of 4).
  const std::string k =
      KernelOf(EmitOneOp("F.avg_pool3d(x0, 3, 2, 1)", "torch.randn(2, 3, 16, 16, 32)"));
  EXPECT_EQ(Count(k, "tl.load("), 27);
  EXPECT_EQ(Count(k, "tl.where("), 0);  // masked lanes load 0.0, which a sum needs
  ExpectInOrder(k, {"strips of 4 along dim 4, 27 chunk loads a strip",
                    "row = pid * BLOCK_R + q // BLOCK_G", "start0 = oc2 * 2 - 1",
                    "first = strip * 8", "cs0 = first - 4", "ok0_0 = (i0_0 >= 0)",
                    "m0_0 = strip_mask & ok0_0 & ok1_0 & cok0",
                    "result = result / (27)", "tl.store("});
}

TEST(EmitPoolStripsTest, DivisorFollowsTorchWhereWindowsAreClipped) {
  // ceil_mode: the last window (7 .. 9) runs past input + padding (9), so its divisor is
  // computed; inside, each window's is the kernel size.
  const std::string k = KernelOf(EmitOneOp("F.avg_pool1d(x0, 3, 2, 1, True)", "torch.randn(2, 8)"));
  EXPECT_NE(k.find("wstart = ow * 2 - 1"), std::string::npos);
  EXPECT_NE(k.find("result = result / ((tl.minimum(wstart + 3, 9) - wstart))"),
            std::string::npos);
  const std::string exclude =
      KernelOf(EmitOneOp("F.avg_pool1d(x0, 3, 1, 1, False, False)", "torch.randn(2, 9)"));
  EXPECT_NE(exclude.find("(tl.minimum(tl.minimum(wstart + 3, 10), 9) - tl.maximum(wstart, 0))"),
            std::string::npos);
}

TEST(EmitPoolStripsTest, LargeWindowsAdaptivePoolsAndGenericShapesKeepTheWindowKernel) {
  // 7x7x7: 49 row taps x 3 chunks = 147 loads, past kMaxChunkLoads.
  const std::string strips = "strips of";
  EXPECT_EQ(Count(EmitOneOp("F.max_pool3d(x0, 7, 1, 1)", "torch.randn(1, 2, 9, 9, 9)"), strips), 0);
  EXPECT_EQ(Count(EmitOneOp("F.adaptive_avg_pool2d(x0, 3)", "torch.randn(2, 3, 8, 8)"), strips),
            0);
  EXPECT_EQ(Count(EmitOneOp("F.max_pool2d(x0, 2)", "torch.randn(2, 3, 8, 8)", true), strips), 0);
}

TEST(EmitPoolStripsTest, TilesForTheGpuAndTheInterpreter) {
  // Long rows: one row a program, 128 strips (4 warps); the interpreter takes 8192.
  const StripConfig gpu = ChooseStrips(12288, 16381, 4, 0);
  EXPECT_EQ(gpu.block_r, 1);
  EXPECT_EQ(gpu.block_g, 128);
  EXPECT_EQ(gpu.row_blocks, 128);
  EXPECT_EQ(gpu.programs, 12288 * 128);
  EXPECT_EQ(gpu.launch.num_warps, 4);
  const StripConfig cpu = InterpreterStrips(gpu, 12288, 16381);
  EXPECT_EQ(cpu.block_g, 8192);
  EXPECT_EQ(cpu.row_blocks, 2);
  // Short rows (L1 46: 32 strips of 4): four rows a program; the interpreter 256.
  const StripConfig rows = ChooseStrips(16 * 32 * 64 * 64, 32, 4, 0);
  EXPECT_EQ(rows.block_g, 32);
  EXPECT_EQ(rows.block_r, 4);
  EXPECT_EQ(InterpreterStrips(rows, 16 * 32 * 64 * 64, 32).block_r, 256);
  // The wrapper picks by the inputs' device.
  ExpectInOrder(EmitOneOp("F.max_pool1d(x0, 8, 1, 4, 3)", "torch.randn(2, 3, 4096)"),
                {"k0_tile = (1, 128, 8) if x0.device.type != \"cpu\" else (1, 1024, 1)",
                 "[(triton.cdiv(6, k0_tile[0]) * k0_tile[2],)]",
                 "BLOCK_R=k0_tile[0], BLOCK_G=k0_tile[1], ROW_BLOCKS=k0_tile[2]"});
}

}  // namespace
}  // namespace drtriton::codegen

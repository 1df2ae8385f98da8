// A contraction whose epilogue ends in a row operator over its channels (fusion.h
// Group::row_tail): which programs the planner fuses into the contraction's kernel, and what
// that kernel computes across its tile's columns.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/fusion.h"
#include "codegen/heuristics.h"
#include "codegen/text_checks_for_tests.h"
#include "ir/parse_for_tests.h"

namespace drtriton::codegen {
namespace {

Program Parse(const std::string& body, const std::string& args, const std::string& inputs) {
  return MustParse("def fused_operator(" + args + "):\n" + body, inputs);
}

std::string KernelsOf(const Program& p) {
  auto c = EmitCandidate(p, CodegenOptions{});
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  return c.ok() ? c.value().substr(0, c.value().find("def triton_fused_operator")) : "";
}

TEST(RowTailTest, AChannelSoftmaxAfterAConvolutionIsItsEpilogue) {
  // KernelBench L2 91's shape of program: conv, softmax over the 24 output channels, sigmoid.
  const Program p = Parse(
      "    t0 = F.conv2d(x0, x1, x2)\n    t1 = torch.softmax(t0, 1)\n"
      "    t2 = torch.sigmoid(t1)\n    return t2\n",
      "x0, x1, x2", "torch.randn(2, 8, 10, 10), torch.randn(24, 8, 3, 3), torch.randn(24)");
  const FusionPlan plan = PlanFusion(p, /*fuse_epilogue=*/true);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].kind, GroupKind::kContraction);
  ASSERT_TRUE(plan.groups[0].row_tail.valid());
  EXPECT_EQ(p.value(p.node(plan.groups[0].row_tail).result).name, "t1");
  EXPECT_EQ(p.value(plan.groups[0].output).name, "t2");
  EXPECT_FALSE(plan.materialized[p.FindValue("t0").index]);
  EXPECT_FALSE(plan.materialized[p.FindValue("t1").index]);
  const std::string k = KernelsOf(p);
  EXPECT_EQ(Count(k, "softmax_kernel"), 0);
  // In the kernel and in its range guard's ieee tile: the row's maximum out before exp.
  ExpectInOrder(k, {"rt", "_max = tl.max(tl.where(mask_n, acc, float('-inf')), axis=1)[:, None]",
                    "_exp = tl.where(mask_n, tl.exp(acc - rt", "_sum = tl.sum(rt",
                    "tl.sigmoid(rt"});
  EXPECT_EQ(Count(k, "mask = mask_m & (offs_n == 0)"), 0);  // softmax keeps every column
}

TEST(RowTailTest, AReductionOverTheChannelsStoresOneColumn) {
  // amin over the channels, kept, then tanh (L2 25's shape): one element a row, stored at
  // channel 0 from the tile's first column only.
  const Program p = Parse(
      "    t0 = F.conv2d(x0, x1)\n    t1 = torch.relu(t0)\n    t2 = torch.amin(t1, 1, True)\n"
      "    t3 = torch.tanh(t2)\n    return t3\n",
      "x0, x1", "torch.randn(2, 8, 10, 10), torch.randn(16, 8, 3, 3)");
  const FusionPlan plan = PlanFusion(p, true);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(p.value(plan.groups[0].output).name, "t3");
  const std::string k = KernelsOf(p);
  // A NaN among the channels makes the minimum NaN, as torch.amin's.
  ExpectInOrder(k, {"_lanes = tl.where(mask_n, ", ", float('inf'))",
                    "_lanes, axis=1)[:, None] + ",
                    "_lanes != rt",
                    "mask = mask_m & (offs_n == 0)",
                    "tl.store(t3_ptr + mc0 * 64 + mc1 * 8 + mc2 "});
}

TEST(RowTailTest, OnlyOverTheChannelsOfOneTileAndOnlyTheChainsEnd) {
  const auto grouped = [](const std::string& body, const std::string& args,
                          const std::string& inputs) {
    const Program p = Parse(body, args, inputs);
    const FusionPlan plan = PlanFusion(p, true);
    return plan.groups.size() == 1 && plan.groups[0].row_tail.valid();
  };
  const std::string conv = "torch.randn(2, 8, 10, 10), ";
  // Over the channels, 16 of them: fused.
  EXPECT_TRUE(grouped("    t0 = F.conv2d(x0, x1)\n    t1 = torch.sum(t0, 1)\n    return t1\n",
                      "x0, x1", conv + "torch.randn(16, 8, 3, 3)"));
  // Over a spatial dim; over 256 channels (more than one tile, and a convolution's: no
  // partials); two groups; the conv's output returned as well: each a kernel of its own.
  EXPECT_FALSE(grouped("    t0 = F.conv2d(x0, x1)\n    t1 = torch.sum(t0, 2)\n    return t1\n",
                       "x0, x1", conv + "torch.randn(16, 8, 3, 3)"));
  EXPECT_FALSE(grouped("    t0 = F.conv2d(x0, x1)\n    t1 = torch.sum(t0, 1)\n    return t1\n",
                       "x0, x1", conv + "torch.randn(256, 8, 3, 3)"));
  EXPECT_FALSE(grouped(
      "    t0 = F.conv2d(x0, x1, None, 1, 0, 1, 2)\n    t1 = torch.sum(t0, 1)\n    return t1\n",
      "x0, x1", conv + "torch.randn(16, 4, 3, 3)"));
  const Program returned = Parse(
      "    t0 = F.conv2d(x0, x1)\n    t1 = torch.softmax(t0, 1)\n    return t0, t1\n", "x0, x1",
      conv + "torch.randn(16, 8, 3, 3)");
  for (const Group& g : PlanFusion(returned, true).groups) EXPECT_FALSE(g.row_tail.valid());
  // A linear's features and a bmm's last dim are its channels (log_softmax over them).
  EXPECT_TRUE(grouped("    t0 = torch.bmm(x0, x1)\n    t1 = torch.log_softmax(t0, 2)\n"
                      "    return t1\n",
                      "x0, x1", "torch.randn(3, 20, 16), torch.randn(3, 16, 48)"));
}

TEST(RowTailTest, AGemmsWideReductionIsCombinedFromPartials) {
  // L2 80's shape: a linear's 8192 features, their maximum, then gelu on the (1024, 1) result.
  const std::string body =
      "    t0 = F.linear(x0, x1)\n    t1 = torch.amax(t0, 1, True)\n    t2 = F.gelu(t1)\n"
      "    return t2\n";
  const Program p = Parse(body, "x0, x1", "torch.randn(1024, 512), torch.randn(8192, 512)");
  const FusionPlan plan = PlanFusion(p, true);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_TRUE(plan.groups[0].row_tail_partials);
  EXPECT_EQ(p.value(plan.groups[0].output).name, "t2");
  EXPECT_FALSE(PlanFusion(p, true, /*literal_shapes=*/false).groups[0].row_tail.valid());
  auto c = EmitCandidate(p, CodegenOptions{});
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  // 8192 features are 128 chunks of 64 a row; the GEMM stores them, the tail kernel reads
  // them as one lane each and computes gelu; the partials are allocated before either GEMM.
  ExpectInOrder(c.value(), {"rt_chunk = pid_n * (BLOCK_N // 64)",
                            "rt_at = (pid_b * 1024 + offs_m) * 128 + rt_chunk",
                            "def k0_linear_tail_kernel(k0_tail_ptr",
                            "p_best = tl.load(k0_tail_ptr + at, mask=chunk_mask", "erf",
                            "k0_tail = torch.empty((131072,)", "k0_linear_tma_kernel[(",
                            "k0_linear_kernel[", "k0_linear_tail_kernel[(32,)]("});
  // Softmax needs every column again; a convolution's tiles take other forms: not fused.
  const auto partials = [](const std::string& b, const std::string& inputs) {
    const Program q = Parse(b, "x0, x1", inputs);
    const FusionPlan pl = PlanFusion(q, true);
    return pl.groups[0].row_tail.valid() || pl.groups[0].row_tail_partials;
  };
  EXPECT_FALSE(partials("    t0 = F.linear(x0, x1)\n    t1 = torch.softmax(t0, 1)\n    return t1\n",
                        "torch.randn(1024, 512), torch.randn(8192, 512)"));
  EXPECT_FALSE(partials("    t0 = F.conv2d(x0, x1)\n    t1 = torch.sum(t0, 1)\n    return t1\n",
                        "torch.randn(2, 8, 10, 10), torch.randn(256, 8, 3, 3)"));
}

TEST(RowTailTest, AGroupNormWhoseGroupsFitEveryTileIsTheGemmsEpilogue) {
  // KernelBench L2 37's form: x * sigmoid(x) reads the linear's output twice; its paths join
  // at the mul, so the epilogue goes on through the bias to the norm (groups of 64).
  const auto plan_of = [](const std::string& norm, const std::string& inputs) {
    const Program q = Parse("    t0 = F.linear(x0, x1)\n    t1 = torch.sigmoid(t0)\n"
                            "    t2 = torch.mul(t1, t0)\n" + norm + "    return t3\n",
                            "x0, x1", inputs);
    return std::make_pair(q, PlanFusion(q, true));
  };
  const auto [p, plan] = plan_of("    t3 = F.group_norm(t2, 64)\n",
                                 "torch.randn(256, 64), torch.randn(4096, 64)");
  ASSERT_EQ(plan.groups.size(), 1u);
  ASSERT_TRUE(plan.groups[0].row_tail.valid());
  EXPECT_FALSE(plan.groups[0].row_tail_partials);
  EXPECT_EQ(p.value(plan.groups[0].output).name, "t3");
  EXPECT_FALSE(plan.materialized[p.FindValue("t0").index]);
  EXPECT_FALSE(plan.materialized[p.FindValue("t2").index]);
  ExpectInOrder(KernelsOf(p), {"rt4_g = tl.reshape(rt4_v, [rt4_v.shape[0], rt4_v.shape[1] // 64, "
                               "64])",
                               "rt4_var = tl.sum(rt4_c * rt4_c, axis=2, keep_dims=True) / 64",
                               "1.0 / tl.sqrt(rt4_var + 1e-05)"});
  // Groups of 48 (not a power of two), of 128 (wider than the narrowest tile), or of a
  // convolution's output (its statistics span the positions of many tiles): a rows kernel.
  for (const auto& [norm, inputs] : std::vector<std::pair<std::string, std::string>>{
           {"    t3 = F.group_norm(t2, 4)\n", "torch.randn(256, 64), torch.randn(192, 64)"},
           {"    t3 = F.group_norm(t2, 2)\n", "torch.randn(256, 64), torch.randn(256, 64)"}}) {
    const auto [q, pl] = plan_of(norm, inputs);
    EXPECT_FALSE(pl.groups[0].row_tail.valid()) << norm << inputs;
    EXPECT_EQ(q.value(pl.groups[0].output).name, "t2");
  }
  const Program conv = Parse("    t0 = F.conv2d(x0, x1)\n    t1 = F.group_norm(t0, 8)\n"
                             "    return t1\n",
                             "x0, x1", "torch.randn(2, 8, 10, 10), torch.randn(64, 8, 3, 3)");
  EXPECT_FALSE(PlanFusion(conv, true).groups[0].row_tail.valid());
  // A join is not taken where a path out of x ends outside the epilogue (a sum reads x too).
  const Program summed = Parse("    t0 = F.linear(x0, x1)\n    t1 = torch.sigmoid(t0)\n"
                               "    t2 = torch.mul(t1, t0)\n    t3 = torch.sum(t0, 1)\n"
                               "    return t2, t3\n",
                               "x0, x1", "torch.randn(256, 64), torch.randn(512, 64)");
  const FusionPlan split = PlanFusion(summed, true);
  EXPECT_TRUE(split.materialized[summed.FindValue("t0").index]);
}

TEST(RowTailTest, FittingSharedMemoryKeepsEveryChannelInTheTile) {
  ContractionConfig c = ChooseContraction(4096, 128, 4096, 1, 0);
  c.block_m = 128;
  c.block_n = 128;
  c.min_block_n = 128;
  FitSharedMemory({40, 40}, &c);  // far past the budget: block_m halves, block_n stays
  EXPECT_EQ(c.block_n, 128);
  EXPECT_LT(c.block_m, 128);
}

}  // namespace
}  // namespace drtriton::codegen

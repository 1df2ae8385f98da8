// A training batch norm of a contraction's stored output (fusion.h Group::column_stats): which
// programs the planner pairs, the statistics each tile stores and the kernel that combines
// them in place of the norm's statistics kernel.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/fusion.h"
#include "codegen/text_checks_for_tests.h"
#include "ir/parse_for_tests.h"

namespace drtriton::codegen {
namespace {

constexpr const char* kNorm =
    "torch.batch_norm(t1, x3, x4, None, None, True, 0.1, 1e-05, True)\n    return t2\n";

// conv -> relu -> batch norm over `channels` output channels.
Program ConvNorm(const std::string& input, const std::string& conv, int channels = 64) {
  const std::string vec = ", torch.randn(" + std::to_string(channels) + ")";
  return MustParse("def fused_operator(x0, x1, x2, x3, x4):\n    t0 = " + conv +
                       "\n    t1 = torch.relu(t0)\n    t2 = " + kNorm,
                   input + vec + vec + vec);
}

const Group& GroupStoring(const Program& p, const FusionPlan& plan, const std::string& name) {
  for (const Group& g : plan.groups)
    if (p.value(g.output).name == name) return g;
  ADD_FAILURE() << "no group stores " << name;
  return plan.groups.front();
}

TEST(ColumnStatsTest, AConvolutionsTilesWriteTheBatchNormsStatistics) {
  // 5 x 64 x 64 = 20,480 positions a channel (more than kColumnStatsMinRows), of 64 channels.
  const Program p = ConvNorm("torch.randn(5, 16, 66, 66), torch.randn(64, 16, 3, 3)",
                             "F.conv2d(x0, x1, x2)");
  const FusionPlan plan = PlanFusion(p, /*fuse_epilogue=*/true, true, /*column_stats=*/true);
  const Group& conv = GroupStoring(p, plan, "t1");
  const Group& norm = GroupStoring(p, plan, "t2");
  ASSERT_TRUE(conv.column_stats.valid());
  EXPECT_EQ(conv.column_stats, norm.anchor);
  EXPECT_TRUE(norm.stats_from_columns);
  CodegenOptions options;
  options.column_stats = true;
  auto c = EmitCandidate(p, options);
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  const std::string& text = c.value();
  // Every kernel of the convolution (the shifted-rows TMA one, for each half of its halved
  // epilogue, the pointer one and its range guard's tile) stores the statistics of its tile,
  // then the tile: a slot a tile, 3 x 64 floats a slot.
  EXPECT_EQ(Count(text, "tl.store(t1_colstats_ptr + cs_at + 128, cs_m2, mask=mask_n)"), 4);
  ExpectInOrder(text, {"acc = acc_lo", "cs_at = (pid // 1) * 192 + offs_n", "cs_m2, mask=mask_n)",
                       "tl.store(t1_ptr", "acc = acc_hi", "cs_at = (pid // 1) * 192 + offs_n",
                       "tl.store(t1_ptr", "cs_at = pid_m * 192 + offs_n"});
  // Slots: 5 samples x 33 TMA tiles of 128 positions up to each sample's last output (63 x 66
  // + 64), more than the pointer kernel's 20,480 / 128; zeroed before any launch.
  ExpectInOrder(text, {"t1_colstats = torch.zeros((165, 3, 64)", "k0_x0_cl_kernel[",
                       "k1_batch_norm_train_colstats_kernel[(2, 32)](",
                       "SLOTS=t1_colstats.shape[0]", "k1_batch_norm_train_kernel["});
  EXPECT_EQ(Count(text, "batch_norm_train_stats_kernel"), 0);
  // The norm's kernel combines the 32 counted parts of its channel.
  ExpectInOrder(text, {"p_n = tl.load(k1_part_ptr + part", "mean = tl.sum(p_n * p_mean"});
}

TEST(ColumnStatsTest, OnlyOverManyRowsAndTheContractionsChannels) {
  // 2 x 8 x 8 = 128 positions a channel: the norm reads its input once anyway; 20,480 of 24
  // channels (491,520 values): the saved read is worth less than the combining launch.
  for (const Program& small :
       {ConvNorm("torch.randn(2, 16, 10, 10), torch.randn(64, 16, 3, 3)", "F.conv2d(x0, x1, x2)"),
        ConvNorm("torch.randn(5, 16, 66, 66), torch.randn(24, 16, 3, 3)", "F.conv2d(x0, x1, x2)",
                 24)})
    for (const Group& g : PlanFusion(small, true, true, true).groups) {
      EXPECT_FALSE(g.column_stats.valid());
      EXPECT_FALSE(g.stats_from_columns);
    }
  // A transposed convolution's tiles are its stride phases': not paired.
  const Program transposed =
      ConvNorm("torch.randn(5, 16, 66, 66), torch.randn(16, 64, 3, 3)",
               "F.conv_transpose2d(x0, x1, x2, 2, 1, 1)");
  for (const Group& g : PlanFusion(transposed, true, true, true).groups)
    EXPECT_FALSE(g.column_stats.valid());
  // Without epilogue fusion each operator is its own kernel.
  const Program many = ConvNorm("torch.randn(5, 16, 66, 66), torch.randn(64, 16, 3, 3)",
                                "F.conv2d(x0, x1, x2)");
  for (const Group& g : PlanFusion(many, /*fuse_epilogue=*/false, true, true).groups)
    EXPECT_FALSE(g.column_stats.valid());
  // Generic-shape mode has no literal rows to count.
  for (const Group& g : PlanFusion(many, true, /*literal_shapes=*/false, true).groups)
    EXPECT_FALSE(g.column_stats.valid());
}

TEST(ColumnStatsTest, OnlyOnRequestAndAsVariantZerosAlternative) {
  // Not by default (fusion.h: they cost the contraction's kernel what they save); the
  // variants list variant 0 as it is, then with the statistics, then the block sizes'.
  const Program p = ConvNorm("torch.randn(5, 16, 66, 66), torch.randn(64, 16, 3, 3)",
                             "F.conv2d(x0, x1, x2)");
  for (const Group& g : PlanFusion(p, true).groups) EXPECT_FALSE(g.column_stats.valid());
  auto plain = EmitCandidate(p, CodegenOptions{});
  ASSERT_TRUE(plain.ok()) << plain.error().ToString();
  EXPECT_EQ(Count(plain.value(), "colstats"), 0);
  EXPECT_EQ(Count(plain.value(), "batch_norm_train_stats_kernel"), 2);  // def, launch
  CodegenOptions with;
  with.column_stats = true;
  auto paired = EmitCandidate(p, with);
  ASSERT_TRUE(paired.ok()) << paired.error().ToString();
  const std::vector<std::string> variants = EmitVariants(p, 3);
  ASSERT_EQ(variants.size(), 3u);
  EXPECT_EQ(variants[0], plain.value());
  EXPECT_EQ(variants[1], paired.value());
  EXPECT_EQ(Count(variants[2], "colstats"), 0);
  // A program without a pairable norm gets no duplicate: the block sizes' variant comes next.
  const Program conv = MustParse("def fused_operator(x0, x1):\n    t0 = F.conv2d(x0, x1)\n"
                                 "    return t0\n",
                                 "torch.randn(5, 16, 66, 66), torch.randn(64, 16, 3, 3)");
  const std::vector<std::string> two = EmitVariants(conv, 2);
  ASSERT_EQ(two.size(), 2u);
  CodegenOptions second;
  second.variant = 1;
  auto v1 = EmitCandidate(conv, second);
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ(two[1], v1.value());
}

}  // namespace
}  // namespace drtriton::codegen

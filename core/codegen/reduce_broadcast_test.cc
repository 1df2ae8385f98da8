// A reduction read back over its rows (fusion.h Group::broadcast): which programs the planner
// fuses into one rows kernel, and what that kernel reads.
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen.h"
#include "codegen/fusion.h"
#include "codegen/text_checks_for_tests.h"
#include "ir/parse_for_tests.h"

namespace drtriton::codegen {
namespace {

Program Parse(const std::string& body, const std::string& args, const std::string& inputs) {
  return MustParse("def fused_operator(" + args + "):\n" + body, inputs);
}

// x / sqrt(mean(x * x, 1, keepdim) + eps), RMSNorm over the channels of (N, C, H, W).
const char* kRms =
    "    t0 = torch.mul(x0, x0)\n    t1 = torch.mean(t0, 1, True)\n"
    "    t2 = torch.add(t1, x1)\n    t3 = torch.sqrt(t2)\n    t4 = torch.div(x0, t3)\n"
    "    return t4\n";

TEST(ReduceBroadcastTest, AStatisticReadBackOverItsRowsIsOneRowsKernel) {
  const Program p = Parse(kRms, "x0, x1", "torch.randn(8, 64, 16, 16), torch.rand(1)");
  const FusionPlan plan = PlanFusion(p, /*fuse_epilogue=*/true);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].kind, GroupKind::kRows);
  EXPECT_TRUE(plan.groups[0].broadcast);
  EXPECT_EQ(p.value(plan.groups[0].output).name, "t4");
  // Without epilogue fusion (a variant) the statistic is stored and a pointwise kernel follows.
  EXPECT_EQ(PlanFusion(p, false).groups.size(), 2u);
  auto c = EmitCandidate(p, CodegenOptions{});
  ASSERT_TRUE(c.ok());
  const std::string kernel = c.value().substr(0, c.value().find("def triton_fused_operator"));
  EXPECT_EQ(Count(kernel, "@triton.jit"), 1);
  EXPECT_EQ(Count(kernel, "tl.load(x0_ptr"), 1);  // the row, read once and divided in registers
  ExpectInOrder(kernel, {"mean over 64 of 2048 rows: one block, written back over the row",
                         "total = tl.sum(acc, axis=1, keep_dims=True)", "stat = total / 64.0",
                         "tl.sqrt(", "x0 / ", "tl.store(t4_ptr"});
}

TEST(ReduceBroadcastTest, LongRowsAreReadTwiceInOneKernel) {
  // 300 rows of 20,000: the sum over blocks, then each block again, subtracted and stored.
  const Program p = Parse(
      "    t0 = torch.mean(x0, 1, True)\n    t1 = torch.sub(x0, t0)\n    return t1\n", "x0",
      "torch.randn(300, 20000)");
  auto c = EmitCandidate(p, CodegenOptions{});
  ASSERT_TRUE(c.ok());
  const std::string kernel = c.value().substr(0, c.value().find("def triton_fused_operator"));
  EXPECT_EQ(Count(kernel, "@triton.jit"), 1);
  ExpectInOrder(kernel,
                {"two passes: the reduction, then the rows written back",
                 "for r0 in tl.range(0, 20000, BLOCK_R):", "stat = total / 2e+04",
                 "for r0 in tl.range(0, 20000, BLOCK_R):", "tl.store(t1_ptr + row_off + r"});
}

TEST(ReduceBroadcastTest, OtherReadersOrShapesKeepTheStatisticStored) {
  const std::string inputs = "torch.randn(300, 1000)";
  // The statistic is returned too.
  const Program returned = Parse(
      "    t0 = torch.sum(x0, 1, True)\n    t1 = torch.div(x0, t0)\n    return t0, t1\n", "x0",
      inputs);
  EXPECT_FALSE(PlanFusion(returned, true).groups[0].broadcast);
  // Read by two nodes.
  const Program twice = Parse(
      "    t0 = torch.amax(x0, 1, True)\n    t1 = torch.sub(x0, t0)\n"
      "    t2 = torch.mul(t1, t0)\n    return t2\n",
      "x0", inputs);
  EXPECT_FALSE(PlanFusion(twice, true).groups[0].broadcast);
  // Without keepdim the result broadcasts along the wrong dim (columns, on a square input).
  const Program dropped = Parse(
      "    t0 = torch.sum(x0, 1)\n    t1 = torch.sub(x0, t0)\n    return t1\n", "x0",
      "torch.randn(300, 300)");
  EXPECT_FALSE(PlanFusion(dropped, true).groups[0].broadcast);
  // Two rows of 600,000 would be split across programs: the split reduction, then pointwise.
  const Program few = Parse(
      "    t0 = torch.mean(x0, 1, True)\n    t1 = torch.sub(x0, t0)\n    return t1\n", "x0",
      "torch.randn(2, 600000)");
  EXPECT_FALSE(PlanFusion(few, true).groups[0].broadcast);
}

// A hand-written variance: x - mean is read by its square's sum and by the normalized output,
// neither an output nor a contraction.  Stored by the mean's kernel it would be written once
// and read twice; it is recomputed (leading_stats_test.cc: the mean is the sum kernel's).
TEST(ReduceBroadcastTest, ATailReadByOtherKernelsIsRecomputedNotStored) {
  const Program p = Parse(
      "    t0 = torch.mean(x0, 1, True)\n    t1 = torch.sub(x0, t0)\n"
      "    t2 = torch.mul(t1, t1)\n    t3 = torch.sum(t2, 1, True)\n"
      "    t4 = torch.div(t1, t3)\n    return t4\n",
      "x0", "torch.randn(300, 1000)");
  const FusionPlan plan = PlanFusion(p, true);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_TRUE(plan.groups[0].broadcast);
  EXPECT_EQ(p.value(plan.groups[0].output).name, "t4");
  EXPECT_FALSE(plan.materialized[p.FindValue("t1").index]);
}

}  // namespace
}  // namespace drtriton::codegen

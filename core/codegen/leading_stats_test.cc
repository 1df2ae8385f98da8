// Leading statistics (fusion.h Group::leading_stats, fusion_leading.cc): which statistics a
// reduction's kernel computes first instead of loading them, and the passes it then writes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/fusion.h"
#include "codegen/text_checks_for_tests.h"
#include "ir/parse_for_tests.h"

namespace drtriton::codegen {
namespace {

Program Parse(const std::string& body, const std::string& args, const std::string& inputs) {
  return MustParse("def fused_operator(" + args + "):\n" + body, inputs);
}

std::string KernelOf(const Program& p) {
  auto c = EmitCandidate(p, CodegenOptions{});
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().ToString());
  return c.ok() ? c.value().substr(0, c.value().find("def triton_fused_operator")) : "";
}

std::vector<std::string> LeadNames(const Program& p, const Group& g) {
  std::vector<std::string> names;
  for (const Group::LeadingStat& s : g.leading_stats)
    names.push_back(p.value(p.node(s.node).result).name);
  return names;
}

// (x - mean) / sum((x - mean)^2), normalized rows of a variance written out.
const char* kVariance =
    "    t0 = torch.mean(x0, 1, True)\n    t1 = torch.sub(x0, t0)\n"
    "    t2 = torch.mul(t1, t1)\n    t3 = torch.sum(t2, 1, True)\n"
    "    t4 = torch.div(t1, t3)\n    return t4\n";

TEST(LeadingStatsTest, AVariancesMeanIsTheSumKernelsFirstPass) {
  const Program p = Parse(kVariance, "x0", "torch.randn(300, 1000)");
  const FusionPlan plan = PlanFusion(p, true);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(LeadNames(p, plan.groups[0]), std::vector<std::string>{"t0"});
  EXPECT_EQ(PlanFusion(p, false).groups.size(), 3u);  // unfused: every reduction a kernel
  // One block: the row is loaded once, the mean and the squares from its registers.
  const std::string k = KernelOf(p);
  EXPECT_EQ(Count(k, "@triton.jit"), 1);
  EXPECT_EQ(Count(k, "tl.load(x0_ptr"), 1) << k;
  EXPECT_EQ(Count(k, "t0_ptr"), 0);  // the mean is never stored nor loaded
  ExpectInOrder(k, {"lead_acc0 += tl.where(mask, x",
                    "lead0 = (tl.sum(lead_acc0, axis=1, "
                    "keep_dims=True)) / 1e+03",
                    " - lead0", "total = tl.sum(acc, axis=1", "tl.store(t4_ptr"});
}

TEST(LeadingStatsTest, LongRowsTakeAPassForTheStatistic) {
  // 300 rows of 20,000: the mean's pass, the squares' pass, then the rows written back.
  const std::string k = KernelOf(Parse(kVariance, "x0", "torch.randn(300, 20000)"));
  EXPECT_EQ(Count(k, "@triton.jit"), 1);
  ExpectInOrder(
      k, {"for r0 in tl.range(0, 20000, BLOCK_R):", "lead_acc0 += ", "lead0 = (tl.sum(lead_acc0",
          "for r0 in tl.range(0, 20000, BLOCK_R):", " - lead0", "total = tl.sum(acc",
          "for r0 in tl.range(0, 20000, BLOCK_R):", "tl.store(t4_ptr + row_off + r"});
}

// cosine_similarity as torch decomposes it: two norms in keepdim form, then the sum of the
// normalized rows' product (no keepdim).  One kernel of three statistics where three kernels
// read the two inputs twice each.
TEST(LeadingStatsTest, ACosineSimilarityIsOneKernel) {
  const Program p = Parse(
      "    t0 = torch.mul(x0, x0)\n    t1 = torch.sum(t0, 1, True)\n    t2 = torch.sqrt(t1)\n"
      "    t3 = torch.mul(x1, x1)\n    t4 = torch.sum(t3, 1, True)\n    t5 = torch.sqrt(t4)\n"
      "    t6 = torch.div(x0, t2)\n    t7 = torch.div(x1, t5)\n    t8 = torch.mul(t6, t7)\n"
      "    t9 = torch.sum(t8, 1)\n    return t9\n",
      "x0, x1", "torch.randn(512, 4096), torch.randn(512, 4096)");
  const FusionPlan plan = PlanFusion(p, true);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(LeadNames(p, plan.groups[0]), (std::vector<std::string>{"t1", "t4"}));
  const std::string k = KernelOf(p);
  EXPECT_EQ(Count(k, "tl.load(x0_ptr"), 1) << k;
  EXPECT_EQ(Count(k, "tl.load(x1_ptr"), 1) << k;
  ExpectInOrder(k, {"lead_acc0 += ", "lead_acc1 += ", "lead0 = ", "tl.sqrt(lead0)",
                    "lead1 = ", "tl.sqrt(lead1)", "total = ", "tl.store(t9_ptr"});
}

// A triplet loss's two distances of the same rows: the first distance's kernel computes the
// second (read by its epilogue, in the anchor result's shape) first, over the same rows.
TEST(LeadingStatsTest, AStatisticReadByTheEpilogueMayDropTheReducedDim) {
  const Program p = Parse(
      "    t0 = torch.sub(x0, x1)\n    t1 = torch.mul(t0, t0)\n    t2 = torch.sum(t1, 1)\n"
      "    t3 = torch.sub(x0, x2)\n    t4 = torch.mul(t3, t3)\n    t5 = torch.sum(t4, 1)\n"
      "    t6 = torch.sub(t2, t5)\n    t7 = torch.relu(t6)\n    return t7\n",
      "x0, x1, x2", "torch.randn(512, 4096), torch.randn(512, 4096), torch.randn(512, 4096)");
  const FusionPlan plan = PlanFusion(p, true);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(LeadNames(p, plan.groups[0]), std::vector<std::string>{"t5"});
  EXPECT_EQ(p.value(plan.groups[0].output).name, "t7");
  const std::string k = KernelOf(p);  // one block: each input loaded once
  for (const char* x : {"tl.load(x0_ptr", "tl.load(x1_ptr", "tl.load(x2_ptr"})
    EXPECT_EQ(Count(k, x), 1) << x << "\n" << k;
  ExpectInOrder(
      k, {"lead0 = tl.sum(lead_acc0", "total = tl.sum(acc", " - lead0", "tl.store(t7_ptr + rows"});
}

// A z-score's sum: the mean, then the sum of squares that reads it, then the anchor that reads
// both: one kernel of three passes over the row (the mean's and the squares' in order).
TEST(LeadingStatsTest, AStatisticThatReadsAnotherTakesTheNextPass) {
  const Program p = Parse(
      "    t0 = torch.mean(x0, 1, True)\n    t1 = torch.sub(x0, t0)\n"
      "    t2 = torch.mul(t1, t1)\n    t3 = torch.sum(t2, 1, True)\n    t4 = torch.sqrt(t3)\n"
      "    t5 = torch.div(t1, t4)\n    t6 = torch.sum(t5, 1)\n    return t6\n",
      "x0", "torch.randn(300, 20000)");
  const FusionPlan plan = PlanFusion(p, true);
  ASSERT_EQ(plan.groups.size(), 1u);
  const Group& g = plan.groups[0];
  EXPECT_EQ(LeadNames(p, g), (std::vector<std::string>{"t0", "t3"}));
  EXPECT_EQ(g.leading_stats[0].pass, 0);
  EXPECT_EQ(g.leading_stats[1].pass, 1);
  EXPECT_EQ(p.value(g.leading_stats[1].stored).name, "t4");  // the sum of squares' sqrt
  const std::string k = KernelOf(p);
  EXPECT_EQ(Count(k, "@triton.jit"), 1);
  EXPECT_EQ(Count(k, "for r0 in tl.range(0, 20000, BLOCK_R):"), 3) << k;
  ExpectInOrder(k, {"lead_acc0 += ", "lead0 = ", "for r0 in", " - lead0", "lead_acc1 += ",
                    "lead1 = ", "tl.sqrt(lead1)", "for r0 in", "total = ", "tl.store(t6_ptr"});
}

TEST(LeadingStatsTest, StatisticsReadElsewhereOrAlongOtherRowsKeepTheirKernels) {
  const std::string inputs = "torch.randn(300, 1000)";
  // The mean is returned too.
  const Program returned = Parse(
      "    t0 = torch.mean(x0, 1, True)\n    t1 = torch.sub(x0, t0)\n"
      "    t2 = torch.mul(t1, t1)\n    t3 = torch.sum(t2, 1, True)\n"
      "    t4 = torch.div(t1, t3)\n    return t0, t4\n",
      "x0", inputs);
  for (const Group& g : PlanFusion(returned, true).groups) EXPECT_TRUE(g.leading_stats.empty());
  // The columns' mean subtracted from rows: not the sum's rows.
  const Program columns = Parse(
      "    t0 = torch.mean(x0, 0, True)\n    t1 = torch.sub(x0, t0)\n"
      "    t2 = torch.sum(t1, 1, True)\n    t3 = torch.div(t1, t2)\n    return t3\n",
      "x0", inputs);
  for (const Group& g : PlanFusion(columns, true).groups) EXPECT_TRUE(g.leading_stats.empty());
  // A row statistic without its reduced dim read against the (rows, R) input broadcasts
  // along R (a square input): it is not one value a row.
  const Program square = Parse(
      "    t0 = torch.sum(x0, 1)\n    t1 = torch.sub(x0, t0)\n    t2 = torch.sum(t1, 1)\n"
      "    return t2\n",
      "x0", "torch.randn(1000, 1000)");
  for (const Group& g : PlanFusion(square, true).groups) EXPECT_TRUE(g.leading_stats.empty());
  // Two rows of 600,000 would be split across programs: each statistic keeps its kernel.
  const Program few = Parse(
      "    t0 = torch.mean(x0, 1, True)\n    t1 = torch.sub(x0, t0)\n"
      "    t2 = torch.mul(t1, t1)\n    t3 = torch.sum(t2, 1, True)\n    return t3\n",
      "x0", "torch.randn(2, 600000)");
  for (const Group& g : PlanFusion(few, true).groups) EXPECT_TRUE(g.leading_stats.empty());
}

}  // namespace
}  // namespace drtriton::codegen

// Concatenations among a hybrid's PyTorch lines: the frontend's sums of zero-padded parts
// become one torch.cat line where they run in PyTorch.
#include "search/padded_sums.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/parse_for_tests.h"
#include "search/cover.h"
#include "search/cover_for_tests.h"

namespace drtriton::search {
namespace {

constexpr const char* kThreeInputs =
    "torch.randn(2, 4, 3, 3), torch.randn(2, 4, 3, 3), torch.randn(2, 4, 3, 3)";

// torch.cat([x0, relu(x1), x2], 1) as frontend/aten.py spells it, then an exp.
Program Concatenation(const std::string& returned = "t6") {
  return MustParse(
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = torch.relu(x1)\n"
      "    t1 = F.pad(x0, [0, 0, 0, 0, 0, 8])\n"
      "    t2 = F.pad(t0, [0, 0, 0, 0, 4, 4])\n"
      "    t3 = torch.add(t1, t2)\n"
      "    t4 = F.pad(x2, [0, 0, 0, 0, 8, 0])\n"
      "    t5 = torch.add(t3, t4)\n"
      "    t6 = torch.exp(t5)\n"
      "    return " +
          returned + "\n",
      kThreeInputs);
}

TEST(PaddedSumTest, AConcatenationLeftInPyTorchIsOneCat) {
  const Program p = Concatenation();
  const auto plan = PlanHybrid(p, AllPyTorch(7));
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[1].segment, (Segment{1, 6, false}));
  EXPECT_EQ(plan[1].inputs, (std::vector<std::string>{"x0", "t0", "x2"}));
  EXPECT_EQ(plan[1].outputs, std::vector<std::string>{"t5"});
  EXPECT_EQ(RenderHybrid(p, AllPyTorch(7)),
            "def triton_fused_operator(x0, x1, x2):\n"
            "    t0 = torch.relu(x1)\n"
            "    t5 = torch.cat([x0, t0, x2], 1)\n"
            "    t6 = torch.exp(t5)\n"
            "    return t6\n");
}

TEST(PaddedSumTest, PartsAFragmentAddsLaterArePaddedAfterTheCat) {
  const Program p = Concatenation();
  const std::vector<Segment> cover = {{0, 1, false}, {1, 2, false}, {2, 3, false},
                                      {3, 4, false}, {4, 7, true}};
  EXPECT_EQ(RenderHybrid(p, cover),
            "def triton_fused_operator(x0, x1, x2):\n"
            "    t0 = torch.relu(x1)\n"
            "    t3 = F.pad(torch.cat([x0, t0], 1), [0, 0, 0, 0, 0, 4])\n"
            "    t6 = fragment_0(x2, t3)\n"
            "    return t6\n");
}

TEST(PaddedSumTest, APartialSumReadElsewhereEndsTheRun) {
  // t3 is returned as well: the run stops at it, and the third part is added line by line.
  const Program p = Concatenation("t6, t3");
  const auto plan = PlanHybrid(p, AllPyTorch(7));
  ASSERT_EQ(plan.size(), 5u);
  EXPECT_EQ(plan[1].torch_line, "t3 = F.pad(torch.cat([x0, t0], 1), [0, 0, 0, 0, 0, 4])");
  EXPECT_EQ(plan[2].torch_line, "t4 = F.pad(x2, [0, 0, 0, 0, 8, 0])");
  EXPECT_EQ(plan[3].torch_line, "t5 = torch.add(t3, t4)");
}

TEST(PaddedSumTest, PartsWithAGapOrAlongTwoDimsStayAsTheyAre) {
  const Program gap = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = F.pad(x0, [0, 0, 0, 0, 0, 8])\n"
      "    t1 = F.pad(x1, [0, 0, 0, 0, 8, 0])\n"
      "    t2 = torch.add(t0, t1)\n"
      "    return t2\n",
      "torch.randn(2, 4, 3, 3), torch.randn(2, 4, 3, 3)");
  EXPECT_EQ(PlanHybrid(gap, AllPyTorch(3)).size(), 3u);
  const Program two_dims = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = F.pad(x0, [0, 0, 0, 0, 0, 4])\n"
      "    t1 = F.pad(x1, [0, 0, 2, 0, 0, 0])\n"
      "    t2 = torch.add(t0, t1)\n"
      "    return t2\n",
      "torch.randn(2, 4, 3, 3), torch.randn(2, 8, 1, 3)");
  EXPECT_EQ(PlanHybrid(two_dims, AllPyTorch(3)).size(), 3u);
}

TEST(PaddedSumTest, APadAfterTheSumThatIsNotAddedToItStaysOut) {
  const Program filled = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = F.pad(x0, [0, 4], 'constant', 0.0)\n"
      "    t1 = F.pad(x1, [4, 0], 'constant', 0.0)\n"
      "    t2 = torch.add(t0, t1)\n"
      "    t3 = F.pad(x0, [0, 4], 'constant', 0.0)\n"
      "    t4 = torch.mul(t3, t2)\n"
      "    return t4\n",
      "torch.randn(3, 4), torch.randn(3, 4)");
  const auto plan = PlanHybrid(filled, AllPyTorch(5));
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].torch_line, "t2 = torch.cat([x0, x1], 1)");
  EXPECT_EQ(plan[2].torch_line, "t4 = torch.mul(t3, t2)");
}

}  // namespace
}  // namespace drtriton::search

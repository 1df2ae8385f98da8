// Strided slices among a hybrid's PyTorch lines: the frontend's narrow, pad, reshape and
// select chains become one subscript line where they run in PyTorch.
#include "search/strided_slices.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/parse_for_tests.h"
#include "search/cover.h"
#include "search/cover_for_tests.h"

namespace drtriton::search {
namespace {

// x[:, 1::2, 0::2] of a (2, 6, 6, 3) tensor as frontend/aten.py spells it, then an exp.
constexpr const char* kOddRowsEvenColumns =
    "def fused_operator(x0):\n"
    "    t0 = torch.narrow(x0, 1, 1, 5)\n"
    "    t1 = F.pad(t0, [0, 0, 0, 0, 0, 1])\n"
    "    t2 = torch.reshape(t1, [2, 3, 2, 6, 3])\n"
    "    t3 = torch.select(t2, 2, 0)\n"
    "    t4 = torch.reshape(t3, [2, 3, 3, 2, 3])\n"
    "    t5 = torch.select(t4, 3, 0)\n"
    "    t6 = torch.exp(t5)\n"
    "    return t6\n";

TEST(StridedSliceTest, ASliceLeftInPyTorchIsOneSubscript) {
  const Program p = MustParse(kOddRowsEvenColumns, "torch.randn(2, 6, 6, 3)");
  const auto plan = PlanHybrid(p, AllPyTorch(7));
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].segment, (Segment{0, 6, false}));
  EXPECT_EQ(plan[0].inputs, std::vector<std::string>{"x0"});
  EXPECT_EQ(plan[0].outputs, std::vector<std::string>{"t5"});
  EXPECT_EQ(RenderHybrid(p, AllPyTorch(7)),
            "def triton_fused_operator(x0):\n"
            "    t5 = x0[:, 1::2, ::2]\n"
            "    t6 = torch.exp(t5)\n"
            "    return t6\n");
}

TEST(StridedSliceTest, AFusedLineEndsTheRun) {
  const Program p = MustParse(kOddRowsEvenColumns, "torch.randn(2, 6, 6, 3)");
  // The second slice runs in a fragment: the first one's four lines join alone.
  const std::vector<Segment> cover = {{0, 1, false}, {1, 2, false}, {2, 3, false},
                                      {3, 4, false}, {4, 7, true}};
  const auto plan = PlanHybrid(p, cover);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].torch_line, "t3 = x0[:, 1::2]");
}

TEST(StridedSliceTest, APhaseThatReadsThePadStaysAsLines) {
  // Rows 1, 3, 5 of 5 rows padded to 6: the last is a pad's zero, not a row of x0.
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = F.pad(x0, [0, 0, 0, 1])\n"
      "    t1 = torch.reshape(t0, [2, 3, 2, 4])\n"
      "    t2 = torch.select(t1, 2, 1)\n"
      "    return t2\n",
      "torch.randn(2, 5, 4)");
  const auto odd = PlanHybrid(p, AllPyTorch(3));
  ASSERT_EQ(odd.size(), 2u);  // the pad stays; the slice of the padded value joins
  EXPECT_EQ(odd[0].torch_line, "t0 = F.pad(x0, [0, 0, 0, 1])");
  EXPECT_EQ(odd[1].torch_line, "t2 = t0[:, 1::2]");
  // Rows 0, 2, 4 never read the pad.
  const Program even = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = F.pad(x0, [0, 0, 0, 1])\n"
      "    t1 = torch.reshape(t0, [2, 3, 2, 4])\n"
      "    t2 = torch.select(t1, 2, 0)\n"
      "    return t2\n",
      "torch.randn(2, 5, 4)");
  const auto plan = PlanHybrid(even, AllPyTorch(3));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].torch_line, "t2 = x0[:, ::2]");
}

TEST(StridedSliceTest, AnIntermediateReadElsewhereStaysAsLines) {
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = torch.reshape(x0, [2, 3, 2, 4])\n"
      "    t1 = torch.select(t0, 2, 0)\n"
      "    t2 = torch.exp(t0)\n"
      "    return t1, t2\n",
      "torch.randn(2, 6, 4)");
  EXPECT_EQ(PlanHybrid(p, AllPyTorch(3)).size(), 3u);
}

TEST(StridedSliceTest, AMergingReshapeEndsTheRunAndASelectIsAnIndex) {
  // x0[:, 2] then a flatten: the select and narrow join, the merge stays its own line.
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = torch.select(x0, 1, 2)\n"
      "    t1 = torch.narrow(t0, 1, 1, 2)\n"
      "    t2 = torch.reshape(t1, [-1])\n"
      "    return t2\n",
      "torch.randn(2, 6, 4)");
  const auto plan = PlanHybrid(p, AllPyTorch(3));
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].torch_line, "t1 = x0[:, 2, 1:3]");
}

}  // namespace
}  // namespace drtriton::search

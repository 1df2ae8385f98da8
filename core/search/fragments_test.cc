// Fragment enumeration, the cover DP and the hybrid skeleton on hand-made programs.
#include "search/fragments.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/parse_for_tests.h"
#include "search/cover.h"

namespace drtriton::search {
namespace {

// x0 -> linear -> relu -> add(x3) -> exp -> mul(relu result) -> sum: six nodes, with a
// value (t1) read again four nodes later.
Program Chain() {
  return MustParse(
      "def fused_operator(x0, x1, x2, x3):\n"
      "    t0 = F.linear(x0, x1, x2)\n"
      "    t1 = torch.relu(t0)\n"
      "    t2 = torch.add(t1, x3)\n"
      "    t3 = torch.exp(t2)\n"
      "    t4 = torch.mul(t3, t1)\n"
      "    t5 = torch.sum(t4, 1)\n"
      "    return t5\n",
      "torch.randn(4, 8), torch.randn(6, 8), torch.randn(6), torch.randn(4, 6)");
}

TEST(FragmentTest, MarksOutputsWhoseRoundingALaterOperatorAmplifies) {
  const Program p = Chain();
  // t0 reaches the exp through relu and add, as do both outputs of [0, 3); [4, 6)'s t5 is the
  // program's, and [3, 5)'s t4 feeds only a sum (a reduction ends the path).
  EXPECT_EQ(MakeFragment(p, 0, 1).value().amplified, std::vector<std::string>{"t0"});
  const Fragment three = MakeFragment(p, 0, 3).value();
  EXPECT_EQ(three.outputs, (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(three.amplified, three.outputs);
  EXPECT_TRUE(MakeFragment(p, 3, 5).value().amplified.empty());
  EXPECT_TRUE(MakeFragment(p, 4, 6).value().amplified.empty());
}

TEST(FragmentTest, EnumeratesContiguousRunsOfAtMostK) {
  const Program p = Chain();
  const auto fragments = EnumerateFragments(p, 5);
  // Lengths 1..5 over 6 nodes: 6 + 5 + 4 + 3 + 2, then the whole program.
  ASSERT_EQ(fragments.size(), 21u);
  EXPECT_EQ(fragments.front().start, 0);
  EXPECT_EQ(fragments.front().end, 1);
  for (size_t i = 0; i + 1 < fragments.size(); ++i) {
    const Fragment& f = fragments[i];
    EXPECT_LE(f.end - f.start, 5);
    EXPECT_EQ(f.program.level(), f.end - f.start);
  }
  EXPECT_EQ(fragments.back().program.level(), 6);
  // Lengths 1..2 (6 + 5) and the whole program, longer than 2.
  const auto short_runs = EnumerateFragments(p, 2);
  ASSERT_EQ(short_runs.size(), 12u);
  EXPECT_EQ(short_runs.back().start, 0);
  EXPECT_EQ(short_runs.back().end, 6);
  EXPECT_EQ(short_runs.back().program.level(), 6);
}

TEST(FragmentTest, TheWholeProgramOnlyWhereNothingIsBlocked) {
  const Program p = Chain();
  std::vector<bool> blocked(6, false);
  blocked[5] = true;
  for (const auto& f : EnumerateFragments(p, 2, blocked)) EXPECT_LE(f.end - f.start, 2);
  // Six nodes fit kWholeProgramMaxOps; max_ops 1 adds it to the six single nodes.
  EXPECT_EQ(EnumerateFragments(p, 1).size(), 7u);
  static_assert(kWholeProgramMaxOps >= 6);
}

// `computing` relus of a (4, 6) input, with a reshape to (24,) and back after each of the
// first `reshaped`.
Program ReluChain(int computing, int reshaped) {
  std::string body = "def fused_operator(x0):\n";
  std::string last = "x0";
  int next = 0;
  const auto line = [&](const std::string& call) {
    const std::string t = "t" + std::to_string(next++);
    body += "    " + t + " = " + call + "\n";
    last = t;
  };
  for (int i = 0; i < computing; ++i) {
    line("torch.relu(" + last + ")");
    if (i >= reshaped) continue;
    line("torch.reshape(" + last + ", [24])");
    line("torch.reshape(" + last + ", [4, 6])");
  }
  return MustParse(body + "    return " + last + "\n", "torch.randn(4, 6)");
}

bool OffersTheWhole(const Program& p) {
  for (const auto& f : EnumerateFragments(p, 5))
    if (f.start == 0 && f.end == p.level()) return true;
  return false;
}

TEST(FragmentTest, LayoutOperatorsDoNotCountTowardTheWholeProgramsLimit) {
  EXPECT_TRUE(OffersTheWhole(ReluChain(kWholeProgramMaxOps, 2)));  // 4 more nodes: reshapes
  EXPECT_FALSE(OffersTheWhole(ReluChain(kWholeProgramMaxOps + 1, 0)));
}

TEST(FragmentTest, ExternalInputsAndLiveOutputs) {
  const Program p = Chain();
  auto f = MakeFragment(p, 1, 3);  // relu, add
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  EXPECT_EQ(f.value().inputs, (std::vector<std::string>{"t0", "x3"}));
  // t1 is read by mul (node 4), t2 by exp (node 3).
  EXPECT_EQ(f.value().outputs, (std::vector<std::string>{"t1", "t2"}));
  const std::string text = f.value().program.Print();
  EXPECT_NE(text.find("def fused_operator(t0, x3):"), std::string::npos) << text;
  EXPECT_NE(text.find("return t1, t2"), std::string::npos) << text;
  EXPECT_NE(text.find("return [torch.randn(4, 6), torch.randn(4, 6)]"), std::string::npos) << text;
  // The fragment is a task in its own right: it parses back.
  EXPECT_TRUE(Parse(text).ok());
}

TEST(FragmentTest, PositiveUsesGetRand) {
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = torch.exp(x0)\n"
      "    t1 = torch.log(t0)\n"
      "    return t1\n",
      "torch.randn(3, 4)");
  auto f = MakeFragment(p, 1, 2);
  ASSERT_TRUE(f.ok());
  EXPECT_NE(f.value().program.Print().find("torch.rand(3, 4)"), std::string::npos);
}

TEST(FragmentTest, BlockedNodesAreSkipped) {
  const Program p = Chain();
  std::vector<bool> blocked(6, false);
  blocked[2] = true;
  for (const auto& f : EnumerateFragments(p, 5, blocked))
    EXPECT_TRUE(f.end <= 2 || f.start >= 3) << f.start << ", " << f.end;
  // [0,1) [0,2) [1,2) and the 6 fragments of nodes 3..5.
  EXPECT_EQ(EnumerateFragments(p, 5, blocked).size(), 9u);
}

TEST(FragmentTest, RejectsOutOfRange) {
  EXPECT_FALSE(MakeFragment(Chain(), 4, 9).ok());
  EXPECT_FALSE(MakeFragment(Chain(), 2, 2).ok());
}

using Costs = std::map<std::pair<int, int>, double>;

TEST(CoverTest, LongFragmentWins) {
  const Costs costs = {{{0, 4}, 1.0}, {{0, 2}, 1.5}, {{2, 4}, 1.5}};
  EXPECT_EQ(BestCover(4, costs, {1, 1, 1, 1}), (std::vector<Segment>{{0, 4, true}}));
}

TEST(CoverTest, SplittingWins) {
  const Costs costs = {{{0, 4}, 3.5}, {{0, 2}, 1.0}, {{2, 4}, 1.0}};
  EXPECT_EQ(BestCover(4, costs, {1, 1, 1, 1}), (std::vector<Segment>{{0, 2, true}, {2, 4, true}}));
}

TEST(CoverTest, MixesKernelsAndPyTorch) {
  const Costs costs = {{{1, 3}, 0.5}, {{0, 1}, 5.0}};
  EXPECT_EQ(BestCover(4, costs, {1, 1, 1, 1}),
            (std::vector<Segment>{{0, 1, false}, {1, 3, true}, {3, 4, false}}));
}

TEST(CoverTest, NoCandidatesMeansAllPyTorch) {
  const Costs costs = {{{0, 2}, kNoCandidate}, {{1, 3}, kNoCandidate}};
  EXPECT_EQ(BestCover(3, costs, {1, 2, 3}),
            (std::vector<Segment>{{0, 1, false}, {1, 2, false}, {2, 3, false}}));
  EXPECT_TRUE(BestCover(0, {}, {}).empty());
}

TEST(CoverTest, TiesKeepPyTorch) {
  EXPECT_EQ(BestCover(2, {{{0, 2}, 2.0}}, {1, 1}),
            (std::vector<Segment>{{0, 1, false}, {1, 2, false}}));
}

TEST(HybridTest, PlansAndRendersCalls) {
  const Program p = Chain();
  const std::vector<Segment> cover = {{0, 1, false}, {1, 3, true}, {3, 5, true}, {5, 6, false}};
  const auto plan = PlanHybrid(p, cover);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].torch_line, "t0 = F.linear(x0, x1, x2)");
  EXPECT_EQ(plan[1].inputs, (std::vector<std::string>{"t0", "x3"}));
  EXPECT_EQ(plan[1].outputs, (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(plan[2].inputs, (std::vector<std::string>{"t2", "t1"}));
  EXPECT_EQ(plan[2].outputs, (std::vector<std::string>{"t4"}));
  EXPECT_EQ(RenderHybrid(p, cover),
            "def triton_fused_operator(x0, x1, x2, x3):\n"
            "    t0 = F.linear(x0, x1, x2)\n"
            "    t1, t2 = fragment_0(t0, x3)\n"
            "    t4 = fragment_1(t2, t1)\n"
            "    t5 = torch.sum(t4, 1)\n"
            "    return t5\n");
}

}  // namespace
}  // namespace drtriton::search

#include "codegen/reassociate.h"

#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen.h"
#include "ir/parse_for_tests.h"

namespace drtriton::codegen {
namespace {

std::string Rewritten(const std::string& body, const std::string& inputs) {
  const std::optional<Program> p = ReduceBeforeProducts(MustParse(body, inputs));
  return p ? p->Print() : "";
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ReassociateTest, ASumOverAMatmulsColumnsSumsTheOtherOperandFirst) {
  // KernelBench L2 14's program: (x @ W.T / 2).sum(1, keepdim) * 1.5.
  const std::string p = Rewritten(
      "def fused_operator(x0, x1, x2, x3):\n"
      "    t0 = torch.transpose(x1, 0, 1)\n    t1 = torch.matmul(x0, t0)\n"
      "    t2 = torch.div(t1, x2)\n    t3 = torch.sum(t2, 1, True)\n"
      "    t4 = torch.mul(t3, x3)\n    return t4\n",
      "torch.randn(16, 32), torch.randn(24, 32), torch.randn(1), torch.randn(1)");
  EXPECT_TRUE(Contains(p, "t1_cols = torch.sum(t0, -1, True)")) << p;
  EXPECT_TRUE(Contains(p, "t1 = torch.matmul(x0, t1_cols)")) << p;
  // Everything after the product as written: the sum now over one column.
  EXPECT_TRUE(Contains(p, "t3 = torch.sum(t2, 1, True)\n    t4 = torch.mul(t3, x3)\n")) << p;
  EXPECT_TRUE(Contains(p, "def fused_operator(x0, x1, x2, x3):")) << p;
  EXPECT_TRUE(Contains(p, "return t4")) << p;
}

TEST(ReassociateTest, AMeanOverALinearsColumnsAveragesItsWeightAndBiasThroughAShift) {
  const std::string p = Rewritten(
      "def fused_operator(x0, x1, x2, x3):\n"
      "    t0 = F.linear(x0, x1, x2)\n    t1 = torch.neg(t0)\n    t2 = torch.add(t1, x3)\n"
      "    t3 = torch.mean(t2, -1)\n    return t3\n",
      "torch.randn(4, 16, 32), torch.randn(24, 32), torch.randn(24), torch.randn(16, 1)");
  EXPECT_TRUE(Contains(p, "t0_cols = torch.mean(x1, 0, True)")) << p;
  EXPECT_TRUE(Contains(p, "t0_bias = torch.mean(x2, 0, True)")) << p;
  EXPECT_TRUE(Contains(p, "t0 = F.linear(x0, t0_cols, t0_bias)")) << p;
  EXPECT_TRUE(Contains(p, "t3 = torch.mean(t2, -1)\n")) << p;
}

TEST(ReassociateTest, LeavesWhatDoesNotCommuteWithTheReduction) {
  const std::string inputs = "torch.randn(16, 32), torch.randn(32, 24), torch.randn(24)";
  const std::string matmul = "def fused_operator(x0, x1, x2):\n    t0 = torch.matmul(x0, x1)\n";
  const char* cases[] = {
      // A shift under a sum adds N times the term.
      "    t1 = torch.add(t0, x2)\n    t2 = torch.sum(t1, -1)\n    return t2\n",
      // A factor that varies along N.
      "    t1 = torch.mul(t0, x2)\n    t2 = torch.sum(t1, -1)\n    return t2\n",
      // Not linear: the product's square.
      "    t1 = torch.mul(t0, t0)\n    t2 = torch.sum(t1, -1)\n    return t2\n",
      // A sum over the rows, not the columns.
      "    t1 = torch.sum(t0, 0)\n    return t1\n",
      // The product is also returned.
      "    t1 = torch.sum(t0, -1)\n    return t0, t1\n",
      // An activation between.
      "    t1 = torch.relu(t0)\n    t2 = torch.sum(t1, -1)\n    return t2\n",
  };
  for (const char* tail : cases) EXPECT_EQ(Rewritten(matmul + tail, inputs), "") << tail;
}

TEST(ReassociateTest, TheTeacherEmitsTheReducedProduct) {
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n    t0 = F.linear(x0, x1)\n"
      "    t1 = torch.sum(t0, 1, True)\n    return t1\n",
      "torch.randn(64, 128), torch.randn(256, 128)");
  auto text = EmitCandidate(p);
  ASSERT_TRUE(text.ok()) << text.error().ToString();
  // The weight's column sum, then a product with N = 1: no 64 x 256 tile is computed.
  EXPECT_TRUE(Contains(text.value(), "t0_cols = torch.empty((1, 128)")) << text.value();
  EXPECT_TRUE(Contains(text.value(), "M=64 N=1 K=128")) << text.value();
}

}  // namespace
}  // namespace drtriton::codegen

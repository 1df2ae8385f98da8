#include "codegen/reassociate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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


std::string ConvRewritten(const std::string& body, const std::string& inputs) {
  const std::optional<Program> p = ReduceBeforeConvolutions(MustParse(body, inputs));
  return p ? p->Print() : "";
}

TEST(ReassociateConvTest, AMeanOverATransposedConvolutionsWidthSumsItsInputPerTapRange) {
  // KernelBench L2 44 in small: conv_transpose2d of stride 2, padding 1, output padding 1, a
  // scale, a mean over the width.  Along the width (7 -> 14) tap 0 meets inputs [1, 7)
  // (o = 2 i - 1 >= 0), taps 1 and 2 all of [0, 7): two classes, the first the whole input's
  // mean less its first column.
  const std::optional<Program> r = ReduceBeforeConvolutions(MustParse(
      "def fused_operator(x0, x1, x2, x3):\n"
      "    t0 = F.conv_transpose2d(x0, x1, x2, [2, 2], [1, 1], [1, 1], 1, [1, 1])\n"
      "    t1 = torch.mul(t0, x3)\n    t2 = torch.mean(t1, 3, True)\n    return t2\n",
      "torch.randn(2, 6, 9, 7), torch.randn(6, 8, 3, 3), torch.randn(8), torch.randn(1)"));
  ASSERT_TRUE(r.has_value());
  const std::string p = r->Print();
  EXPECT_EQ(r->value(r->FindValue("t0_in")).shape, (Shape{2, 12, 9, 1}));
  EXPECT_EQ(r->value(r->FindValue("t0")).shape, (Shape{2, 8, 18, 1}));
  // One pass over x0 (padded to the output's 14 positions), one over its first column.
  EXPECT_TRUE(Contains(p, "t0_taps2 = torch.mean(t0_taps, 3, True)")) << p;
  EXPECT_TRUE(Contains(p, "t0_taps = F.pad(x0, [0, 7])")) << p;
  EXPECT_TRUE(Contains(p, "torch.narrow(x0, 3, 0, 1)")) << p;
  EXPECT_EQ(p.find("torch.narrow(x0, 3, 1, 6)"), std::string::npos) << p;
  // Taps 1 and 2 share a channel: 12 input channels, a kernel 1 wide, stride 1, no padding.
  EXPECT_TRUE(Contains(p, "torch.narrow(x1, 3, 1, 1)")) << p;
  EXPECT_TRUE(Contains(p, "torch.narrow(x1, 3, 2, 1)")) << p;
  EXPECT_TRUE(Contains(p, "t0 = F.conv_transpose2d(t0_in, t0_w, x2, [2, 1], [1, 0], [1, 0], 1, "
                          "[1, 1])"))
      << p;
  EXPECT_TRUE(Contains(p, "t1 = torch.mul(t0, x3)\n    t2 = torch.mean(t1, 3, True)\n")) << p;
}

TEST(ReassociateConvTest, EveryReducedSpatialDimIsTakenBeforeTheConvolution) {
  // conv3d then a mean over each spatial dim (L2 23's tail without its group norm): three
  // rounds leave a convolution over one position, 3 x 3 x 2 x 3 = 54 input channels (no two
  // taps of a dim share a range), which becomes a product; the means become reshapes of it.
  const Program p = MustParse(
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = F.conv3d(x0, x1, x2, [1, 1, 1], [1, 0, 1], [1, 1, 1])\n"
      "    t1 = torch.mean(t0, 4)\n    t2 = torch.mean(t1, 3)\n    t3 = torch.mean(t2, 2)\n"
      "    return t3\n",
      "torch.randn(2, 3, 5, 6, 7), torch.randn(4, 3, 3, 2, 3), torch.randn(4)");
  const std::optional<Program> r = Reassociate(p, /*generic_shapes=*/false);
  ASSERT_TRUE(r.has_value());
  const std::string text = r->Print();
  EXPECT_EQ(text.find("F.conv3d"), std::string::npos) << text;
  EXPECT_TRUE(Contains(text, "t0_rows = torch.reshape(t0_in3, [2, 54])")) << text;
  EXPECT_TRUE(Contains(text, "F.linear(t0_rows, t0_w4, x2)")) << text;
  EXPECT_TRUE(Contains(text, "t0 = torch.reshape(t0_product, [2, 4, 1, 1, 1])")) << text;
  EXPECT_TRUE(Contains(text, "t1 = torch.reshape(t0, [2, 4, 1, 1])")) << text;
  EXPECT_TRUE(Contains(text, "t3 = torch.reshape(t2, [2, 4])")) << text;
}

TEST(ReassociateConvTest, ASumAddsTheBiasOncePerOutputPosition) {
  const std::string p = ConvRewritten(
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = F.conv1d(x0, x1, x2, [1], [1], [1], 1)\n    t1 = torch.sum(t0, 2)\n"
      "    return t1\n",
      "torch.randn(2, 3, 12), torch.randn(5, 3, 3), torch.randn(5)");
  EXPECT_TRUE(Contains(p, "torch.broadcast_to(t0_bias, [5, 12])")) << p;
}

TEST(ReassociateConvTest, AGenericCandidateIsTheReducedOneAtItsOwnSizes) {
  // The rewrite writes sizes as literals; generic emission would keep the convolution (L2 13:
  // 32x its FLOPs), so the program is emitted for its own sizes, rewritten, and says why.
  const Program p = MustParse(
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = F.conv_transpose2d(x0, x1, x2, [2, 2], [1, 1], [1, 1], 1, [1, 1])\n"
      "    t1 = torch.mean(t0, 3, True)\n    return t1\n",
      "torch.randn(2, 6, 9, 7), torch.randn(6, 8, 3, 3), torch.randn(8)");
  const std::vector<std::string> why = GenericUnsupportedOps(p);
  ASSERT_EQ(why.size(), 1u);
  EXPECT_TRUE(Contains(why[0], "convolution's spatial dims")) << why[0];
  CodegenOptions generic;
  generic.generic_shapes = true;
  auto text = EmitCandidate(p, generic);
  ASSERT_TRUE(text.ok()) << text.error().ToString();
  EXPECT_EQ(text.value(), EmitCandidate(p).value());
  EXPECT_TRUE(Contains(text.value(), "t0_taps")) << text.value();
}

TEST(ReassociateConvTest, LeavesWhatItCannotTakeApart) {
  const std::string inputs =
      "torch.randn(2, 3, 9, 9), torch.randn(4, 3, 3, 3), torch.randn(4), torch.randn(4, 1, 1)";
  const char* cases[] = {
      // A stride-2 convolution's taps meet every other input position.
      "    t0 = F.conv2d(x0, x1, x2, [2, 2], [1, 1], [1, 1])\n    t1 = torch.mean(t0, 3)\n",
      // A mean over the channels, not a spatial dim.
      "    t0 = F.conv2d(x0, x1, x2, [1, 1], [1, 1], [1, 1])\n    t1 = torch.mean(t0, 1)\n",
      // Not linear: an activation between.
      "    t0 = F.conv2d(x0, x1, x2, [1, 1], [1, 1], [1, 1])\n    t2 = torch.relu(t0)\n"
      "    t1 = torch.mean(t2, 3)\n",
      // A shift under a sum.
      "    t0 = F.conv2d(x0, x1, x2, [1, 1], [1, 1], [1, 1])\n    t2 = torch.add(t0, x3)\n"
      "    t1 = torch.sum(t2, 3)\n",
  };
  for (const char* body : cases)
    EXPECT_EQ(ConvRewritten(std::string("def fused_operator(x0, x1, x2, x3):\n") + body +
                                "    return t1\n",
                            inputs),
              "")
        << body;
}

}  // namespace
}  // namespace drtriton::codegen

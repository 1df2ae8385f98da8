// Layout operators in emitted kernels: index arithmetic on the reader's coordinates, never a
// copy (expected-output checks, FileCheck style).
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen.h"
#include "codegen/text_checks_for_tests.h"
#include "ir/parse_for_tests.h"

namespace drtriton::codegen {
namespace {

std::string EmitOne(const std::string& call, const std::string& input) {
  const Program p = MustParse(
      "def fused_operator(x0):\n    t0 = " + call + "\n    t1 = torch.relu(t0)\n    return t1\n",
      input);
  auto c = EmitCandidate(p, {});
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().ToString());
  return c.ok() ? c.value() : "";
}

TEST(LayoutTest, PermuteReadsThePermutedCoordinates) {
  const std::string c = EmitOne("torch.permute(x0, [2, 0, 1])", "torch.randn(3, 4, 5)");
  EXPECT_EQ(Count(c, "@triton.jit"), 1);
  // out (5, 3, 4)[c0, c1, c2] = x0[c1, c2, c0]
  ExpectInOrder(c, {"tl.load(x0_ptr + c1 * stride_x0_0 + c2 * stride_x0_1 + c0 * stride_x0_2"});
}

TEST(LayoutTest, SqueezeAndUnsqueezeKeepTheCoordinates) {
  const std::string c = EmitOne("torch.reshape(x0, [3, 1, 4])", "torch.randn(3, 4)");
  ExpectInOrder(c, {"tl.load(x0_ptr + c0 * stride_x0_0 + c2 * stride_x0_1"});
}

TEST(LayoutTest, OtherReshapesGoThroughTheFlatIndex) {
  const std::string c = EmitOne("torch.reshape(x0, [6, -1])", "torch.randn(2, 3, 4)");
  // flat = c0 * 4 + c1; x0 (2, 3, 4) at (flat // 12, flat // 4 % 3, flat % 4).
  ExpectInOrder(c, {"tl.load(x0_ptr + ((((c0) * 4 + c1) // 12)) * stride_x0_0 + "
                    "(((((c0) * 4 + c1) // 4) % 3)) * stride_x0_1 + "
                    "((((c0) * 4 + c1) % 4)) * stride_x0_2"});
}

TEST(LayoutTest, NarrowSelectAndFlipOffsetTheCoordinates) {
  ExpectInOrder(EmitOne("torch.narrow(x0, 1, 2, 3)", "torch.randn(2, 6)"),
                {"tl.load(x0_ptr + c0 * stride_x0_0 + ((c1 + 2)) * stride_x0_1"});
  ExpectInOrder(EmitOne("torch.select(x0, 0, -1)", "torch.randn(2, 6)"),
                {"tl.load(x0_ptr + 1 * stride_x0_0 + c0 * stride_x0_1"});
  ExpectInOrder(EmitOne("torch.flip(x0, [1])", "torch.randn(2, 6)"),
                {"tl.load(x0_ptr + c0 * stride_x0_0 + ((5 - c1)) * stride_x0_1"});
}

TEST(LayoutTest, BroadcastToReadsIndexZeroOfRepeatedDims) {
  ExpectInOrder(EmitOne("torch.broadcast_to(x0, [2, 3, 4])", "torch.randn(3, 1)"),
                {"tl.load(x0_ptr + c1 * stride_x0_0, mask=mask"});
}

TEST(LayoutTest, PadAndTriangleAreMaskedReads) {
  ExpectInOrder(EmitOne("F.pad(x0, [1, 0])", "torch.randn(2, 6)"),
                {"tl.load(x0_ptr + c0 * stride_x0_0 + ((c1 - 1)) * stride_x0_1, "
                 "mask=(mask) & ((c1 - 1) >= 0)",
                 "tl.where(((c1 - 1) >= 0), x", ", 0.0)  # pad"});
  ExpectInOrder(EmitOne("torch.triu(x0, 1)", "torch.randn(4, 4)"),
                {"mask=(mask) & ((c1 - c0) >= 1)", "tl.where(((c1 - c0) >= 1), x", "0.0)  # triu"});
}

// A program output that only reorders a stored intermediate's shape, keeping its elements in
// row-major order, is a view of it (codegen.cc RowMajorViewSource): no copy kernel.
TEST(LayoutTest, AnOutputInTheStoredOrderIsAViewOfIt) {
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n    t0 = torch.bmm(x0, x1)\n"
      "    t1 = torch.reshape(t0, [2, 4, 1, 6])\n    t2 = torch.transpose(t1, 2, 3)\n"
      "    t3 = torch.reshape(t2, [8, 6])\n    return t3\n",
      "torch.randn(1, 8, 16), torch.randn(1, 16, 6)");
  auto c = EmitCandidate(p, {});
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c.value().find("def k1_"), std::string::npos);  // the bmm's kernels alone
  ExpectInOrder(c.value(), {"t0 = torch.empty((1, 8, 6)", "k0_bmm_kernel[",
                            "t3 = t0.view((8, 6))", "return t3"});
}

TEST(LayoutTest, AReorderingTransposeOrAnInputStillCopies) {
  // Two dims of size > 1 swapped: the elements move.
  const Program swapped = MustParse(
      "def fused_operator(x0, x1):\n    t0 = torch.bmm(x0, x1)\n"
      "    t1 = torch.transpose(t0, 1, 2)\n    return t1\n",
      "torch.randn(1, 8, 16), torch.randn(1, 16, 6)");
  auto c = EmitCandidate(swapped, {});
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(Count(c.value(), ".view("), 0);
  EXPECT_NE(c.value().find("def k1_transpose_kernel"), std::string::npos);
  // A program input may be strided: its reshape is computed by a kernel.
  const Program input = MustParse(
      "def fused_operator(x0):\n    t0 = torch.reshape(x0, [6, 4])\n    return t0\n",
      "torch.randn(2, 3, 4)");
  c = EmitCandidate(input, {});
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(Count(c.value(), ".view("), 0);
  EXPECT_EQ(Count(c.value(), "@triton.jit"), 1);
}

}  // namespace
}  // namespace drtriton::codegen

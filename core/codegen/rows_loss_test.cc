// Expected-output tests for the nll_loss and cross_entropy rows kernels (rows_loss.cc): the
// scores read once (cross_entropy) or only at the targets (nll_loss), each target loaded once
// per row, and the mean or sum over the rows from per-program partial sums.
#include <gtest/gtest.h>

#include <string>

#include "codegen/codegen.h"
#include "codegen/text_checks_for_tests.h"
#include "ir/parse_for_tests.h"

namespace drtriton::codegen {
namespace {

std::string Emit(const std::string& body, const std::string& inputs, bool fuse = true) {
  const Program p = MustParse("def fused_operator(x0, x1):\n" + body, inputs);
  CodegenOptions options;
  options.fuse_epilogue = fuse;
  auto c = EmitCandidate(p, options);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().ToString());
  return c.ok() ? c.value() : "";
}

std::string CrossEntropy(const std::string& reduction = "") {
  return "    t0 = torch.log_softmax(x0, 1)\n    t1 = F.nll_loss(t0, x1" + reduction +
         ")\n    return t1\n";
}

// The kernels alone (the wrapper launches with `x0, x0.stride(0)`: no loads there).
std::string KernelsOf(const std::string& candidate) {
  return candidate.substr(0, candidate.find("def triton_fused_operator"));
}

TEST(RowsLossTest, CrossEntropyReadsEachRowOnceAndStoresNoLogProbabilities) {
  // KernelBench L1 95's rows (4096 classes) fit one block: the row's max, its sum of
  // exponentials and the target's score from one load of the row, one of the target and one
  // of the target's score; then the mean of the programs' partial sums.
  const std::string c =
      Emit(CrossEntropy(), "torch.randn(256, 4096), torch.randint(0, 4096, (256,))");
  const std::string k = KernelsOf(c);
  EXPECT_EQ(Count(k, "@triton.jit"), 2);
  EXPECT_EQ(Count(k, "log_softmax"), 1);  // only the comment names it: no kernel of its own
  EXPECT_EQ(Count(k, "for r0 in"), 0);
  ExpectInOrder(k, {"def k0_nll_loss_rows_kernel(x1_ptr, stride_x1_0, x0_ptr",
                    "one block, log_softmax's statistics and the target's score",
                    "x0 = tl.load(x1_ptr + rc0 * stride_x1_0, mask=row_mask, other=0)\n",
                    "counted = row_mask & (x0 != -100)", "hit = counted & (x0 >= 0) & (x0 < 4096)",
                    "x1 = tl.load(x0_ptr + rc0 * stride_x0_0 + r * stride_x0_1",
                    "row_max = tl.max(xm, axis=1, keep_dims=True)",
                    "row_sum = tl.sum(tl.exp(xm - row_max), axis=1, keep_dims=True)",
                    "x2 = tl.load(x0_ptr + rc0 * stride_x0_0 + x0 * stride_x0_1, mask=hit",
                    "loss = tl.where(counted, row_max + tl.log(row_sum) - x2, 0.0)",
                    "tl.store(k0_part_ptr + pid, tl.sum(loss))",
                    "tl.store(k0_part_ptr + 256 + pid, tl.sum(counted.to(tl.float32)))",
                    "def k0_nll_loss_kernel(k0_part_ptr, t1_ptr, BLOCK_P: tl.constexpr):",
                    "for p0 in tl.range(0, 256, BLOCK_P):",
                    "result = tl.sum(total, axis=0) / tl.sum(count, axis=0)",
                    "tl.store(t1_ptr, result)"});
  EXPECT_EQ(Count(k, "tl.load("), 5);  // target, row, target's score; two partial planes
  ExpectInOrder(c, {"t1 = torch.empty((), device=x0.device, dtype=float_dtype)",
                    "k0_part = torch.empty((512,), device=x0.device, dtype=torch.float32)",
                    "k0_nll_loss_rows_kernel[(256,)](", "BLOCK_O=1, BLOCK_R=4096",
                    "k0_nll_loss_kernel[(1,)](", "BLOCK_P=256"});
  EXPECT_EQ(Count(c, "torch.empty("), 2);  // the loss and the partials: no (N, C) buffer
}

TEST(RowsLossTest, LongRowsAreOneOnlinePass) {
  const std::string k = KernelsOf(Emit(CrossEntropy(", reduction='none'"),
                                       "torch.randn(64, 20000), torch.randint(0, 9, (64,))"));
  EXPECT_EQ(Count(k, "@triton.jit"), 1);
  EXPECT_EQ(Count(k, "for r0 in"), 1);  // statistics only: no write pass over the row
  ExpectInOrder(k, {"one pass, log_softmax's statistics and the target's score",
                    "for r0 in tl.range(0, 20000, BLOCK_R):", "m_acc = m_new",
                    "row_sum = tl.sum(s_acc * tl.exp(m_acc - row_max)",
                    "loss = tl.where(counted, row_max + tl.log(row_sum) - x2, 0.0)",
                    "tl.store(t1_ptr + rows, loss, mask=row_mask)"});
}

TEST(RowsLossTest, NllLossReadsOnlyTheTargetsScores) {
  const std::string k =
      KernelsOf(Emit("    t0 = F.nll_loss(x0, x1, reduction='sum')\n    return t0\n",
                     "torch.randn(3000, 100), torch.randint(0, 100, (3000,))"));
  EXPECT_EQ(Count(k, "tl.load("), 3);  // target, its score; one plane of partial sums
  ExpectInOrder(k, {"the target's element of each row, a partial sum a program",
                    "loss = tl.where(counted, -x1, 0.0)", "tl.store(k0_part_ptr + pid",
                    "result = tl.sum(total, axis=0)\n"});
  EXPECT_EQ(Count(k, "count"), 3);  // `counted` alone: a sum divides by nothing
}

TEST(RowsLossTest, ElementwiseProloguesAndEpiloguesFuse) {
  // exp(cross_entropy(x * x, t, reduction='none')): the squares recomputed at the target, exp
  // before the store.
  const std::string k = KernelsOf(
      Emit("    t0 = torch.mul(x0, x0)\n    t1 = torch.log_softmax(t0, 1)\n"
           "    t2 = F.nll_loss(t1, x1, reduction='none')\n    t3 = torch.exp(t2)\n"
           "    return t3\n",
           "torch.randn(16, 50), torch.randint(0, 50, (16,))"));
  EXPECT_EQ(Count(k, "@triton.jit"), 1);
  EXPECT_EQ(Count(k, "# mul"), 2);  // over the row, and at the target
  ExpectInOrder(k, {"def k0_nll_loss_kernel(x1_ptr", "# mul", "row_sum =", "# mul", "loss =",
                    "tl.exp(loss)  # exp", "tl.store(t3_ptr + rows, y"});
}

TEST(RowsLossTest, ALogSoftmaxReadElsewhereOrReturnedIsStored) {
  // Returned, or along another dim: the log_softmax keeps its kernel and the loss reads it.
  for (const std::string& body :
       {std::string("    t0 = torch.log_softmax(x0, 1)\n    t1 = F.nll_loss(t0, x1)\n"
                    "    return t0, t1\n"),
        std::string("    t0 = torch.log_softmax(x0, 0)\n    t1 = F.nll_loss(t0, x1)\n"
                    "    return t1\n")}) {
    const std::string k =
        KernelsOf(Emit(body, "torch.randn(64, 100), torch.randint(0, 100, (64,))"));
    ExpectInOrder(k, {"def k0_log_softmax_kernel", "def k1_nll_loss_rows_kernel",
                      "loss = tl.where(counted, -x1, 0.0)"});
  }
}

TEST(RowsLossTest, WithoutFusionLogSoftmaxIsStored) {
  const std::string k = KernelsOf(
      Emit(CrossEntropy(), "torch.randn(64, 100), torch.randint(0, 100, (64,))", /*fuse=*/false));
  EXPECT_EQ(Count(k, "@triton.jit"), 3);  // log_softmax, the loss's rows, their total
  ExpectInOrder(k, {"def k0_log_softmax_kernel", "def k1_nll_loss_rows_kernel",
                    "loss = tl.where(counted, -x1, 0.0)", "def k1_nll_loss_kernel"});
}

}  // namespace
}  // namespace drtriton::codegen

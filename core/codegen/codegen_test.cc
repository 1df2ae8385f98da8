// Expected-output tests for the template generator (FileCheck style: the lines that
// matter must appear, in order), plus coverage of every catalog operator and variants.
#include "codegen/codegen.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "codegen/fusion.h"
#include "codegen/kernel.h"
#include "ir/build.h"
#include "ir/parse_for_tests.h"

namespace drtriton::codegen {
namespace {

std::string MustEmit(const Program& p, CodegenOptions options = {}) {
  auto c = EmitCandidate(p, options);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().ToString());
  return c.ok() ? c.value() : "";
}

// Every `checks` fragment occurs in `text`, each after the previous one.
void ExpectInOrder(const std::string& text, const std::vector<std::string>& checks) {
  size_t pos = 0;
  for (const auto& c : checks) {
    const size_t at = text.find(c, pos);
    ASSERT_NE(at, std::string::npos) << "missing (in order): " << c << "\n--- in ---\n" << text;
    pos = at + c.size();
  }
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(CodegenTest, ElementwiseChainIsOneStridedMaskedKernel) {
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = torch.add(x0, x1)\n"
      "    t1 = torch.relu(t0)\n"
      "    return t1\n",
      "torch.randn(4, 8), torch.randn(1, 8)");
  const std::string c = MustEmit(p);
  EXPECT_EQ(Count(c, "@triton.jit"), 1);
  ExpectInOrder(
      c,
      {"import triton.language as tl",
       "def k0_relu_kernel(x0_ptr, stride_x0_0, stride_x0_1, x1_ptr, stride_x1_1, "
       "t1_ptr, stride_t1_0, stride_t1_1, BLOCK: tl.constexpr):",
       "offs = pid * BLOCK + tl.arange(0, BLOCK)", "mask = offs < 32", "c0 = (offs // 8)",
       "c1 = offs % 8", "tl.load(x0_ptr + c0 * stride_x0_0 + c1 * stride_x0_1, mask=mask",
       "tl.load(x1_ptr + c1 * stride_x1_1, mask=mask",  // broadcast dim: no stride
       " + ", "tl.maximum(", "tl.store(t1_ptr + c0 * stride_t1_0", "mask=mask)",
       "def triton_fused_operator(x0, x1):", "assert tuple(x0.shape) == (4, 8)",
       "t1 = torch.empty((4, 8), device=x0.device, dtype=torch.float32)", "k0_relu_kernel[(1,)](",
       "x0, x0.stride(0), x0.stride(1), x1, x1.stride(1)", "BLOCK=32", "return t1"});
}

TEST(CodegenTest, ConvWithEpilogueIsOneKernel) {
  const Program p = MustParse(
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = F.conv2d(x0, x1, None, 1, 1)\n"
      "    t1 = torch.relu(t0)\n"
      "    t2 = torch.add(t1, x2)\n"
      "    return t2\n",
      "torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3), torch.randn(1, 4, 1, 1)");
  const std::string c = MustEmit(p);
  EXPECT_EQ(Count(c, "@triton.jit"), 1);
  ExpectInOrder(c, {"def k0_conv2d_kernel(", "# conv2d: M=128 N=4 K=27 batch=1",
                    "for k0 in tl.range(0, 27, BLOCK_K):", "ok0 = (sp0 >= 0) & (sp0 < 8)",
                    "acc += tl.dot(a, b, input_precision=\"ieee\")",
                    "tl.maximum(acc, 0.0, propagate_nan=tl.PropagateNan.ALL)", "tl.store(t2_ptr"});
  EXPECT_EQ(Count(c, "torch.empty("), 1);  // only the output is stored
  // Without epilogue fusion the conv result is stored and a pointwise kernel follows.
  CodegenOptions unfused;
  unfused.fuse_epilogue = false;
  EXPECT_EQ(Count(MustEmit(p, unfused), "@triton.jit"), 2);
}

TEST(CodegenTest, SoftmaxReadsTheRowOnceWhenItFits) {
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = torch.exp(x0)\n"
      "    t1 = torch.softmax(t0, -1)\n"
      "    return t1\n",
      "torch.randn(6, 100)");
  const std::string c = MustEmit(p);
  EXPECT_EQ(Count(c, "@triton.jit"), 1);
  EXPECT_EQ(Count(c, "tl.load("), 1);  // the exp producer is inlined, the row loaded once
  EXPECT_EQ(Count(c, "for r0"), 0);
  ExpectInOrder(c, {"# softmax over 100 of 6 rows", "row_mask = rows < 6", "tl.exp(x",
                    "row_max = tl.max(acc, axis=1, keep_dims=True)", "row_sum = tl.sum(",
                    "out = tl.exp(", "/ row_sum", "tl.store("});
}

// torch.amax/amin, max pooling, maximum, clamp and relu propagate NaN. tl.maximum's default
// and tl.max's combine drop a NaN operand on the GPU (the interpreter propagates either way,
// so only the emitted text can show it here).
TEST(CodegenTest, AmaxPropagatesNan) {
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = torch.amax(x0, -1)\n"
      "    return t0\n",
      "torch.randn(6, 100)");
  ExpectInOrder(MustEmit(p),
                {"acc = tl.maximum(acc, tl.where(mask, ", "propagate_nan=tl.PropagateNan.ALL)",
                 "result = tl.max(acc, axis=1, keep_dims=True) + tl.sum(tl.where("
                 "acc != acc, acc, 0.0), axis=1, keep_dims=True)"});
}

TEST(CodegenTest, AminLoopPropagatesNan) {
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = torch.amin(x0, 0)\n"
      "    return t0\n",
      "torch.randn(5000, 3)");
  ExpectInOrder(MustEmit(p),
                {"acc = tl.minimum(acc, tl.where(mask, ", "propagate_nan=tl.PropagateNan.ALL)",
                 "result = tl.min(acc, axis=1, keep_dims=True) + tl.sum("});
}

TEST(CodegenTest, MaxPoolAndClampPropagateNan) {
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = F.max_pool2d(x0, 2)\n"
      "    t1 = torch.clamp(t0, -1.0, 1.0)\n"
      "    return t1\n",
      "torch.randn(2, 3, 8, 8)");
  const std::string c = MustEmit(p);
  ExpectInOrder(c, {"acc = tl.maximum(acc, tl.where(mask, ", "propagate_nan=tl.PropagateNan.ALL)",
                    "result = tl.max(acc, axis=1, keep_dims=True) + tl.sum(tl.where(acc != acc",
                    "tl.minimum(tl.maximum(", "propagate_nan=tl.PropagateNan.ALL)"});
  EXPECT_EQ(Count(c, "tl.PropagateNan.ALL"), 3);
}

TEST(CodegenTest, SoftmaxRowMaxKeepsThePlainMax) {
  // A NaN reaches softmax's row sum anyway: no extra NaN reduction on its row max.
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = torch.softmax(x0, -1)\n"
      "    return t0\n",
      "torch.randn(6, 100)");
  EXPECT_EQ(Count(MustEmit(p), "PropagateNan"), 0);
}

TEST(CodegenTest, LongRowsLoop) {
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = F.layer_norm(x0, [10000])\n"
      "    return t0\n",
      "torch.randn(3, 10000)");
  const std::string c = MustEmit(p);
  EXPECT_EQ(Count(c, "for r0 in tl.range(0, 10000, BLOCK_R):"), 3);  // mean, var, write
}

TEST(CodegenTest, MatmulUsesDotWithBroadcastBatch) {
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = torch.matmul(x0, x1)\n"
      "    return t0\n",
      "torch.randn(2, 5, 24, 40), torch.randn(5, 40, 16)");
  const std::string c = MustEmit(p);
  ExpectInOrder(c, {"# matmul: M=24 N=16 K=40 batch=10", "pid_b = pid // 1", "bc0 = (pid_b // 5)",
                    "bc1 = pid_b % 5", "tl.dot(a, b", "k0_matmul_kernel[(10,)]("});
}

TEST(CodegenTest, EveryCatalogOperatorEmits) {
  for (OpId id = 0; id < static_cast<OpId>(Catalog().size()); ++id) {
    if (GetOp(id).kind != OpKind::kCompute) continue;
    auto p = SingleOpProgram(id);
    ASSERT_TRUE(p.ok()) << GetOp(id).name;
    EXPECT_TRUE(UnsupportedOps(p.value()).empty()) << GetOp(id).name;
    auto c = EmitCandidate(p.value());
    EXPECT_TRUE(c.ok()) << GetOp(id).name << ": " << (c.ok() ? "" : c.error().ToString());
  }
}

TEST(CodegenTest, VariantsAreDistinct) {
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = torch.matmul(x0, x1)\n"
      "    t1 = torch.relu(t0)\n"
      "    return t1\n",
      "torch.randn(256, 256), torch.randn(256, 256)");
  const auto vs = EmitVariants(p, 6);
  EXPECT_GE(vs.size(), 4u);
  EXPECT_EQ(std::set<std::string>(vs.begin(), vs.end()).size(), vs.size());
}

TEST(CodegenTest, FusionPlanStoresOutputsOnly) {
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = torch.sum(x0, 1)\n"
      "    t1 = torch.neg(t0)\n"
      "    t2 = torch.amax(x0, 0)\n"
      "    return t1, t2\n",
      "torch.randn(4, 8)");
  const FusionPlan plan = PlanFusion(p, true);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(p.value(plan.groups[0].output).name, "t1");
  EXPECT_EQ(p.value(plan.groups[1].output).name, "t2");
  EXPECT_FALSE(plan.materialized[p.FindValue("t0").index]);
}

TEST(CodegenTest, HugeTensorsIndexInInt64) {
  // 2^31 elements: offsets would overflow int32 (paper-preset programs reach 2^32).
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = torch.sum(x0, 0)\n"
      "    return t0\n",
      "torch.randn(65536, 32768)");
  ExpectInOrder(MustEmit(p), {"pid = tl.program_id(0).to(tl.int64)",
                              "tl.arange(0, BLOCK_R).to(tl.int64)[None, :]"});
  const Program small = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = torch.sum(x0, 0)\n"
      "    return t0\n",
      "torch.randn(64, 32)");
  EXPECT_EQ(MustEmit(small).find("tl.int64"), std::string::npos);
}

TEST(CodegenTest, Literals) {
  EXPECT_EQ(FloatLiteral(1.0), "1.0");
  EXPECT_EQ(FloatLiteral(0.01), "0.01");
  EXPECT_EQ(FloatLiteral(1e-5), "1e-05");
  EXPECT_EQ(FloatLiteral(-2.5), "-2.5");
  EXPECT_EQ(NextPow2(17), 32);
  EXPECT_EQ(NextPow2(1), 1);
}

}  // namespace
}  // namespace drtriton::codegen

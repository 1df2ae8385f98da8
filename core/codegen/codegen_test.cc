// Expected-output tests for the template generator (FileCheck style: the lines that
// matter must appear, in order), plus coverage of every catalog operator and variants.
#include "codegen/codegen.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "codegen/fusion.h"
#include "codegen/heuristics.h"
#include "codegen/kernel.h"
#include "codegen/text_checks_for_tests.h"
#include "ir/build.h"
#include "ir/parse_for_tests.h"

namespace drtriton::codegen {
namespace {

std::string MustEmit(const Program& p, CodegenOptions options = {}) {
  auto c = EmitCandidate(p, options);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().ToString());
  return c.ok() ? c.value() : "";
}

// One operator on x0 alone: `call` is its PyTorch spelling, e.g. "torch.softmax(x0, -1)".
Program OneOp(const std::string& call, const std::string& input) {
  return MustParse("def fused_operator(x0):\n    t0 = " + call + "\n    return t0\n", input);
}

// One operator on x0 and x1: `call` is its PyTorch spelling, e.g. "F.conv2d(x0, x1, None, 1, 1)".
Program TwoInputOp(const std::string& call, const std::string& inputs) {
  return MustParse("def fused_operator(x0, x1):\n    t0 = " + call + "\n    return t0\n", inputs);
}

// x0 @ x1 alone, on the given inputs.
Program MatmulOf(const std::string& inputs) {
  return MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = torch.matmul(x0, x1)\n"
      "    return t0\n",
      inputs);
}

TEST(CodegenTest, LogicalNotOfAComparisonSelectsInTheSameKernel) {
  // The "safe softmax" mask: where(not (x == y), x, 0.0) fuses into one elementwise kernel.
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = torch.eq(x0, x1)\n"
      "    t1 = torch.logical_not(t0)\n"
      "    t2 = torch.where(t1, x0, x1)\n"
      "    return t2\n",
      "torch.randn(4, 8), torch.randn(1, 8)");
  const std::string c = MustEmit(p);
  EXPECT_EQ(Count(c, "@triton.jit"), 1);
  ExpectInOrder(c, {" == ", " == 0)", "tl.where("});
}

// log1p and expm1 take libdevice's functions on the GPU and Kahan's forms in the interpreter,
// which has no libdevice: the kernel that reads the LIBDEVICE constexpr declares it, its launch
// sets it from the input's device, and libdevice is imported; a kernel without them has none.
TEST(CodegenTest, Log1pReadsLibdeviceOnTheGpuOnly) {
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = torch.log1p(x0)\n"
      "    t1 = torch.expm1(t0)\n"
      "    return t1\n",
      "torch.rand(4, 8)");
  const std::string c = MustEmit(p);
  ExpectInOrder(c, {"from triton.language.extra import libdevice",
                    "CONTIG: tl.constexpr, LIBDEVICE: tl.constexpr):",
                    "(libdevice.log1p(x0) if LIBDEVICE else tl.where(",
                    "(libdevice.expm1(y1) if LIBDEVICE else tl.where(",
                    "LIBDEVICE=x0.device.type == \"cuda\""});
  const std::string plain = MustEmit(MustParse(
      "def fused_operator(x0):\n    t0 = torch.exp(x0)\n    return t0\n", "torch.rand(4, 8)"));
  EXPECT_EQ(Count(plain, "LIBDEVICE"), 0);
  EXPECT_EQ(Count(plain, "libdevice"), 0);
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
      c, {"import triton.language as tl",
          // t1, which the wrapper allocates, at its literal strides (kernel.h AllocatedStrides)
          "def k0_relu_kernel(x0_ptr, stride_x0_0, stride_x0_1, x1_ptr, stride_x1_1, "
          "t1_ptr, BLOCK: tl.constexpr, CONTIG: tl.constexpr):",
          "offs = pid * BLOCK + tl.arange(0, BLOCK)", "mask = offs < 32", "c0 = (offs // 8)",
          "c1 = offs % 8", "tl.load(x0_ptr + c0 * stride_x0_0 + c1 * stride_x0_1, mask=mask",
          "tl.load(x1_ptr + c1 * stride_x1_1, mask=mask",  // broadcast dim: no stride
          " + ", "tl.maximum(", "tl.store(t1_ptr + c0 * 8 + c1", "mask=mask)",
          "def triton_fused_operator(x0, x1):", "assert tuple(x0.shape) == (4, 8)",
          "t1 = torch.empty((4, 8), device=x0.device, dtype=float_dtype)", "k0_relu_kernel[(1,)](",
          "x0, x0.stride(0), x0.stride(1), x1, x1.stride(1), t1, BLOCK=32", "return t1"});
}

TEST(CodegenTest, AllocatedValuesAreAddressedAtLiteralStrides) {
  // The convolution's output and the relu's are allocated by the wrapper (contiguous): their
  // kernels address them at literal strides, so Triton sees (2, 32, 8, 8)'s 2048, 64 and 8;
  // the inputs, whatever their layout, keep stride arguments.  Generic-shape candidates keep
  // them for every value (their shapes are runtime sizes).
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = F.conv2d(x0, x1)\n"
      "    t1 = torch.relu(t0)\n"
      "    return t1\n",
      "torch.randn(2, 16, 10, 10), torch.randn(32, 16, 3, 3)");
  const std::string c = MustEmit(p);
  EXPECT_EQ(c.find("stride_t1_"), std::string::npos) << c;
  EXPECT_EQ(c.find("t1.stride("), std::string::npos) << c;
  EXPECT_NE(c.find(" * 2048 + "), std::string::npos) << c;
  EXPECT_NE(c.find("x0.stride(0)"), std::string::npos) << c;
  CodegenOptions generic;
  generic.generic_shapes = true;
  const std::string g = MustEmit(p, generic);
  EXPECT_NE(g.find("t1.stride(0)"), std::string::npos) << g;
}

TEST(CodegenTest, OneElementInputsLoadAsScalars) {
  // x1 has one element: one scalar load per program, no tile of lanes reading one address.
  const std::string c =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = torch.mul(x0, x1)\n"
                         "    return t0\n",
                         "torch.randn(64, 32), torch.randn(1)"));
  EXPECT_EQ(Count(c, "x1_ptr + offs * 0"), 0);
  ExpectInOrder(c, {"if CONTIG:", "tl.load(x0_ptr + offs, mask=mask", "tl.load(x1_ptr)",
                    "else:", "tl.load(x1_ptr)"});
  // The same in a contraction's epilogue.
  const std::string e =
      MustEmit(MustParse("def fused_operator(x0, x1, x2):\n"
                         "    t0 = torch.matmul(x0, x1)\n"
                         "    t1 = torch.mul(t0, x2)\n"
                         "    return t1\n",
                         "torch.randn(32, 16), torch.randn(16, 32), torch.randn(1, 1)"));
  ExpectInOrder(e, {"acc += tl.dot(", "tl.load(x2_ptr)", "tl.store("});
  // And in its prologue (attention's scaled q and k, KernelBench L1 97): a tile of lanes
  // reading one address was pipelined through shared memory like an operand, which took
  // every autotuned tile of L1 97's product past the SM's 228 KB (sm_90 build: 327-491 KB).
  const std::string q =
      MustEmit(MustParse("def fused_operator(x0, x1, x2):\n"
                         "    t0 = torch.mul(x0, x2)\n"
                         "    t1 = torch.mul(x1, x2)\n"
                         "    t2 = torch.matmul(t0, t1)\n"
                         "    return t2\n",
                         "torch.randn(32, 16), torch.randn(16, 32), torch.randn(1)"));
  EXPECT_EQ(Count(q, "x2_ptr + ("), 0);
  ExpectInOrder(q, {"for k0 in", "tl.load(x2_ptr)", "tl.load(x2_ptr)", "acc += tl.dot("});
  // A one-element value's dims of size 1 may be indexed by tile coordinates (an unbatched
  // transposed convolution's input row, here batch norm's channel dim, is past 0 in masked
  // lanes): the unmasked scalar load reads index 0 of every dim, never those coordinates.
  const std::string conv = MustEmit(
      MustParse("def fused_operator(x0, x1, x2, x3):\n"
                "    t0 = F.batch_norm(x0, x2, x3, None, None)\n"
                "    t1 = F.conv_transpose2d(t0, x1, None, 1, 1)\n"
                "    return t1\n",
                "torch.randn(1, 1, 16), torch.randn(1, 4, 3, 3), torch.randn(1), "
                "torch.rand(1)"));
  ExpectInOrder(conv, {"for k0 in", "tl.load(x2_ptr)", "tl.load(x3_ptr)"});
  EXPECT_EQ(Count(conv, "tl.load(x2_ptr +") + Count(conv, "tl.load(x3_ptr +"), 0);
}

TEST(CodegenTest, ConvWithEpilogueIsOneKernel) {
  const Program p = MustParse(
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = F.conv2d(x0, x1, None, 1, 1)\n"
      "    t1 = torch.relu(t0)\n"
      "    t2 = torch.add(t1, x2)\n"
      "    return t2\n",
      "torch.randn(2, 3, 8, 8), torch.randn(8, 3, 3, 3), torch.randn(1, 8, 1, 1)");
  CodegenOptions nchw;  // the operands as given (3 channels are copied channels-last otherwise)
  nchw.variant = 1;
  const std::string c = MustEmit(p, nchw);
  EXPECT_EQ(Count(c, "@triton.jit\n"), 1);
  ExpectInOrder(c, {"def k0_conv2d_kernel(", "# conv2d: M=128 N=8 K=27 batch=1",
                    "for k0 in tl.range(0, 27, BLOCK_K):", "ok0 = (sp0 >= 0) & (sp0 < 8)",
                    "acc += tl.dot(a, b, input_precision=DOT_PRECISION)",
                    "tl.maximum(acc, 0.0, propagate_nan=tl.PropagateNan.ALL)", "tl.store(t2_ptr"});
  EXPECT_EQ(Count(c, "torch.empty("), 1);  // only the output is stored
  // Without epilogue fusion the conv result is stored and a pointwise kernel follows.
  CodegenOptions unfused = nchw;
  unfused.fuse_epilogue = false;
  EXPECT_EQ(Count(MustEmit(p, unfused), "@triton.jit\n"), 2);
}

TEST(CodegenTest, BatchNormAndReluAreAConvolutionsEpilogue) {
  // conv -> batch_norm -> relu -> conv (a CNN block): the first convolution's kernel applies
  // the batch norm and relu to its tile and stores t2, which the second reads (fusion.h).
  const std::string c = MustEmit(MustParse(
      "def fused_operator(x0, x1, x2, x3, x4, x5, x6):\n"
      "    t0 = F.conv2d(x0, x1, None, 1, 1)\n"
      "    t1 = F.batch_norm(t0, x2, x3, x4, x5)\n"
      "    t2 = torch.relu(t1)\n"
      "    t3 = F.conv2d(t2, x6, None, 1, 1)\n"
      "    return t3\n",
      "torch.randn(2, 8, 12, 12), torch.randn(16, 8, 3, 3), torch.randn(16), torch.rand(16), "
      "torch.randn(16), torch.randn(16), torch.randn(16, 16, 3, 3)"));
  ExpectInOrder(c, {"def k0_conv2d_kernel(", "# batch_norm", "tl.maximum(", "tl.store(t2_ptr",
                    "def k1_conv2d_kernel(t2_ptr"});
  EXPECT_EQ(Count(c, "def k0_batch_norm_kernel("), 0);
  EXPECT_EQ(Count(c, "def k1_relu_kernel("), 0);
}

TEST(CodegenTest, TwoEpiloguesMeetingAtAnAddLeaveItToTheFirst) {
  // A residual block (KernelBench L3 8): conv -> batch_norm -> relu -> conv -> batch_norm, plus
  // the shortcut's conv -> batch_norm, added.  Both chains reach the add; the shortcut's stops
  // before it (stores t6) and the main conv's epilogue reads t6 (fusion.cc, EpilogueEnd).
  const std::string c = MustEmit(MustParse(
      "def fused_operator(x0, w1, g1, b1, w2, g2, b2, w3, g3, b3, m1, v1, m2, v2, m3, v3):\n"
      "    t0 = F.conv2d(x0, w1, None, [1, 1], [1, 1], [1, 1])\n"
      "    t1 = F.batch_norm(t0, m1, v1, g1, b1)\n"
      "    t2 = torch.relu(t1)\n"
      "    t3 = F.conv2d(t2, w2, None, [1, 1], [1, 1], [1, 1])\n"
      "    t4 = F.batch_norm(t3, m2, v2, g2, b2)\n"
      "    t5 = F.conv2d(x0, w3, None, [1, 1], [0, 0], [1, 1])\n"
      "    t6 = F.batch_norm(t5, m3, v3, g3, b3)\n"
      "    t7 = torch.add(t4, t6)\n"
      "    t8 = torch.relu(t7)\n"
      "    return t8\n",
      "torch.randn(2, 4, 10, 10), torch.randn(8, 4, 3, 3), torch.randn(8), torch.randn(8), "
      "torch.randn(8, 8, 3, 3), torch.randn(8), torch.randn(8), torch.randn(8, 4, 1, 1), "
      "torch.randn(8), torch.randn(8), torch.randn(8), torch.rand(8), torch.randn(8), "
      "torch.rand(8), torch.randn(8), torch.rand(8)"));
  ExpectInOrder(c, {"def k0_conv2d_kernel(", "def k1_conv2d_kernel(", "tl.store(t6_ptr",
                    "def k2_conv2d_kernel(t2_ptr", "t6_ptr", "tl.store(t8_ptr"});
  EXPECT_EQ(Count(c, "tl.store(t8_ptr"), 2);  // the kernel and its range guard's tile
}

TEST(CodegenTest, ConvLoadsAreNotClampedAndItsWeightIsAMatrix) {
  // Padding 1: both sides of the window are tested, and the masked load does the rest.  NCHW
  // operands (variant 1; 3 channels are copied channels-last otherwise).
  CodegenOptions nchw;
  nchw.variant = 1;
  const std::string padded = MustEmit(MustParse("def fused_operator(x0, x1):\n"
                                                "    t0 = F.conv2d(x0, x1, None, 1, 1)\n"
                                                "    return t0\n",
                                                "torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3)"),
                                      nchw);
  EXPECT_EQ(Count(padded, "tl.where(ok"), 0);
  ExpectInOrder(padded,
                {"CONTIG: tl.constexpr", "sp0 = mc1 + ka1 - 1", "ok0 = (sp0 >= 0) & (sp0 < 8)",
                 "mask_a = mask_m & (offs_ka < 27) & ok0",
                 "if CONTIG:", "tl.load(x1_ptr + offs_n * 27 + offs_kb, mask=mask_b",
                 "else:", "kb2 * stride_x1_3", "contig = x1.is_contiguous()", "CONTIG=contig"});
  // No padding: the window never leaves the input (torch's output length), so no mask at all;
  // groups put the group's first output channel into the weight's row.
  const std::string valid =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = F.conv2d(x0, x1, None, 2, 0, 1, 2)\n"
                         "    return t0\n",
                         "torch.randn(2, 4, 9, 9), torch.randn(6, 2, 3, 3)"));
  EXPECT_EQ(Count(valid, "ok0"), 0);
  ExpectInOrder(valid, {"sp0 = mc1 * 2 + ka1", "mask_a = mask_m & (offs_ka < 18)\n",
                        "tl.load(x1_ptr + (bc0 * 3 + offs_n) * 18 + offs_kb"});
}

TEST(CodegenTest, TransposedConvolutionIsOneDenseConvolutionPerStridePhase) {
  // Stride 2, padding 1, kernel 3: phase 0 of a dim takes kernel offset 1 alone, phase 1
  // offsets 0 and 2, so the phases' K are 3 * {1, 2} * {1, 2} and no product is by a
  // structural zero.  (3 input channels: NCHW operands, K ordered (channel, offsets).)
  const std::string c =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = F.conv_transpose2d(x0, x1, None, 2, 1, 1)\n"
                         "    return t0\n",
                         "torch.randn(2, 3, 5, 5), torch.randn(3, 3, 3, 3)"));
  ExpectInOrder(
      c,
      {"PHASE: tl.constexpr):", "launched per stride phase (PHASE of 4)",
       "phase0: tl.constexpr = (PHASE // 2) % 2", "first_k0: tl.constexpr = (phase0 + 1) % 2",
       "shift0: tl.constexpr = (phase0 + 1 - first_k0) // 2",
       "taps0: tl.constexpr = (3 - first_k0 + 1) // 2", "outs0: tl.constexpr = (11 - phase0) // 2",
       "phase1: tl.constexpr = PHASE % 2", "mask_m = offs_m < 2 * outs0 * outs1",
       "for k0 in tl.range(0, 3 * taps0 * taps1, BLOCK_K):", "sp0 = mc1 + shift0 - ka1",
       "ok0 = (sp0 < 5)",  // i = j + shift - t never goes below 0 here
       "ib2 = first_k0 + kb1 * 2", "oc2 = phase0 + mc1 * 2", "PHASE=0", "PHASE=1", "PHASE=2",
       "PHASE=3"});
  EXPECT_EQ(Count(c, "@triton.jit"), 1);
  EXPECT_EQ(Count(c, "% 2 == 0"), 0);
  EXPECT_EQ(Count(c, "k0_conv_transpose2d_kernel[(1,)]("), 4);  // 50 rows per phase
  // Stride 1 needs no phase.
  const std::string s1 =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = F.conv_transpose1d(x0, x1, None, 1, 1, 0, 1, 2)\n"
                         "    return t0\n",
                         "torch.randn(2, 3, 5), torch.randn(3, 3, 3)"));
  EXPECT_EQ(Count(s1, "PHASE"), 0);
  ExpectInOrder(s1, {"sp0 = mc1 + 1 - ka1 * 2", "ok0 = (sp0 >= 0) & (sp0 < 5)"});
}

TEST(CodegenTest, TransposedConvolutionTapsThatReachNoInputLeaveTheKLoop) {
  // Stride and dilation 2 over a last dim 1 wide (paper-preset program 98's pattern): phase 0
  // of that dim reaches the input with tap 1 of 3 alone (i = j + 1 - t, j < 1), phase 1 with
  // none, so K is 3 channels x 1 tap instead of x 3.
  const std::string c = MustEmit(TwoInputOp("F.conv_transpose2d(x0, x1, None, 2, [1, 2], 0, 1, 2)",
                                            "torch.randn(2, 3, 6, 1), torch.randn(3, 4, 3, 3)"));
  ExpectInOrder(c, {"K=9 batch=1", "shift1: tl.constexpr = (phase1 + 2) // 2",
                    "tap01: tl.constexpr = 1 if phase1 == 0 else 0",
                    "taps1: tl.constexpr = 1 if phase1 == 0 else 0",
                    "sp1 = mc2 + shift1 - (ka2 + tap01)", "ib3 = (kb2 + tap01)"});
  // Stride 1: a dilated kernel of 9 over 3 positions, padding 6: offsets 2 to 6 reach it.
  const std::string s1 = MustEmit(TwoInputOp("F.conv_transpose1d(x0, x1, None, 1, 6, 0, 1, 2)",
                                             "torch.randn(2, 3, 3), torch.randn(3, 5, 9)"));
  ExpectInOrder(s1, {"K=15 batch=1", "sp0 = mc1 + 6 - (ka1 + 2) * 2"});
  // A direct convolution: a 5-row kernel over 1 input row padded by 2 reaches it with its
  // middle row alone; K is 4 channels (3 copied channels-last with a zero fourth) x 1 x 3, not
  // x 5 x 3.
  const std::string direct = MustEmit(TwoInputOp(
      "F.conv2d(x0, x1, None, 1, [2, 1])", "torch.randn(2, 3, 1, 6), torch.randn(4, 3, 5, 3)"));
  ExpectInOrder(direct, {"K=12 batch=1", "sp1 = mc2 + ka1 - 1"});
  // Where every offset reaches the input nothing changes (the test above's K 3 * 3).
  const std::string full = MustEmit(TwoInputOp("F.conv_transpose1d(x0, x1, None, 1, 1)",
                                               "torch.randn(2, 3, 5), torch.randn(3, 4, 3)"));
  EXPECT_EQ(Count(full, "tap0"), 0);
  ExpectInOrder(full, {"K=9 batch=1", "sp0 = mc1 + 1 - ka1"});
}

TEST(CodegenTest, ConvolutionsWithChannelsInWholeVectorsReadChannelsLastCopies) {
  // 8 input channels: the wrapper copies input and weight with channels unit-stride (the
  // copies' strides (960, 1, 96, 8) and (72, 1, 24, 8)), K runs (kh, kw, ci), and the conv
  // reads both copies at literal strides, the weight as its (C_out, K) rows.
  const std::string c = MustEmit(TwoInputOp("F.conv2d(x0, x1, None, 1, 1)",
                                            "torch.randn(2, 8, 10, 12), torch.randn(16, 8, 3, 3)"));
  EXPECT_EQ(Count(c, "@triton.jit\n"), 3);  // launched kernels (a guard's tile aside)
  ExpectInOrder(c, {"def k0_x0_cl_kernel(x0_ptr,",
                    "BLOCK_C: tl.constexpr, CONTIG: tl.constexpr):",
                    "mask = (offs_r < 120) & (offs_c < 8)",
                    "if CONTIG:",
                    "x = tl.load(x0_ptr + n * 960 + offs_c * 120 + offs_r, mask=mask)",
                    "else:",
                    "tl.store(k0_x0_cl_ptr + n * 960 + offs_r * 8 + offs_c, x, mask=mask)",
                    "def k0_x1_cl_kernel(",
                    "def k0_conv2d_kernel(x0_ptr, x1_ptr,",
                    "ka0 = (offs_ka // 24)",
                    "ka2 = offs_ka % 8",
                    "sp0 = mc1 + ka0 - 1",
                    "tl.load(x0_ptr + mc0 * 960 + ka2 + sp0 * 96 + sp1 * 8",
                    "if CONTIG:",
                    "tl.load(x1_ptr + offs_n * 72 + offs_kb",
                    "def triton_fused_operator(x0, x1):",
                    "k0_x0_cl = torch.empty_strided((2, 8, 10, 12), (960, 1, 96, 8)",
                    "contig = x0.is_contiguous()",
                    "k0_x0_cl_kernel[(2, 1)](",
                    "CONTIG=contig",
                    "k0_x1_cl = torch.empty_strided((16, 8, 3, 3), (72, 1, 24, 8)",
                    "k0_x1_cl_kernel[(16, 1)](",
                    "k0_conv2d_kernel[",
                    "k0_x0_cl, k0_x1_cl, t0,",
                    "CONTIG=True"});
  // A transposed convolution's weight (C_in, C_out, *k) is copied with its output channels
  // unit-stride: B's tile runs along N.
  const std::string t = MustEmit(TwoInputOp("F.conv_transpose2d(x0, x1, None, 2, 1, 1)",
                                            "torch.randn(2, 4, 5, 5), torch.randn(4, 3, 3, 3)"));
  ExpectInOrder(t, {"sp0 = mc1 + shift0 - ka0", "ib2 = first_k0 + kb0 * 2",
                    "tl.load(x1_ptr + kb2 * 27 + offs_n + ib2 * 9 + ib3 * 3",
                    "k0_x1_cl = torch.empty_strided((4, 3, 3, 3), (27, 1, 9, 3)"});
  // Variant 1 keeps NCHW, for the search to time both.
  CodegenOptions nchw;
  nchw.variant = 1;
  EXPECT_EQ(Count(MustEmit(TwoInputOp("F.conv2d(x0, x1, None, 1, 1)",
                                      "torch.randn(2, 8, 10, 12), torch.randn(16, 8, 3, 3)"),
                           nchw),
                  "_cl"),
            0);
  // 3 channels (an RGB input): the copies add a zero channel, K = 25 x 4, and the conv reads
  // the 4-channel rows unmasked.
  const std::string rgb = MustEmit(TwoInputOp(
      "F.conv2d(x0, x1, None, 1, 2)", "torch.randn(2, 3, 10, 12), torch.randn(16, 3, 5, 5)"));
  ExpectInOrder(rgb, {"copied channels-last (dim 1 unit-stride, zeros up to 4 channels)",
                      "mask = (offs_r < 120) & (offs_c < 3)",
                      "x = tl.load(x0_ptr + n * 360 + offs_c * 120 + offs_r, mask=mask, other=0.0)",
                      "tl.store(k0_x0_cl_ptr + n * 480 + offs_r * 4 + offs_c, x, "
                      "mask=(offs_r < 120) & (offs_c < 4))",
                      "# conv2d: M=240 N=16 K=100", "for k0 in tl.range(0, 100, BLOCK_K):",
                      "sp1 * 4", "k0_x0_cl = torch.empty_strided((2, 4, 10, 12), (480, 1, 48, 4)",
                      "k0_x1_cl = torch.empty_strided((16, 4, 5, 5), (100, 1, 20, 4)"});
  // But not a 3x3 kernel: K = 27 is one BLOCK_K step, which the zero channel would make two.
  EXPECT_EQ(Count(MustEmit(TwoInputOp("F.conv2d(x0, x1, None, 1, 1)",
                                      "torch.randn(2, 3, 10, 12), torch.randn(16, 3, 3, 3)")),
                  "_cl"),
            0);
  // Not with groups (each group's channels would need their own zeros), nor 2 channels of 4.
  EXPECT_EQ(Count(MustEmit(TwoInputOp("F.conv2d(x0, x1, None, 1, 1, 1, 2)",
                                      "torch.randn(2, 6, 10, 12), torch.randn(16, 3, 3, 3)")),
                  "_cl"),
            0);
  EXPECT_EQ(Count(MustEmit(TwoInputOp("F.conv2d(x0, x1, None, 1, 1)",
                                      "torch.randn(2, 2, 10, 12), torch.randn(16, 2, 3, 3)")),
                  "_cl"),
            0);
}

TEST(CodegenTest, DepthwiseConvolutionSumsItsWindowWithoutDot) {
  // One input channel per group: K = 9 and N = 2 would pad tl.dot's tiles to 16 x 16.
  const std::string c =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = F.conv2d(x0, x1, None, 1, 1, 1, 4)\n"
                         "    return t0\n",
                         "torch.randn(2, 4, 8, 8), torch.randn(8, 1, 3, 3)"));
  EXPECT_EQ(Count(c, "tl.dot("), 0);
  EXPECT_EQ(Count(c, "DOT_PRECISION"), 0);
  ExpectInOrder(
      c, {"# conv2d: M=128 N=2 K=9 batch=4", "for k0 in tl.range(0, 9, BLOCK_K):", "ci = bc0",
          "lanes += a[:, :, None] * b[None, :, :]", "acc += tl.sum(lanes, axis=1)",
          "BLOCK_M=128, BLOCK_N=2, BLOCK_K=1", "num_warps=4,"});
  // An elementwise producer of its input is stored by a kernel of its own, which the window
  // sum reads (fusion.cc: recomputed in the K loop it was a wrong answer on the GPU).
  const std::string fed =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = torch.relu(x0)\n"
                         "    t1 = F.conv2d(t0, x1, None, 1, 1, 1, 4)\n"
                         "    return t1\n",
                         "torch.randn(2, 4, 8, 8), torch.randn(8, 1, 3, 3)"));
  EXPECT_EQ(Count(fed, "@triton.jit\n"), 2);
  const size_t conv = fed.find("def k1_conv2d_kernel(");
  ASSERT_NE(conv, std::string::npos);
  EXPECT_EQ(Count(fed.substr(conv), "tl.maximum("), 0);
  ExpectInOrder(fed, {"def k0_relu_kernel(", "tl.maximum(", "tl.store(t0_ptr",
                      "def k1_conv2d_kernel(", "t0_ptr", "lanes += a[:, :, None] * b[None, :, :]",
                      "k0_relu_kernel[", "k1_conv2d_kernel["});
  EXPECT_EQ(Count(fed, "a = tl.where(mask_a"), 0);
  // So does a dense convolution whose input elements enter more than 64 products (fusion.h,
  // OperandReuse: 8 output channels x 9 taps).
  const std::string dense =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = torch.relu(x0)\n"
                         "    t1 = F.conv2d(t0, x1, None, 1, 1)\n"
                         "    return t1\n",
                         "torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3)"));
  EXPECT_EQ(Count(dense, "def k0_relu_kernel("), 1);
  EXPECT_EQ(Count(dense.substr(dense.find("def k1_conv2d_kernel(")), "tl.maximum("), 0);
}

TEST(CodegenTest, ComputedContractionOperandsAreStoredFirst) {
  // exp -> matmul: the exponential is stored by a pointwise kernel and the product reads it
  // (fusion.h, OperandReuse: each element of A enters N = 96 products, of B M = 80, both
  // above kInlineOperandReuse); both operands when both are computed.
  const std::string both =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = torch.exp(x0)\n"
                         "    t1 = torch.sigmoid(x1)\n"
                         "    t2 = torch.matmul(t0, t1)\n"
                         "    return t2\n",
                         "torch.randn(80, 48), torch.randn(48, 96)"));
  ExpectInOrder(both, {"def k0_exp_kernel(", "def k1_sigmoid_kernel(", "def k2_matmul_kernel(",
                       "k0_exp_kernel[", "k1_sigmoid_kernel[", "k2_matmul_kernel["});
  EXPECT_EQ(Count(both.substr(both.find("def k2_matmul_kernel(")), "tl.exp("), 0);
  // A transpose of an input alone is a strided read, not a copy.
  const std::string view = MustEmit(MustParse("def fused_operator(x0, x1):\n"
                                              "    t0 = torch.transpose(x0, 0, 1)\n"
                                              "    t1 = torch.matmul(t0, x1)\n"
                                              "    return t1\n",
                                              "torch.randn(48, 40), torch.randn(48, 24)"));
  EXPECT_EQ(Count(view, "@triton.jit\n"), 1);
  // A transpose of a computed value is stored as the operand (transposed).
  const std::string behind = MustEmit(MustParse("def fused_operator(x0, x1):\n"
                                                "    t0 = torch.exp(x0)\n"
                                                "    t1 = torch.transpose(t0, 0, 1)\n"
                                                "    t2 = torch.matmul(t1, x1)\n"
                                                "    return t2\n",
                                                "torch.randn(48, 40), torch.randn(48, 96)"));
  ExpectInOrder(behind, {"def k0_transpose_kernel(", "tl.exp(", "def k1_matmul_kernel("});
  // N = 64 (one 64-wide tile): each element of A enters 64 products, computed once inline.
  const std::string once = MustEmit(MustParse("def fused_operator(x0, x1):\n"
                                              "    t0 = torch.exp(x0)\n"
                                              "    t1 = torch.matmul(t0, x1)\n"
                                              "    return t1\n",
                                              "torch.randn(40, 48), torch.randn(48, 64)"));
  EXPECT_EQ(Count(once, "@triton.jit\n"), 1);
  ExpectInOrder(once, {"def k0_matmul_kernel(", "tl.exp(", "tl.dot("});
}

TEST(CodegenTest, StridePhasesSplitTheirLongKIntoOneWorkspace) {
  // conv_transpose1d of stride 2: 2 phases of M = 5, N 16, K = 20,000 channels x 2 taps; 1
  // tile a phase and 625 BLOCK_K steps: split-K (heuristics.cc ChooseSplitK), each phase's
  // partial kernel then its sum, in order, over the one workspace.
  const std::string c = MustEmit(MustParse("def fused_operator(x0, x1):\n"
                                           "    t0 = F.conv_transpose1d(x0, x1, None, 2)\n"
                                           "    return t0\n",
                                           "torch.randn(1, 20000, 4), torch.randn(20000, 16, 4)"));
  EXPECT_EQ(Count(c, "k0_acc = torch.empty((320,)"), 1);  // 4 slices x 5 x 16
  ExpectInOrder(c, {"def k0_conv_transpose1d_part_kernel(", "num_pid_m = tl.cdiv(outs0, BLOCK_M)",
                    "pid_s = pid // (num_pid_m * num_pid_n * 1)", "k0 = pid_s * 10240 + kk",
                    "def k0_conv_transpose1d_kernel(", "for sk in tl.range(0, 4):",
                    "k0_conv_transpose1d_part_kernel[(4,)]", "PHASE=0",
                    "k0_conv_transpose1d_kernel[(1,)]", "PHASE=0",
                    "k0_conv_transpose1d_part_kernel[(4,)]", "PHASE=1",
                    "k0_conv_transpose1d_kernel[(1,)]", "PHASE=1"});
}

TEST(CodegenTest, LongReductionsSumInChunks) {
  // K = 16384: 256 BLOCK_K steps (fp16x3's 64) of fresh tiles > kSplitChunkedAbove, so chunks
  // of 512 elements (sqrt(K) = 128, raised to the minimum of eight BLOCK_K) go into a partial
  // sum before the total; each step is the split's products and one FMA into `part`.
  ExpectInOrder(
      MustEmit(MatmulOf("torch.randn(64, 16384), torch.randn(16384, 32)")),
      {"acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)", "for kc in tl.range(0, 16384, 512):",
       "part = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)",
       "for k0 in tl.range(kc, kc + 512, BLOCK_K):", "mask_a = mask_m & (offs_ka < 16384)",
       "if DOT_PRECISION == \"fp16x3\":", "part += tl.dot(ah, bh, lo * 0.00048828125) * 65536.0",
       "else:", "part += tl.dot(a, b, input_precision=DOT_PRECISION)", "acc += part", "tl.store("});
  // K = 8192 (128 steps) keeps the one running sum, as in the measured 4096^3 matmul.
  const std::string c = MustEmit(MatmulOf("torch.randn(64, 8192), torch.randn(8192, 32)"));
  EXPECT_EQ(Count(c, "part"), 0);
  ExpectInOrder(
      c, {"for k0 in tl.range(0, 8192, BLOCK_K):", "acc += tl.dot(ah, bh", "acc += tl.dot(a, b"});
}

TEST(CodegenTest, Fp16x3SplitsBothOperandsAndStartsEachStepFromZero) {
  const std::string c = MustEmit(MatmulOf("torch.randn(64, 512), torch.randn(512, 32)"));
  // The split's lines, in order: operands scaled by 2^-8, hi and the 2^11-scaled lo of each;
  // the cross products from zero (no accumulator argument: the tensor cores' truncating adds
  // never see the running sum), hi*hi on top, and one FMA into it.
  ExpectInOrder(
      c, {"sa = a * 0.00390625", "ah = sa.to(tl.float16)",
          "al = ((sa - ah.to(tl.float32)) * 2048.0).to(tl.float16)", "sb = b * 0.00390625",
          "bh = sb.to(tl.float16)", "bl = ((sb - bh.to(tl.float32)) * 2048.0).to(tl.float16)",
          "lo = tl.dot(al, bh, tl.dot(ah, bl))",
          "acc += tl.dot(ah, bh, lo * 0.00048828125) * 65536.0"});
  EXPECT_EQ(Count(c, "tl.dot(ah, bh, acc"), 0);
  EXPECT_GE(Count(c, "\"BLOCK_K\": 64"), 1);  // every autotuned tile's
  EXPECT_EQ(Count(c, "\"BLOCK_K\": 32"), 0);
  // The other splits are Triton's input_precision alone.
  EXPECT_EQ(ChooseContraction(64, 32, 512, 1, 0, DotPrecision::kBf16x6).block_k, 32);
}

TEST(CodegenTest, OnlyInlinedOperandsAreMaskedAgainBeforeTheProduct) {
  // Loaded operands already hold 0.0 in masked lanes (their load's `other`); an inlined
  // producer does not (exp(0) = 1), so its lanes are selected to 0.
  const std::string plain = MustEmit(MatmulOf("torch.randn(40, 48), torch.randn(48, 2)"));
  ExpectInOrder(plain, {"a = x0\n", "b = x1\n"});
  EXPECT_EQ(Count(plain, "tl.where(mask_a"), 0);
  const std::string fused =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = torch.exp(x0)\n"
                         "    t1 = torch.matmul(t0, x1)\n"
                         "    return t1\n",
                         "torch.randn(40, 48), torch.randn(48, 2)"));
  ExpectInOrder(fused, {"y1 = tl.exp(x0)", "a = tl.where(mask_a, y1, 0.0)", "b = x2\n"});
}

TEST(CodegenTest, ChunkingFollowsTheDotPrecision) {
  // ieee's running sum is one FMA chain over K: chunked above K = 1024 (kChunkedAbove).
  EXPECT_EQ(ChooseContraction(64, 32, 1024, 1, 0, DotPrecision::kIeee).chunk_k, 0);
  EXPECT_EQ(ChooseContraction(64, 32, 4096, 1, 0, DotPrecision::kIeee).chunk_k, 256);
  // A split's has K / BLOCK_K terms: chunked above 128 steps of 32.
  for (DotPrecision split : {DotPrecision::kBf16x3, DotPrecision::kBf16x6}) {
    EXPECT_EQ(ChooseContraction(64, 32, 4096, 1, 0, split).chunk_k, 0);
    EXPECT_EQ(ChooseContraction(64, 32, 4097, 1, 0, split).chunk_k, 256);
    EXPECT_EQ(ChooseContraction(64, 32, 16384, 1, 0, split).chunk_k, 256);
    // Split-K: each slice is its own sum, so the slice's length decides.  65536 = 16 slices
    // of 4096 (128 steps): no chunks.
    const ContractionConfig sliced = ChooseContraction(64, 32, 65536, 1, 0, split);
    EXPECT_EQ(sliced.split_k, 16);
    EXPECT_EQ(sliced.chunk_k, 0);
  }
  EXPECT_EQ(ChooseContraction(64, 32, 4096, 1, 0).precision, kDefaultDotPrecision);
  // fp16x3's steps are 64 long: chunked above 128 of them.
  EXPECT_EQ(ChooseContraction(64, 32, 8192, 1, 0, DotPrecision::kFp16x3).chunk_k, 0);
  EXPECT_EQ(ChooseContraction(64, 32, 8193, 1, 0, DotPrecision::kFp16x3).chunk_k, 512);
  EXPECT_STREQ(DotPrecisionName(kDefaultDotPrecision), "fp16x3");
  DotPrecision back = DotPrecision::kIeee;
  EXPECT_TRUE(DotPrecisionFromName("fp16x3", &back));
  EXPECT_EQ(back, DotPrecision::kFp16x3);
}

TEST(CodegenTest, MatrixVectorProductsStayOnTheFmaUnits) {
  // N = 1 (KernelBench L1 4's GEMV): the narrow path, no tl.dot, split over K into 16
  // programs per SM (64 row tiles of 32 x 33 slices, rounded to whole chunks of 1024: 32),
  // each slice chunked (8192 steps of 128 / 33 slices > 128 sums).
  const ContractionConfig gemv = ChooseContraction(2048, 1, 1048576, 1, 0);
  EXPECT_TRUE(gemv.narrow);
  EXPECT_EQ(gemv.block_n, 1);
  EXPECT_EQ(gemv.block_k, 128);
  EXPECT_EQ(gemv.block_m, 32);
  EXPECT_EQ(gemv.split_k, 32);
  EXPECT_EQ(gemv.k_slice, 32768);
  EXPECT_EQ(gemv.k_slice % gemv.chunk_k, 0);
  EXPECT_GE(gemv.split_k * gemv.k_slice, 1048576);
  EXPECT_LT((gemv.split_k - 1) * gemv.k_slice, 1048576);  // no empty slice
  // M = 8: above kNarrowAtMost, a tl.dot in the split like 16 x 16 (an FMA tl.dot pads to 16
  // just the same).
  const ContractionConfig eight = ChooseContraction(8, 4096, 4096, 1, 0);
  EXPECT_EQ(eight.precision, kDefaultDotPrecision);
  EXPECT_FALSE(eight.narrow);

  EXPECT_EQ(ChooseContraction(16, 16, 4096, 1, 0).precision, kDefaultDotPrecision);
  const std::string e = MustEmit(MatmulOf("torch.randn(64, 256), torch.randn(256, 1)"));
  EXPECT_EQ(Count(e, "tl.dot"), 0);
  EXPECT_EQ(Count(e, "DOT_PRECISION"), 0);
  EXPECT_EQ(Count(e, "dot_precision"), 0);
  ExpectInOrder(e,
                {"for k0 in tl.range(0, 256, BLOCK_K):", "lanes += a[:, :, None] * b[None, :, :]",
                 "acc += tl.sum(lanes, axis=1)", "BLOCK_N=1"});
  const std::string v = MustEmit(MatmulOf("torch.randn(2, 256), torch.randn(256, 64)"));
  ExpectInOrder(
      v, {"lanes += a[:, :, None] * b[None, :, :]", "acc += tl.sum(lanes, axis=1)", "BLOCK_M=2"});
}

TEST(CodegenTest, FewTilesOfALongKAreSplitAcrossPrograms) {
  // 256 x 256 x 524288: 4 tiles of 128x128 would leave 128 of 132 SMs idle for 16384 steps.
  const ContractionConfig c = ChooseContraction(256, 256, 524288, 1, 0);
  EXPECT_EQ(c.block_m, 128);
  EXPECT_EQ(c.block_n, 128);
  EXPECT_EQ(c.split_k, 64);  // 8192 steps of 64 over 66 programs' worth, at least 128 a slice
  EXPECT_EQ(c.k_slice, 8192);
  EXPECT_EQ(c.chunk_k, 0);  // 128 steps a slice: one running sum each
  EXPECT_EQ(c.k_slice % c.block_k, 0);
  // Enough tiles, a short K, or unknown sizes (generic mode): one kernel.
  EXPECT_EQ(ChooseContraction(4096, 4096, 4096, 1, 0).split_k, 1);
  EXPECT_EQ(ChooseContraction(256, 256, 32768, 1, 0).split_k, 1);  // 512 steps of 64
  EXPECT_EQ(ChooseContraction(kUnknownSize, kUnknownSize, kUnknownSize, 1, 0).split_k, 1);
  EXPECT_FALSE(ChooseContraction(kUnknownSize, kUnknownSize, kUnknownSize, 1, 0).narrow);
  // The partial kernel runs first, over (slice, tile) programs, and stores its tile in the
  // workspace; the output kernel adds the slices in order, then bias and epilogue.
  const std::string s = MustEmit(MatmulOf("torch.randn(16, 40000), torch.randn(40000, 16)"));
  ExpectInOrder(s, {"def k0_matmul_part_kernel(", "pid_s = pid // 1",
                    "for kc in tl.range(0, 10240, 512):", "k0 = pid_s * 10240 + kk",
                    "part += tl.dot(a, b, input_precision=DOT_PRECISION)",
                    "tl.store(k0_acc_ptr + pid_s * 256 + (pid_b * 16 + offs_m) * 16 + offs_n, acc",
                    "def k0_matmul_kernel(k0_acc_ptr,", "for sk in tl.range(0, 4):",
                    "acc += tl.load(k0_acc_ptr + sk * 256 + ws", "tl.store(t0_ptr",
                    "dot_precision = \"fp16x3\" if torch.get_float32_matmul_precision() == "
                    "\"highest\" else \"tf32\"",
                    "dot_precision = \"bf16\" if float_dtype == torch.bfloat16 else \"fp16\"",
                    "if x0.device.type != \"cuda\" and dot_precision != \"fp16\":",
                    "k0_acc = torch.empty((1024,)", "k0_matmul_part_kernel[(4,)](",
                    "DOT_PRECISION=dot_precision", "k0_matmul_kernel[(1,)](", "k0_acc, t0"});
  EXPECT_EQ(Count(s, "DOT_PRECISION=dot_precision"), 1);  // the output kernel has no tl.dot
}

TEST(CodegenTest, DotPrecisionIsAConstexprTheWrapperChooses) {
  // Two contractions: both kernels take DOT_PRECISION, the wrapper chooses it once before the
  // launches: the split on a GPU in strict fp32, tf32 where torch's matmul precision allows
  // it, the half inputs' own dtype, ieee for the CPU interpreter (no bf16 tl.dot there).
  const std::string c =
      MustEmit(MustParse("def fused_operator(x0, x1, x2):\n"
                         "    t0 = torch.matmul(x0, x1)\n"
                         "    t1 = torch.relu(t0)\n"
                         "    t2 = F.linear(t1, x2)\n"
                         "    return t2\n",
                         "torch.randn(32, 16), torch.randn(16, 32), torch.randn(16, 32)"));
  EXPECT_EQ(Count(c, "DOT_PRECISION: tl.constexpr"), 2);
  EXPECT_EQ(Count(c, "tl.dot(a, b, input_precision=DOT_PRECISION)"), 2);
  EXPECT_EQ(Count(c, "tl.dot(a.to(tl.bfloat16), b.to(tl.bfloat16))"), 2);
  EXPECT_EQ(Count(c, "tl.dot(a.to(tl.float16), b.to(tl.float16))"), 2);
  EXPECT_EQ(Count(c, "float_dtype = x0.dtype"), 1);
  // The operands, loaded as float32, in the K loop and again in the range guard's.
  EXPECT_EQ(Count(c, ", other=0.0).to(tl.float32)"), 8);
  // The literal precisions: the fp16x3 range guard's second loop (WriteRangeGuard), and TF32
  // on operands rounded to nearest first (WriteProducts).
  EXPECT_EQ(Count(c, "input_precision=\"ieee\")"), 2);
  EXPECT_EQ(Count(c, "tl.dot(a_tf32, b_tf32, input_precision=\"tf32\")"), 2);
  EXPECT_EQ(Count(c, "a_tf32 = tl.where(tl.abs(a) < float(\"inf\"), ((a.to(tl.uint32, "
                     "bitcast=True) + 4096) & 4294959104).to(tl.float32, bitcast=True), a)"),
            2);
  EXPECT_EQ(Count(c, "input_precision=\""), 4);
  EXPECT_EQ(Count(c, "if float_dtype == torch.bfloat16 or float_dtype == torch.float16:"), 1);
  ExpectInOrder(
      c, {"def k0_matmul_kernel(", "GROUP_M: tl.constexpr, DOT_PRECISION: tl.constexpr):",
          "def triton_fused_operator(x0, x1, x2):",
          "dot_precision = \"fp16x3\" if torch.get_float32_matmul_precision() == "
          "\"highest\" else \"tf32\"",
          "dot_precision = \"bf16\" if float_dtype == torch.bfloat16 else \"fp16\"",
          "if x0.device.type != \"cuda\" and dot_precision != \"fp16\":", "k0_matmul_kernel[",
          "DOT_PRECISION=dot_precision,", "DOT_PRECISION=dot_precision,"});
  // No tl.dot, no choice.
  const std::string p = MustEmit(OneOp("torch.relu(x0)", "torch.randn(4, 8)"));
  EXPECT_EQ(Count(p, "dot_precision"), 0);
  EXPECT_EQ(Count(p, "DOT_PRECISION"), 0);
}

TEST(CodegenTest, UnalignedOperandRowsAreCopiedIntoPaddedRowsWhenTheirStridesSaySo) {
  // K = 1037 and N = 1029: contiguous rows 1037 and 1029 elements apart, which Triton loads a
  // scalar at a time (heuristics.h, kRowAlignment).  The wrapper checks each input's strides
  // at run time, copies it into rows of 1040 elements, and passes the copy to the matmul.
  const std::string c = MustEmit(MatmulOf("torch.randn(1024, 1037), torch.randn(1037, 1029)"));
  EXPECT_EQ(Count(c, "@triton.jit\n"), 3);  // launched kernels (a guard's tile aside)
  ExpectInOrder(c,
                {"def k0_x0_rows_kernel(x0_ptr, stride_x0_0, stride_x0_1, k0_x0_rows_ptr, "
                 "stride_k0_x0_rows_0, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):",
                 "mask = (offs_r < 1024) & (offs_c < 1037)",
                 "x = tl.load(x0_ptr + rc0 * stride_x0_0 + offs_c * stride_x0_1",
                 // The padding as zeros: the matmul's loads along the rows read it.
                 ", mask=mask, other=0.0)",
                 "tl.store(k0_x0_rows_ptr + offs_r * stride_k0_x0_rows_0 + offs_c, x, "
                 "mask=(offs_r < 1024) & (offs_c < stride_k0_x0_rows_0))",
                 "def k0_x1_rows_kernel(", "mask = (offs_r < 1037) & (offs_c < 1029)",
                 // The matmul's parameters keep the inputs' names; its loads along each
                 // operand's rows (x0's K, x1's N) take the rows' bound from the wrapper.
                 "def k0_matmul_kernel(x0_row_bound, x1_row_bound, x0_ptr, stride_x0_0, "
                 "stride_x0_1, x1_ptr,",
                 "mask_a = mask_m & (offs_ka < x0_row_bound)",
                 "mask_b = (offs_kb < 1037) & (offs_n < x1_row_bound)",
                 "mask = mask_m & mask_n",  // the store's: the output's own bounds
                 "def triton_fused_operator(x0, x1):",
                 "k0_x0_repack = x0.stride(1) == 1 and x0.stride(0) % 16 != 0",
                 // Allocated with the last row's padding, viewed at the rows' length.
                 "k0_x0_rows = torch.empty_strided((1024, 1040), (1040, 1), device=x0.device, "
                 "dtype=x0.dtype)[..., :1037] if k0_x0_repack else x0",
                 "if k0_x0_repack:", "    k0_x0_rows_kernel[(32, 9)](",
                 "x0, x0.stride(0), x0.stride(1), k0_x0_rows, k0_x0_rows.stride(0), BLOCK_R=32, "
                 "BLOCK_C=128",
                 "k0_x1_repack = x1.stride(1) == 1 and x1.stride(0) % 16 != 0",
                 "torch.empty_strided((1037, 1040), (1040, 1)",
                 "if k0_x1_repack:", "k0_x1_rows_kernel[(33, 9)](",
                 "k0_matmul_kernel[lambda META: (triton.cdiv(1024, META[\"BLOCK_M\"]) * "
                 "triton.cdiv(1029, META[\"BLOCK_N\"]),)](",
                 "(1040 if k0_x0_repack else 1037), (1040 if k0_x1_repack else 1029), "
                 "k0_x0_rows, k0_x0_rows.stride(0), k0_x0_rows.stride(1), k0_x1_rows, "
                 "k0_x1_rows.stride(0), k0_x1_rows.stride(1), t0,"});

  // A batch of matrices (bmm, linear's leading dims): the row index spans the leading dims,
  // and the buffer's batch stride is its padded rows' (400 x 1040).
  const std::string b =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = torch.bmm(x0, x1)\n"
                         "    return t0\n",
                         "torch.randn(3, 400, 1037), torch.randn(3, 1037, 32)"));
  ExpectInOrder(b, {"def k0_x0_rows_kernel(", "mask = (offs_r < 1200) & (offs_c < 1037)",
                    "rc0 = (offs_r // 400)", "rc1 = offs_r % 400",
                    "x0_ptr + rc0 * stride_x0_0 + rc1 * stride_x0_1 + offs_c * stride_x0_2",
                    "offs_r * stride_k0_x0_rows_1 + offs_c",
                    "k0_x0_repack = x0.stride(2) == 1 and x0.stride(1) % 16 != 0",
                    "torch.empty_strided((3, 400, 1040), (416000, 1040, 1)", "k0_bmm_kernel["});
  // x1's rows of 32 are aligned in any contiguous input: no check, no copy.
  EXPECT_EQ(Count(b, "x1_repack"), 0);
  EXPECT_EQ(Count(b, "@triton.jit\n"), 2);
  // Operands under kRepackMinElements are read as they are: the copy's launch would cost more.
  const std::string small = MustEmit(MatmulOf("torch.randn(40, 37), torch.randn(37, 21)"));
  EXPECT_EQ(Count(small, "_rows"), 0);
  // ... unless the product is large (kRepackMinProducts): B of 1037 x 1000 (under 1M
  // elements) broadcast over 16 batches of 128 rows, 2.1G multiply-adds; over 2, 0.27G.
  const std::string reused =
      MustEmit(MatmulOf("torch.randn(16, 128, 1037), torch.randn(1037, 1000)"));
  ExpectInOrder(reused, {"k0_x0_repack = ", "k0_x1_repack = x1.stride(1) == 1"});
  const std::string once = MustEmit(MatmulOf("torch.randn(2, 128, 1037), torch.randn(1037, 1000)"));
  EXPECT_EQ(Count(once, "_repack"), 0);
  // An input read through a transpose is copied the same way (its own rows; the transpose
  // reads the copy by the same coordinates).
  const std::string swapped =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = torch.transpose(x0, -1, -2)\n"
                         "    t1 = torch.matmul(t0, x1)\n"
                         "    return t1\n",
                         "torch.randn(134, 8003), torch.randn(3, 134, 25)"));
  // x0's rows run along the matmul's M there: A's M mask takes their bound.
  ExpectInOrder(swapped, {"def k0_x0_rows_kernel(", "mask = (offs_r < 134) & (offs_c < 8003)",
                          "mask_a = (offs_m < x0_row_bound) & (offs_ka < 134)",
                          "k0_x0_repack = x0.stride(1) == 1 and x0.stride(0) % 16 != 0",
                          "torch.empty_strided((134, 8016), (8016, 1)", "k0_matmul_kernel[",
                          "(8016 if k0_x0_repack else 8003), k0_x0_rows, k0_x0_rows.stride(0), "
                          "k0_x0_rows.stride(1), x1,"});
  // A kernel's output (the pooled t0 here, rows of 1037) is copied the same way.
  const std::string pooled =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = F.max_pool1d(x0, 2, 2)\n"
                         "    t1 = torch.matmul(t0, x1)\n"
                         "    return t1\n",
                         "torch.randn(1024, 2074), torch.randn(1037, 1029)"));
  ExpectInOrder(pooled, {"def k1_t0_rows_kernel(", "mask_a = mask_m & (offs_ka < t0_row_bound)",
                         "k1_t0_repack = t0.stride(1) == 1 and t0.stride(0) % 16 != 0",
                         "(1040 if k1_t0_repack else 1037)"});
  // Not through a reshape (its kernels may read a contiguous input flat).
  const std::string reshaped =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = torch.reshape(x0, [8003, 134])\n"
                         "    t1 = torch.matmul(t0, x1)\n"
                         "    return t1\n",
                         "torch.randn(134, 8003), torch.randn(134, 25)"));
  EXPECT_EQ(Count(reshaped, "x0_repack"), 0);
}

TEST(CodegenTest, NarrowFromZeroIsNotReadFlatFromItsLargerInput) {
  // narrow(x0, 1, 0, 4) reads x0 at the output's coordinate names, but x0 is (4, 8): the
  // contiguous fast path may read only values of the output's shape flat (KernelBench L3 43
  // split one linear's (B, T, 3C) output into q, k and v; all three read the first C).
  const std::string pointwise = MustEmit(OneOp("torch.narrow(x0, 1, 0, 4)", "torch.randn(4, 8)"));
  EXPECT_EQ(Count(pointwise, "x0_ptr + offs"), 0);
  ExpectInOrder(pointwise, {"c1 = offs % 4", "x0_ptr + c0 * stride_x0_0 + c1"});
  // The same for a row kernel reading its row from the narrowed tensor.
  const std::string rows =
      MustEmit(MustParse("def fused_operator(x0):\n"
                         "    t0 = torch.narrow(x0, 1, 0, 4)\n"
                         "    t1 = torch.softmax(t0, -1)\n"
                         "    return t1\n",
                         "torch.randn(4, 8)"));
  EXPECT_EQ(Count(rows, "x0_ptr + row_off"), 0);
  // And for a pad with nothing before (torch.cat exports as pads and an add: L3 17, 14).
  const std::string pad = MustEmit(OneOp("F.pad(x0, [0, 0, 0, 5])", "torch.randn(4, 8)"));
  EXPECT_EQ(Count(pad, "x0_ptr + offs"), 0);
  // A value of the output's shape is still read flat.
  const std::string same = MustEmit(OneOp("torch.relu(x0)", "torch.randn(4, 8)"));
  EXPECT_EQ(Count(same, "x0_ptr + offs"), 1);
}

TEST(CodegenTest, AlignedNarrowAndConvolutionOperandsAreNotCopied) {
  // Rows of 32 and 48 elements: the candidate as before.
  EXPECT_EQ(Count(MustEmit(MatmulOf("torch.randn(40, 32), torch.randn(32, 48)")), "_rows"), 0);
  // The narrow path (N = 1, no tl.dot) is memory-bound: a copy would add traffic.
  EXPECT_EQ(Count(MustEmit(MatmulOf("torch.randn(40, 37), torch.randn(37, 1)")), "_rows"), 0);
  // A convolution gathers windows, not rows.
  const std::string conv =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = F.conv2d(x0, x1, None, 1, 1)\n"
                         "    return t0\n",
                         "torch.randn(2, 5, 9, 9), torch.randn(16, 5, 3, 3)"));
  EXPECT_EQ(Count(conv, "_rows"), 0);
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
  ExpectInOrder(c, {"# softmax over 100 of 6 rows: one pass", "row_mask = rows < 6", "tl.exp(x",
                    "row_max = tl.max(xm, axis=1, keep_dims=True)", "e = tl.exp(xm - row_max)",
                    "row_sum = tl.sum(e, axis=1, keep_dims=True)", "e / row_sum",
                    "tl.store(t1_ptr + row_off + r, "});
}

// torch.amax/amin, max pooling, maximum, clamp and relu propagate NaN. tl.maximum's default
// and tl.max's combine drop a NaN operand on the GPU (the interpreter propagates either way,
// so only the emitted text can show it here).
TEST(CodegenTest, AmaxPropagatesNan) {
  const Program p = OneOp("torch.amax(x0, -1)", "torch.randn(6, 100)");
  ExpectInOrder(MustEmit(p),
                {"acc = tl.maximum(acc, tl.where(mask, ", "propagate_nan=tl.PropagateNan.ALL)",
                 "result = tl.max(acc, axis=1, keep_dims=True) + tl.sum(tl.where("
                 "acc != acc, acc, 0.0), axis=1, keep_dims=True)"});
}

TEST(CodegenTest, AminLoopPropagatesNan) {
  const Program p = OneOp("torch.amin(x0, 0)", "torch.randn(5000, 3)");
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
  // The strip kernel (emit_pool_strips.cc) combines the window's taps one tl.maximum at a time.
  ExpectInOrder(c, {"acc0 = tl.maximum(acc0, col1, propagate_nan=tl.PropagateNan.ALL)",
                    "tl.minimum(tl.maximum(", "propagate_nan=tl.PropagateNan.ALL)"});
  // Every max and min propagates NaN: 3 combines into each of 4 lanes, and the clamp's two.
  EXPECT_EQ(Count(c, "tl.PropagateNan.ALL"), 14);
  EXPECT_EQ(Count(c, "tl.PropagateNan.ALL"), Count(c, "tl.maximum(") + Count(c, "tl.minimum("));
}

TEST(CodegenTest, SoftmaxRowMaxKeepsThePlainMax) {
  // A NaN reaches softmax's row sum anyway: no extra NaN reduction on its row max.
  const Program p = OneOp("torch.softmax(x0, -1)", "torch.randn(6, 100)");
  EXPECT_EQ(Count(MustEmit(p), "PropagateNan"), 0);
}

TEST(CodegenTest, LongRowsLoop) {
  // Past the one-pass limit (8192): Welford statistics, then the write, each a loop after
  // the first block, which stays in registers.
  const Program p = OneOp("F.layer_norm(x0, [10000])", "torch.randn(3, 10000)");
  const std::string c = MustEmit(p);
  EXPECT_EQ(Count(c, "for r0 in tl.range(BLOCK_R, 10000, BLOCK_R):"), 2);
  EXPECT_EQ(Count(c, "for r0"), 2);
}

// Along the contiguous dim the first variant multiplies tiles of consecutive elements
// (tl.cumprod, a carry between blocks: 7x faster on the H100, rows_emitter.h tiled_products_);
// the next multiplies in torch's order, one element per step, in torch's accumulator type on
// the inputs' device (float64 on the CPU, float32 on CUDA): a float32 tree-order scan can
// overflow a partial product to inf after the true prefix underflowed to 0, and the verifier
// judges each variant.
TEST(CodegenTest, CumprodIsTiledFirstAndSequentialNext) {
  const Program p = OneOp("torch.cumprod(x0, -1)", "torch.randn(300, 5000)");
  EXPECT_EQ(Count(MustEmit(p), "tl.cumprod"), 1);
  CodegenOptions sequential;
  sequential.variant = 1;
  const std::string c = MustEmit(p, sequential);
  ExpectInOrder(c, {"carry = tl.full([BLOCK_O, 1], 1.0, dtype=tl.float64 if F64_CARRY else "
                    "tl.float32)",
                    "for r0 in tl.range(0, 5000, BLOCK_R):", "out = carry * xm.to(carry.dtype)",
                    "out.to(tl.float32)", "carry = out", "BLOCK_R=1",
                    "F64_CARRY=x0.device.type == \"cpu\""});
  EXPECT_EQ(Count(c, "tl.cumprod"), 0);
}

TEST(CodegenTest, LargeContractionsReadFp16x3PartsWrittenFirst) {
  // 2048 x 2048 x 512 = 2^31 multiply-adds, 16 tiles across each operand (heuristics.h,
  // PresplitsOperand): each operand's parts are written by a kernel of its own, only where the
  // wrapper chose fp16x3, and the K loop's fp16x3 branch loads them at the operand's offsets.
  const std::string c = MustEmit(MatmulOf("torch.randn(2048, 512), torch.randn(512, 2048)"));
  ExpectInOrder(
      c, {"def k0_x0_parts_kernel(x0_ptr, stride_x0_0, stride_x0_1, k0_x0_hi_ptr, k0_x0_lo_ptr, "
          "BLOCK: tl.constexpr, CONTIG: tl.constexpr):",
          "if CONTIG:", "at = offs", "else:", "at = c0 * stride_x0_0 + c1 * stride_x0_1",
          "hi = sx.to(tl.float16)", "tl.store(k0_x0_hi_ptr + at, hi, mask=mask)",
          "tl.store(k0_x0_lo_ptr + at, lo, mask=mask)", "def k0_x1_parts_kernel(",
          // The range guard's tile sums the float32 operands again.
          "def k0_matmul_kernel_ieee_tile(",
          "x0 = tl.load(x0_ptr + mc0 * stride_x0_0 + ka0 * stride_x0_1",
          "def k0_matmul_kernel(", "if DOT_PRECISION == \"fp16x3\":",
          "ah = tl.load(k0_x0_hi_ptr + mc0 * stride_x0_0 + ka0 * stride_x0_1 + "
          "(offs_m + offs_ka) * 0, mask=mask_a, other=0.0)",
          "al = tl.load(k0_x0_lo_ptr + mc0 * stride_x0_0", "bh = tl.load(k0_x1_hi_ptr + ",
          "bl = tl.load(k0_x1_lo_ptr + ", "lo = tl.dot(al, bh, tl.dot(ah, bl))", "else:",
          "x0 = tl.load(x0_ptr + ", "if DOT_PRECISION == \"bf16\":",
          "def triton_fused_operator(x0, x1):", "if dot_precision == \"fp16x3\":",
          "k0_x0_hi = torch.empty_strided(x0.shape, x0.stride(), device=x0.device, "
          "dtype=torch.float16)",
          "k0_x0_lo = torch.empty_strided(x0.shape, x0.stride(),", "contig = x0.is_contiguous()",
          "k0_x0_parts_kernel[(1024,)](", "else:", "k0_x0_hi = k0_x0_lo = x0",
          "if dot_precision == \"fp16x3\":", "k0_x1_parts_kernel[(1024,)](", "else:",
          "k0_x1_hi = k0_x1_lo = x1", "k0_matmul_kernel[",
          "x0, x0.stride(0), x0.stride(1), k0_x0_hi, k0_x0_lo, x1,"});
  // Parts are loaded, not split in the loop.
  EXPECT_EQ(Count(c, "elif DOT_PRECISION == \"fp16x3\":"), 0);
  EXPECT_EQ(Count(c, "sa = a * 0.00390625"), 0);

  // Unaligned rows (heuristics.h, kRowAlignment): the parts are split from the rows copies,
  // along their storage where the wrapper made them (DENSE: 2048 rows of 1040, padding and
  // all), and laid out as they are.
  const std::string rows = MustEmit(MatmulOf("torch.randn(2048, 1037), torch.randn(1037, 2049)"));
  ExpectInOrder(rows, {"def k0_x0_rows_kernel(", "def k0_x0_parts_kernel(", "if DENSE:",
                       "mask = offs < 2129920", "at = offs", "else:", "mask = offs < 2123776",
                       "if CONTIG:", "def triton_fused_operator(", "if k0_x0_repack:",
                       "k0_x0_hi = torch.empty((2048, 1040), device=k0_x0_rows.device, "
                       "dtype=torch.float16)[..., :1037] if k0_x0_repack else "
                       "torch.empty_strided(k0_x0_rows.shape, k0_x0_rows.stride(), ",
                       "k0_x0_parts_kernel[(2080 if k0_x0_repack else 2074,)](",
                       "k0_x0_rows, k0_x0_rows.stride(0), k0_x0_rows.stride(1), k0_x0_hi, "
                       "k0_x0_lo, BLOCK=1024, DENSE=k0_x0_repack, CONTIG=contig"});

  // Half the products: the split stays in the loop; so it does for an operand 15 tiles load.
  const std::string small = MustEmit(MatmulOf("torch.randn(2048, 256), torch.randn(256, 2048)"));
  EXPECT_EQ(Count(small, "_parts_kernel"), 0);
  const std::string narrower =
      MustEmit(MatmulOf("torch.randn(2048, 1024), torch.randn(1024, 1920)"));
  EXPECT_EQ(Count(narrower, "k0_x0_parts_kernel"), 0);
  EXPECT_EQ(Count(narrower, "k0_x1_parts_kernel"), 2);
  ExpectInOrder(small, {"elif DOT_PRECISION == \"fp16x3\":", "sa = a * 0.00390625",
                        "ah = sa.to(tl.float16)", "lo = tl.dot(al, bh, tl.dot(ah, bl))"});

  // N 64 is one tile: the input is split in the loop, the weight (128 M tiles) first.
  const std::string linear = MustEmit(
      TwoInputOp("F.linear(x0, x1)", "torch.randn(16384, 2048), torch.randn(64, 2048)"));
  EXPECT_EQ(Count(linear, "k0_x0_parts_kernel"), 0);
  ExpectInOrder(linear, {"def k0_x1_parts_kernel(", "if DOT_PRECISION == \"fp16x3\":",
                         "a = x0", "sa = a * 0.00390625", "bh = tl.load(k0_x1_hi_ptr + ",
                         "lo = tl.dot(al, bh, tl.dot(ah, bl))"});

  // A computed operand (relu recomputed in the loop, N 64: kInlineOperandReuse) has no
  // tensor to split; the weight does.
  const std::string prologue =
      MustEmit(MustParse("def fused_operator(x0, x1):\n"
                         "    t0 = torch.relu(x0)\n"
                         "    t1 = F.linear(t0, x1)\n"
                         "    return t1\n",
                         "torch.randn(16384, 2048), torch.randn(64, 2048)"));
  EXPECT_EQ(Count(prologue, "@triton.jit\n"), 2);  // the weight's parts, the linear
  ExpectInOrder(prologue, {"def k0_x1_parts_kernel(", "if DOT_PRECISION == \"fp16x3\":",
                           "a = tl.where(mask_a, ", "bh = tl.load(k0_x1_hi_ptr + "});

  // bf16x6 (a product an amplifier reads: amplify.h) splits in the loop; so does an operand
  // that one tile reads.
  const ContractionConfig fp16x3 = ChooseContraction(512, 256, 8192, 1, 0);
  EXPECT_TRUE(PresplitsOperand(fp16x3, int64_t{1} << 31, 16));
  EXPECT_FALSE(PresplitsOperand(fp16x3, int64_t{1} << 31, 15));
  EXPECT_FALSE(PresplitsOperand(fp16x3, (int64_t{1} << 31) - 1, 16));
  EXPECT_FALSE(PresplitsOperand(ChooseContraction(512, 256, 8192, 1, 0, DotPrecision::kBf16x6),
                                int64_t{1} << 31, 32));

  // A convolution's parts are split from its channels-last copies, along their storage, and
  // its weight's read flat where contiguous (the group's rows: bc0).  The input: 9 taps x 2
  // N tiles loads of each element.
  const std::string conv =
      MustEmit(TwoInputOp("F.conv2d(x0, x1, None, 1, 1, 1, 2)",
                          "torch.randn(64, 64, 64, 64), torch.randn(512, 32, 3, 3)"));
  ExpectInOrder(
      conv,
      {"def k0_x0_parts_kernel(x0_ptr, k0_x0_hi_ptr, k0_x0_lo_ptr, BLOCK: tl.constexpr):",
       "laid out as k0_x0_cl", "mask = offs < 16777216", "at = offs", "def k0_x1_parts_kernel(",
       "def k0_conv2d_kernel(", "if DOT_PRECISION == \"fp16x3\":",
       "ah = tl.load(k0_x0_hi_ptr + mc0 * 262144 + ci + sp0 * 4096 + sp1 * 64", "if CONTIG:",
       "bh = tl.load(k0_x1_hi_ptr + (bc0 * 256 + offs_n) * 288 + offs_kb, mask=mask_b", "else:",
       "bh = tl.load(k0_x1_hi_ptr + ib0 * 288 + kb2 + kb0 * 96 + kb1 * 32",
       "def triton_fused_operator(", "k0_x0_cl_kernel[", "k0_x1_cl_kernel[",
       "k0_x0_hi = torch.empty_strided(k0_x0_cl.shape, k0_x0_cl.stride(),",
       "k0_x0_parts_kernel[(16384,)](", "k0_x0_cl, k0_x0_hi, k0_x0_lo, BLOCK=1024"});
  // Depthwise window sums have no tl.dot; generic shapes no sizes to decide by.
  const std::string depthwise =
      MustEmit(TwoInputOp("F.conv2d(x0, x1, None, 1, 1, 1, 64)",
                          "torch.randn(64, 64, 256, 256), torch.randn(64, 1, 3, 3)"));
  EXPECT_EQ(Count(depthwise, "_parts_kernel"), 0);
  CodegenOptions generic;
  generic.generic_shapes = true;
  const std::string any =
      MustEmit(MatmulOf("torch.randn(2048, 512), torch.randn(512, 2048)"), generic);
  EXPECT_EQ(Count(any, "_parts_kernel"), 0);
}

TEST(CodegenTest, TensorCoreContractionsAreAutotunedOverTilesTheirOwnFirst) {
  const std::string c = MustEmit(MatmulOf("torch.randn(1024, 8192), torch.randn(8192, 8192)"));
  ExpectInOrder(c,
                {"@triton.autotune(", "configs=[",
                 "triton.Config({\"BLOCK_M\": 128, \"BLOCK_N\": 128, \"BLOCK_K\": 64, "
                 "\"GROUP_M\": 8}, num_warps=8, num_stages=3)",
                 "triton.Config({\"BLOCK_M\": 128, \"BLOCK_N\": 256,",
                 "triton.Config({\"BLOCK_M\": 256, \"BLOCK_N\": 128,", "num_warps=8, num_stages=4)",
                 // The interpreter has no do_bench: it runs the heuristic's own tile.
                 "][: None if torch.cuda.is_available() else 1],", "key=[\"DOT_PRECISION\"],",
                 "cache_results=True,", "@triton.jit", "num_pid_m = tl.cdiv(1024, BLOCK_M)"});
  // The launch takes neither the tile nor the launch options: the autotuner's choice does.
  // (The half-precision TMA kernel beside it has its one tile: ChooseTmaContraction.)
  EXPECT_EQ(Count(c, "BLOCK_M=128"), 1);
  EXPECT_EQ(Count(c, "k0_matmul_tma_kernel[(128,)](\n            k0_a_desc, k0_b_desc, t0, "
                     "BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3,"),
            1);
  // The configs', the input's parts kernel's (1024 x 8192 x 8192: PresplitsOperand) and the
  // TMA kernel's.
  EXPECT_EQ(Count(c, "num_warps="), 6);

  // Tiles beyond the problem are left out; a small one keeps its own and one stage deeper.
  ContractionConfig small = ChooseContraction(64, 32, 512, 1, 0);
  const std::vector<TileChoice> tiles = TunedTiles(small, 64, 32);
  ASSERT_EQ(tiles.size(), 2u);
  EXPECT_EQ(tiles[0].block_m, small.block_m);
  EXPECT_EQ(tiles[1].num_stages, small.launch.num_stages + 1);
  // A 128x64 tile of 4 warps is also tried over 8 (half the accumulator registers a thread).
  ContractionConfig tall_n64 = ChooseContraction(32768, 64, 512, 1, 0);
  ASSERT_EQ(tall_n64.block_m * tall_n64.block_n, kEightWarpTile);
  ASSERT_EQ(tall_n64.launch.num_warps, 4);
  const std::vector<TileChoice> warps = TunedTiles(tall_n64, 32768, 64);
  ASSERT_EQ(warps.size(), 3u);
  EXPECT_EQ(warps[2].num_warps, 8);
  EXPECT_EQ(warps[2].block_m, tall_n64.block_m);
  EXPECT_EQ(warps[2].num_stages, tall_n64.launch.num_stages);
  EXPECT_EQ(tiles.back().num_warps, 4);  // 64x32 is too small to split over 8
  // Split-K, narrow (GEMV) and FMA kernels keep their one configuration.
  EXPECT_TRUE(TunedTiles(ChooseContraction(256, 256, 524288, 1, 0), 256, 256).empty());
  EXPECT_TRUE(TunedTiles(ChooseContraction(2048, 1, 1048576, 1, 0), 2048, 1).empty());
  EXPECT_TRUE(TunedTiles(ChooseContraction(64, 64, 64, 1, 0, DotPrecision::kIeee), 64, 64).empty());
  const std::string gemv = MustEmit(MatmulOf("torch.randn(2048, 4096), torch.randn(4096, 1)"));
  EXPECT_EQ(Count(gemv, "@triton.autotune"), 0);
}

TEST(CodegenTest, HalfContractionsLoadTheirOperandsByTmaWhereTheyAllow) {
  // A linear's operands by host descriptors: the input (M, K), the weight (N, K) read
  // transposed; the kernel runs where both are half, contiguous and aligned, the pointer
  // kernel otherwise.
  const Program linear = MustParse(
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = F.linear(x0, x1, x2)\n"
      "    t1 = torch.relu(t0)\n"
      "    return t1\n",
      "torch.randn(1024, 8192), torch.randn(8192, 8192), torch.randn(8192)");
  const std::string c = MustEmit(linear);
  ExpectInOrder(
      c, {"from triton.tools.tensor_descriptor import TensorDescriptor",
          "def k0_linear_tma_kernel(k0_a_desc, k0_b_desc, x2_ptr",
          // Persistent: 256 tiles of 128 x 256 walked by 128 programs, two rounds each.
          "for rnd in tl.range(0, 2):", "pid = tl.program_id(0) + rnd * 128",
          "for k0 in tl.range(0, 8192, BLOCK_K):", "a = k0_a_desc.load([pid_m * BLOCK_M, k0])",
          "b = k0_b_desc.load([pid_n * BLOCK_N, k0]).T", "acc = tl.dot(a, b, acc)",
          // The epilogue by halves of 128 columns (WriteHalvedEpilogue), the bias as one row
          // of the half, broadcast over its rows (WriteEpilogue).
          "acc_lo, acc_hi = tl.split(tl.permute(tl.reshape(acc, [BLOCK_M, 2, BLOCK_N // 2]), "
          "[0, 2, 1]))",
          "acc = acc_lo", "offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N // 2)[None, :]",
          "tl.load(x2_ptr + offs_n * stride_x2_0, mask=mask_n, other=0.0)",
          "tl.maximum(acc, 0.0", "acc = acc_hi",
          "offs_n = pid_n * BLOCK_N + BLOCK_N // 2 + tl.arange(0, BLOCK_N // 2)[None, :]",
          "tl.maximum(acc, 0.0", "def k0_linear_kernel(",
          "k0_tma = x0.dtype == x1.dtype and (x0.dtype == torch.float16 or (x0.dtype == "
          "torch.bfloat16 and x0.device.type == \"cuda\")) and x0.is_contiguous() and "
          "x1.is_contiguous() and x0.data_ptr() % 16 == 0 and x1.data_ptr() % 16 == 0",
          "TensorDescriptor.from_tensor(x1, [256, 64]) if k0_tma else None",
          "TensorDescriptor.from_tensor(x0, [128, 64]) if k0_tma else None", "if k0_tma:",
          "k0_linear_tma_kernel[(128,)](", "if not k0_tma:", "k0_linear_kernel[lambda META"});
  EXPECT_EQ(Count(c, "DOT_PRECISION=dot_precision"), 1);  // the pointer kernel alone

  // bmm: 3-D descriptors, one batch entry's tile; a linear's 3-D input as its 2-D view.
  const std::string bmm =
      MustEmit(MatmulOf("torch.randn(8, 1024, 512), torch.randn(8, 512, 1024)"));
  ExpectInOrder(bmm, {"a = k0_a_desc.load([pid_b, pid_m * BLOCK_M, k0]).reshape(BLOCK_M, BLOCK_K)",
                      "b = k0_b_desc.load([pid_b, k0, pid_n * BLOCK_N]).reshape(BLOCK_K, BLOCK_N)",
                      "TensorDescriptor.from_tensor(x1, [1, 64, 256])",
                      "TensorDescriptor.from_tensor(x0, [1, 128, 64])"});
  const std::string seq = MustEmit(MustParse(
      "def fused_operator(x0, x1):\n    t0 = F.linear(x0, x1)\n    return t0\n",
      "torch.randn(4, 512, 1024), torch.randn(2048, 1024)"));
  EXPECT_EQ(Count(seq, "TensorDescriptor.from_tensor(x0.view(2048, 1024), [128, 64])"), 1);
  // 128 tiles of 128 x 128 (2048 x 1024): one program a tile, no rounds.
  const std::string one_round = MustEmit(MustParse(
      "def fused_operator(x0, x1):\n    t0 = F.linear(x0, x1)\n    return t0\n",
      "torch.randn(2048, 64), torch.randn(1024, 64)"));
  EXPECT_EQ(Count(one_round, "for rnd in"), 0);
  EXPECT_EQ(Count(one_round, "k0_linear_tma_kernel[(128,)]("), 1);
  // 128 x 32768 (KernelBench L2 55's linear), one M tile streaming its weight: 256 tiles of
  // 128 x 128 in K steps of 128, two a program over 128 programs; 64 rows keep 64 x 256 x 64.
  ContractionConfig skinny;
  ASSERT_TRUE(ChooseTmaContraction(128, 32768, 1, 0, &skinny));
  EXPECT_EQ(skinny.block_n, 128);
  EXPECT_EQ(skinny.block_k, 128);
  EXPECT_EQ(skinny.programs, 128);
  ASSERT_TRUE(ChooseTmaContraction(64, 32768, 1, 0, &skinny));
  EXPECT_EQ(skinny.block_n, 256);
  EXPECT_EQ(skinny.block_k, 64);
  ContractionConfig prime;  // 2 x 137 tiles: no divisor from 96 to 132, one program a tile
  ASSERT_TRUE(ChooseTmaContraction(137 * 128, 512, 1, 0, &prime));
  EXPECT_EQ(prime.programs, 0);
  ASSERT_TRUE(ChooseTmaContraction(131 * 128, 512, 1, 0, &prime));  // 2 x 131: 131 programs
  EXPECT_EQ(prime.programs, 131);

  // Not: rows that are no multiple of 16 bytes, a broadcast batch operand, a read through a
  // transpose, a convolution, too few tiles, another variant, generic shapes.
  const auto no_tma = [](const std::string& text) { return Count(text, "TensorDescriptor") == 0; };
  EXPECT_TRUE(no_tma(MustEmit(MatmulOf("torch.randn(1024, 8190), torch.randn(8190, 8192)"))));
  EXPECT_TRUE(no_tma(MustEmit(MatmulOf("torch.randn(1, 1024, 512), torch.randn(8, 512, 1024)"))));
  EXPECT_TRUE(no_tma(MustEmit(MustParse(
      "def fused_operator(x0, x1):\n    t0 = torch.transpose(x1, 0, 1)\n"
      "    t1 = torch.matmul(x0, t0)\n    return t1\n",
      "torch.randn(2048, 1024), torch.randn(2048, 1024)"))));
  EXPECT_TRUE(no_tma(MustEmit(TwoInputOp("F.conv2d(x0, x1, None, 2, 1, 1, 2)",
                                         "torch.randn(16, 64, 64, 64), "
                                         "torch.randn(128, 32, 3, 3)"))));
  EXPECT_TRUE(no_tma(MustEmit(MatmulOf("torch.randn(256, 512), torch.randn(512, 256)"))));
  CodegenOptions other;
  other.variant = 1;
  EXPECT_TRUE(no_tma(MustEmit(linear, other)));
  CodegenOptions generic;
  generic.generic_shapes = true;
  EXPECT_TRUE(no_tma(MustEmit(linear, generic)));
}

TEST(CodegenTest, DirectConvolutionsReadShiftedRowsByTma) {
  // KernelBench L2 1's convolution: tiles of 128 positions of the 128 x 128 input, 126 per
  // sample (up to the last output position, 125 * 128 + 126); tap t reads rows
  // p0 + (t // 3) * 128 + t % 3 of the input's channels-last copy.
  const Program conv = MustParse(
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = F.conv2d(x0, x1, x2)\n"
      "    t1 = torch.relu(t0)\n"
      "    return t1\n",
      "torch.randn(128, 64, 128, 128), torch.randn(128, 64, 3, 3), torch.randn(128)");
  const std::string c = MustEmit(conv);
  ExpectInOrder(
      c, {"def k0_conv2d_tma_kernel(k0_a_desc, k0_b_desc, x2_ptr", "sample = pid // 126",
          "p0 = (pid // 1 % 126) * BLOCK_M", "for kk in tl.range(0, 9):",
          "a = k0_a_desc.load([sample, p0 + ((kk // 3) * 128 + (kk % 3)), 0])"
          ".reshape(BLOCK_M, BLOCK_K)",
          "b = k0_b_desc.load([pid_n * BLOCK_N, kk * 64]).T", "acc = tl.dot(a, b, acc)",
          "o0 = offs_m // 128", "o1 = offs_m % 128", "mask_m = (o0 < 126) & (o1 < 126)",
          // The epilogue on each half of the channels (fewer registers: two programs an SM),
          // the output at its literal strides.
          "acc_lo, acc_hi = tl.split(", "acc = acc_lo", "tl.maximum(acc, 0.0",
          "tl.store(t1_ptr + sample * 2032128 + offs_n * 15876 + o0 * 126 + o1", "acc = acc_hi",
          "offs_n = pid_n * BLOCK_N + BLOCK_N // 2 + tl.arange(0, BLOCK_N // 2)[None, :]",
          "tl.maximum(acc, 0.0", "def k0_conv2d_kernel(",
          // Bound before the copies, from the operands' own dtypes.
          "k0_tma = x0.dtype == x1.dtype and (x0.dtype == torch.float16 or "
          "(x0.dtype == torch.bfloat16 and x0.device.type == \"cuda\"))",
          "k0_x0_cl = torch.empty_strided(", "k0_x0_cl_kernel[(", "k0_x1_cl_kernel[(",
          "k0_b_desc = TensorDescriptor(k0_x1_cl, [128, 576], [576, 1], [128, 64]) if k0_tma",
          "k0_a_desc = TensorDescriptor(k0_x0_cl, [128, 16384, 64], [1048576, 64, 1], "
          "[1, 128, 64]) if k0_tma",
          "if k0_tma:", "k0_conv2d_tma_kernel[(16128,)](", "BLOCK_M=128, BLOCK_N=128, BLOCK_K=64",
          "num_warps=8, num_stages=3", "if not k0_tma:", "k0_conv2d_kernel[lambda META"});
  // Channel blocks: 96 channels in BLOCK_K 32, three a tap; 48 output channels in a tile of 64.
  const std::string blocks = MustEmit(TwoInputOp(
      "F.conv1d(x0, x1, None, 1, 0, 2)", "torch.randn(64, 96, 512), torch.randn(48, 96, 5)"));
  ExpectInOrder(blocks, {"tap = kk // 3", "c0 = kk % 3 * BLOCK_K",
                         "a = k0_a_desc.load([sample, p0 + (tap * 2), c0])",
                         "b = k0_b_desc.load([pid_n * BLOCK_N, tap * 96 + c0]).T",
                         "BLOCK_M=128, BLOCK_N=64, BLOCK_K=32, GROUP_M=1, num_warps=4"});
  ContractionConfig t;
  ASSERT_TRUE(ChooseShiftedRowsTma(1, 66 * 128, 16, 24, 0, &t));
  EXPECT_EQ(t.block_n, 16);
  EXPECT_EQ(t.block_k, 16);  // 24 channels: a second box half past them (zeros)
  EXPECT_FALSE(ChooseShiftedRowsTma(1, 65 * 128, 16, 24, 0, &t));  // most SMs idle
  // 8 channels would fill half of each 16-channel box: the pointer kernel, whatever N.
  EXPECT_FALSE(ChooseShiftedRowsTma(128, 14 * 64 * 64, 16, 8, 0, &t));
  EXPECT_FALSE(ChooseShiftedRowsTma(128, 126 * 128, 64, 8, 0, &t));
  EXPECT_TRUE(ChooseShiftedRowsTma(128, 126 * 128, 64, 16, 0, &t));

  // Padding 1: the TMA kernel reads a copy of its own with zeros around, 66 x 66 positions a
  // sample, 33 tiles up to the last output (63 * 66 + 64); the pointer kernel's unpadded copy
  // is made only where that kernel runs.
  const std::string big = "torch.randn(16, 64, 64, 64), torch.randn(128, 64, 3, 3)";
  const std::string padded = MustEmit(TwoInputOp("F.conv2d(x0, x1, None, 1, 1)", big));
  ExpectInOrder(padded,
                {"def k0_x0_clpad_kernel(", "pc0 = (offs_r // 66)", "pc1 = offs_r % 66",
                 "rc0 = pc0 - 1", "rc1 = pc1 - 1", "inside = (rc0 >= 0) & (rc0 < 64) & (rc1 >= 0)",
                 "mask = (offs_r < 4356) & (offs_c < 64) & inside",
                 "x = tl.load(x0_ptr + n * 262144 + offs_c * 4096 + rc0 * 64 + rc1, mask=mask, "
                 "other=0.0)",
                 "tl.store(k0_x0_clpad_ptr + n * 278784 + offs_r * 64 + offs_c, x, "
                 "mask=(offs_r < 4356) & (offs_c < 64))",
                 "sample = pid // 33", "p0 + ((kk // 3) * 66 + (kk % 3))",
                 "mask_m = (o0 < 64) & (o1 < 64)", "k0_tma = x0.dtype == x1.dtype",
                 "k0_x0_cl = torch.empty_strided((16, 64, 64, 64), (262144, 1, 4096, 64), "
                 "device=x0.device, dtype=x0.dtype) if not k0_tma else None",
                 "if not k0_tma:", "k0_x0_cl_kernel[(",
                 "k0_x0_clpad = torch.empty_strided((16, 64, 66, 66), (278784, 1, 4224, 64), "
                 "device=x0.device, dtype=x0.dtype) if k0_tma else None",
                 "if k0_tma:", "k0_x0_clpad_kernel[(",
                 "TensorDescriptor(k0_x0_clpad, [16, 4356, 64], [278784, 64, 1], [1, 128, 64])",
                 "k0_conv2d_tma_kernel[(528,)]("});

  // Stride 2, padding 1: the copy of 66 x 66 positions folded into four 33 x 33 grids, the
  // residues outermost; tap (kh, kw) reads residue (kh % 2, kw % 2) at (kh // 2, kw // 2) past
  // the output's position; 9 tiles up to the last output (31 * 33 + 32).
  const std::string strided = MustEmit(TwoInputOp("F.conv2d(x0, x1, None, 2, 1)", big));
  ExpectInOrder(strided,
                {"def k0_x0_clpad_kernel(", "pc0 = (offs_r // 2178)", "pc1 = (offs_r // 1089) % 2",
                 "pc2 = (offs_r // 33) % 33", "pc3 = offs_r % 33", "rc0 = (pc2 * 2 + pc0) - 1",
                 "rc1 = (pc3 * 2 + pc1) - 1", "sample = pid // 9",
                 "p0 + ((kk // 3) // 2 * 33 + (kk // 3) % 2 * 2178 + (kk % 3) // 2 + "
                 "(kk % 3) % 2 * 1089)",
                 "mask_m = (o0 < 32) & (o1 < 32)",
                 "TensorDescriptor(k0_x0_clpad, [16, 4356, 64], [278784, 64, 1], [1, 128, 64])",
                 "k0_conv2d_tma_kernel[(144,)]("});

  // Not: two groups, 12 channels (rows of 24 bytes), variant 1 (NCHW), generic shapes.
  const auto no_tma = [](const std::string& text) { return Count(text, "TensorDescriptor") == 0; };
  EXPECT_TRUE(no_tma(MustEmit(TwoInputOp("F.conv2d(x0, x1, None, 1, 0, 1, 2)",
                                         "torch.randn(16, 64, 64, 64), "
                                         "torch.randn(128, 32, 3, 3)"))));
  EXPECT_TRUE(no_tma(MustEmit(TwoInputOp(
      "F.conv2d(x0, x1)", "torch.randn(16, 12, 64, 64), torch.randn(128, 12, 3, 3)"))));
  CodegenOptions other;
  other.variant = 1;
  EXPECT_TRUE(no_tma(MustEmit(conv, other)));
  CodegenOptions generic;
  generic.generic_shapes = true;
  EXPECT_TRUE(no_tma(MustEmit(conv, generic)));
}

TEST(CodegenTest, ConvolutionTmaKernelsComputeTheTwoByTwoPoolAfterThem) {
  // KernelBench L2 35's chain: a program takes 64 positions of output rows 2i and 2i + 1 (126
  // outputs a row, 63 pooled: 2 column blocks), pools them and runs mish on the pooled tile,
  // which it stores; the pool's own kernel and the convolution's output (allocated only
  // there) serve the pointer kernel's path, the pooled output allocated before the
  // convolution's launches.
  const Program p = MustParse(
      "def fused_operator(x0, x1, x2, x3):\n"
      "    t0 = F.conv2d(x0, x1, x2)\n"
      "    t1 = torch.sub(t0, x3)\n"
      "    t2 = F.hardswish(t1)\n"
      "    t3 = F.max_pool2d(t2, [2, 2], [2, 2], [0, 0], [1, 1])\n"
      "    t4 = F.mish(t3)\n"
      "    return t4\n",
      "torch.randn(128, 64, 128, 128), torch.randn(128, 64, 3, 3), torch.randn(128), "
      "torch.randn(1)");
  const std::string c = MustEmit(p);
  ExpectInOrder(c, {"def k0_conv2d_tma_kernel(", "pid_j = pid // 1 % 2", "pid_i = pid // 2 % 63",
                    "sample = pid // 126", "p0 = pid_i * 256 + pid_j * (BLOCK_M // 2)",
                    "acc_a = tl.dot(a, b, acc_a)", "p0 += 128", "acc_b = tl.dot(a, b, acc_b)",
                    "mask_m = offs_m < 126", "acc_a += ", "# hardswish", "acc_b += ",
                    "# hardswish", "rows = tl.maximum(", "pooled = tl.maximum(even, odd",
                    "mask = (offs_m < 63) & mask_n", "# mish", "tl.store(t4_ptr",
                    "def triton_fused_operator(", "t4 = torch.empty(", "if k0_tma:",
                    "k0_conv2d_tma_kernel[(16128,)](",
                    "t2 = torch.empty((128, 128, 126, 126), device=x0.device, "
                    "dtype=inter_dtype) if not k0_tma else None",
                    "if not k0_tma:", "k0_conv2d_kernel[", "if not k0_tma:",
                    "k1_max_pool2d_kernel["});
  EXPECT_EQ(Count(c, "t4 = torch.empty("), 1);
  EXPECT_EQ(Count(c, "t2 = torch.empty("), 1);
  // A 3 x 3 pool: the convolution's output stored, the pool its own kernel's always.
  const std::string wide = MustEmit(MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = F.conv2d(x0, x1)\n"
      "    t1 = F.max_pool2d(t0, [3, 3], [3, 3], [0, 0], [1, 1])\n"
      "    return t1\n",
      "torch.randn(128, 64, 128, 128), torch.randn(128, 64, 3, 3)"));
  EXPECT_EQ(Count(wide, "pid_i * 2 + 1"), 0);
  // A channel minimum before the pool (a row tail of the convolution's kernel): no pool tail.
  const std::string tail = MustEmit(MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = F.conv2d(x0, x1)\n"
      "    t1 = torch.amin(t0, 1, True)\n"
      "    t2 = F.max_pool2d(t1, [2, 2], [2, 2], [0, 0], [1, 1])\n"
      "    return t2\n",
      "torch.randn(128, 64, 128, 128), torch.randn(128, 64, 3, 3)"));
  EXPECT_EQ(Count(tail, "pid_i * 2 + 1"), 0);
  EXPECT_EQ(Count(tail, "k1_max_pool2d_kernel["), 1);
  EXPECT_EQ(Count(tail, "if not k0_tma:\n        k1_max_pool2d_kernel"), 0);
  EXPECT_EQ(Count(wide, "if not k0_tma:\n        k1_max_pool2d_kernel"), 0);
}

TEST(CodegenTest, IntermediatesTakeTheInputsDtypeUnlessTheirRoundingCouldFail) {
  // A convolution's output read by a 3 x 3 pool's kernel: stored in the inputs' dtype (bf16
  // or fp16 in those modes, float32 in the others), as eager PyTorch stores it; bf16 only on
  // a GPU (Triton's interpreter truncates float32 to bf16).
  const auto conv_then = [](const std::string& line) {
    return MustEmit(MustParse("def fused_operator(x0, x1):\n"
                              "    t0 = F.conv2d(x0, x1)\n"
                              "    t1 = F.max_pool2d(t0, [3, 3], [3, 3], [0, 0], [1, 1])\n" +
                                  line + "    return t2\n",
                              "torch.randn(8, 16, 32, 32), torch.randn(16, 16, 3, 3)"));
  };
  const std::string pooled = conv_then("    t2 = torch.relu(t1)\n");
  ExpectInOrder(pooled, {"float_dtype = x0.dtype",
                         "inter_dtype = float_dtype if x0.device.type == \"cuda\" or "
                         "float_dtype != torch.bfloat16 else torch.float32",
                         "t0 = torch.empty((8, 16, 30, 30), device=x0.device, dtype=inter_dtype)",
                         "t2 = torch.empty((8, 16, 10, 10), device=x0.device, dtype=float_dtype)"});
  EXPECT_EQ(Count(pooled, "dtype=torch.float32)"), 0);
  // The pool passes a rounding on to a group norm, a softmax or an argmax: the convolution's
  // output stays float32, the program's output takes the inputs' dtype (the argmax's int64).
  for (const std::string& reader : {std::string("    t2 = F.group_norm(t1, 4)\n"),
                                    std::string("    t2 = torch.softmax(t1, 1)\n"),
                                    std::string("    t2 = torch.argmax(t1, 1)\n")}) {
    const std::string c = conv_then(reader);
    EXPECT_EQ(Count(c, "t0 = torch.empty((8, 16, 30, 30), device=x0.device, "
                       "dtype=torch.float32)"), 1) << reader;
    EXPECT_EQ(Count(c, "dtype=float_dtype)") + Count(c, "dtype=torch.int64)"), 1) << reader;
    EXPECT_EQ(Count(c, "inter_dtype"), 0) << reader;
  }
}

TEST(CodegenTest, TransposedConvolutionsReadShiftedRowsPerStridePhase) {
  // KernelBench L2 2's conv_transpose2d (stride 2, padding 1, output padding 1): four phases.
  // The last dim's two are computed by one program (PairsLastPhases), half a tile each, so
  // there are two launches, one per phase of H, each passing its own taps, kernel offsets and
  // output length and both W phases' taps, offsets and base positions.  Phase (1, 1) reads
  // copy rows 130 - 129 t0 - t1 for kernel offsets (2 t0, 2 t1); the copy is padded by one
  // above (129 x 129: the odd phase's last output reads input 128).
  const std::string c = MustEmit(TwoInputOp("F.conv_transpose2d(x0, x1, None, 2, 1, 1)",
                                            "torch.randn(128, 64, 128, 128), "
                                            "torch.randn(64, 64, 3, 3)"));
  ExpectInOrder(
      c, {"def k0_conv_transpose2d_tma_kernel(", "PHASE0: tl.constexpr", "TILES_P: tl.constexpr):",
          "sample = pid // TILES_P", "p0 = (pid // 1 % TILES_P) * (BLOCK_M // 2)",
          "acc_a = tl.zeros([(BLOCK_M // 2), BLOCK_N], dtype=tl.float32)",
          "for kk in tl.range(0, TAPS0 * TAPSA):",
          "a = k0_a_desc.load([sample, p0 + (BASEA + (kk // TAPSA) * -129 + (kk % TAPSA) * -1), "
          "0]).reshape((BLOCK_M // 2), BLOCK_K)",
          "b = k0_b_desc.load([0, (FIRST0 + (kk // TAPSA) * 2) * 3 + (FIRSTA + (kk % TAPSA) * 2), "
          "pid_n * BLOCK_N]).reshape(BLOCK_K, BLOCK_N)",
          "for kk in tl.range(0, TAPS0 * TAPSB):",
          "acc = tl.reshape(tl.permute(tl.join(acc_a, acc_b), [0, 2, 1]), [BLOCK_M, BLOCK_N])",
          "offs_m = p0 + tl.arange(0, BLOCK_M)[:, None] // 2", "o0 = offs_m // 129",
          "phase0 = PHASE0", "phase1 = tl.arange(0, BLOCK_M)[:, None] % 2",
          "mask_m = (o0 < OUTS0) & (phase1 + o1 * 2 < 256)", "oc2 = phase0 + o0 * 2",
          "oc3 = phase1 + o1 * 2",
          "k0_x0_clpad = torch.empty_strided((128, 64, 129, 129), (1065024, 1, 8256, 64)",
          "k0_b_desc = TensorDescriptor(k0_x1_cl, [64, 9, 64], [576, 64, 1], [64, 1, 64])",
          "k0_a_desc = TensorDescriptor(k0_x0_clpad, [128, 16641, 64], [1065024, 64, 1], "
          "[1, 64, 64])",
          "PHASE0=0, TAPS0=1, FIRST0=1, OUTS0=128, TAPSA=1, FIRSTA=1, BASEA=0, TAPSB=2, FIRSTB=0, "
          "BASEB=1, TILES_P=258",
          "PHASE0=1, TAPS0=2, FIRST0=0, OUTS0=128, TAPSA=1, FIRSTA=1, BASEA=129, TAPSB=2, "
          "FIRSTB=0, BASEB=130, TILES_P=258"});
  EXPECT_EQ(Count(c, "    if k0_tma:\n        k0_conv_transpose2d_tma_kernel[(33024,)]("), 2);
  // Every phase of the pointer kernel runs only without the TMA kernel.
  EXPECT_EQ(Count(c, "    if not k0_tma:\n        k0_conv_transpose2d_kernel["), 4);
  EXPECT_EQ(Count(c, "PHASE=0, DOT_PRECISION"), 1);
  // Stride 1 along W: no pairs, one launch per phase of H with its own numbers.
  const std::string h = MustEmit(TwoInputOp("F.conv_transpose2d(x0, x1, None, (2, 1), 1)",
                                            "torch.randn(128, 64, 128, 128), "
                                            "torch.randn(64, 64, 3, 3)"));
  EXPECT_EQ(Count(h, "tl.join("), 0);
  ExpectInOrder(h, {"for kk in tl.range(0, TAPS0 * TAPS1):",
                    "mask_m = (o0 < OUTS0) & (o1 < OUTS1)"});
  EXPECT_EQ(Count(h, "    if k0_tma:\n        k0_conv_transpose2d_tma_kernel["), 2);
}

TEST(CodegenTest, ContractionEpiloguesLoadPerChannelValuesAsRows) {
  // A (C, 1, 1) parameter added to a convolution's output is read at (offs_n, 0, 0): one row of
  // the tile under mask_n; a per-row value (M, 1) stays a full tile.
  const std::string conv = MustEmit(MustParse(
      "def fused_operator(x0, x1, x2, x3):\n"
      "    t0 = F.conv2d(x0, x1)\n"
      "    t1 = torch.mul(t0, x2)\n"
      "    t2 = torch.add(t1, x3)\n"
      "    return t2\n",
      "torch.randn(2, 8, 10, 10), torch.randn(16, 8, 3, 3), torch.randn(16, 1, 1), "
      "torch.randn(2, 1, 8, 8)"));
  // Twice each: the kernel's epilogue and its range guard's (WriteRangeGuardTile).
  EXPECT_EQ(Count(conv, "tl.load(x2_ptr + offs_n * stride_x2_0, mask=mask_n, other=0.0)"), 2);
  EXPECT_EQ(Count(conv, "tl.load(x3_ptr + mc0 * stride_x3_0 + mc1 * stride_x3_2 + mc2 * "
                        "stride_x3_3 + (offs_m + offs_n) * 0, mask=mask, other=0.0)"),
            2);
  const std::string linear = MustEmit(MustParse(
      "def fused_operator(x0, x1, x2, x3):\n"
      "    t0 = F.linear(x0, x1)\n"
      "    t1 = torch.add(t0, x2)\n"
      "    t2 = torch.mul(t1, x3)\n"
      "    return t2\n",
      "torch.randn(64, 32), torch.randn(48, 32), torch.randn(48), torch.randn(64, 1)"));
  EXPECT_EQ(Count(linear, "tl.load(x2_ptr + offs_n * stride_x2_0, mask=mask_n, other=0.0)"), 2);
  EXPECT_EQ(Count(linear, "x3_ptr + mc0 * stride_x3_0 + (offs_m + offs_n) * 0, mask=mask"), 2);
}

TEST(CodegenTest, MatmulUsesDotWithBroadcastBatch) {
  const std::string c = MustEmit(MatmulOf("torch.randn(2, 5, 24, 40), torch.randn(5, 40, 16)"));
  ExpectInOrder(c, {"# matmul: M=24 N=16 K=40 batch=10", "pid_b = pid // (num_pid_m * num_pid_n)",
                    "bc0 = (pid_b // 5)", "bc1 = pid_b % 5", "tl.dot(a, b",
                    "k0_matmul_kernel[lambda META: (triton.cdiv(24, META[\"BLOCK_M\"]) * "
                    "triton.cdiv(16, META[\"BLOCK_N\"]) * 10,)]("});
}

TEST(CodegenTest, EveryCatalogOperatorEmits) {
  for (OpId id = 0; id < static_cast<OpId>(Catalog().size()); ++id) {
    // where's bool condition: no program input is bool, so it has no one-operator program
    // (tests/frontend/test_masks.py emits and verifies it after a comparison).
    if (GetOp(id).kind != OpKind::kCompute || GetOp(id).has_bool_param()) continue;
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
  const Program p = OneOp("torch.sum(x0, 0)", "torch.randn(65536, 32768)");
  ExpectInOrder(MustEmit(p), {"pid = tl.program_id(0).to(tl.int64)",
                              "tl.arange(0, BLOCK_R).to(tl.int64)[None, :]"});
  const Program small = OneOp("torch.sum(x0, 0)", "torch.randn(64, 32)");
  EXPECT_EQ(MustEmit(small).find("tl.int64"), std::string::npos);
}

// The text of the `if CONTIG:` branch of a pointwise kernel ("" when there is none).
std::string ContiguousBranch(const std::string& text) {
  const size_t begin = text.find("    if CONTIG:\n");
  const size_t end = text.find("    else:\n", begin);
  if (begin == std::string::npos || end == std::string::npos) return "";
  return text.substr(begin, end - begin);
}

TEST(CodegenTest, PointwiseHasContiguousFastPath) {
  // A 4-D activation plus a per-channel bias: the activation and the output are addressed
  // flat under CONTIG, the bias keeps its channel coordinate, and no other coordinate is
  // computed there.  The strided path stays as the else branch.
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = torch.add(x0, x1)\n"
      "    t1 = torch.relu(t0)\n"
      "    return t1\n",
      "torch.randn(2, 4, 3, 5), torch.randn(4, 1, 1)");
  const std::string c = MustEmit(p);
  ExpectInOrder(c, {"BLOCK: tl.constexpr, CONTIG: tl.constexpr):", "mask = offs < 120",
                    "if CONTIG:", "c1 = (offs // 15) % 4", "tl.load(x0_ptr + offs, mask=mask",
                    "tl.load(x1_ptr + c1 * stride_x1_0", "tl.store(t1_ptr + offs, ", "else:",
                    "c0 = (offs // 60)", "tl.load(x0_ptr + c0 * stride_x0_0 + c1 * stride_x0_1",
                    "tl.store(t1_ptr + c0 * 60 + c1 * 15", "def triton_fused_operator(x0, x1):",
                    "contig = x0.is_contiguous()\n", "BLOCK=", "CONTIG=contig"});
  const std::string fast = ContiguousBranch(c);
  ASSERT_FALSE(fast.empty());
  for (const char* unused : {"c0 =", "c2 =", "c3 =", "stride_x0", "stride_t1"})
    EXPECT_EQ(fast.find(unused), std::string::npos) << unused << " in\n" << fast;
  EXPECT_EQ(c.find("x1.is_contiguous()"), std::string::npos);  // read through its strides
}

TEST(CodegenTest, PointwiseContiguousPathKeepsTransposedReadsStrided) {
  // x0 is square, so it has the output's shape, but the transpose reads it at swapped
  // coordinates: only x1 is addressed flat and only x1 decides the flag.
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = torch.transpose(x0, 0, 1)\n"
      "    t1 = torch.mul(t0, x1)\n"
      "    return t1\n",
      "torch.randn(6, 6), torch.randn(6, 6)");
  const std::string c = MustEmit(p);
  const std::string fast = ContiguousBranch(c);
  ExpectInOrder(fast, {"c0 = (offs // 6)", "c1 = offs % 6",
                       "tl.load(x0_ptr + c1 * stride_x0_0 + c0 * stride_x0_1",
                       "tl.load(x1_ptr + offs", "tl.store(t1_ptr + offs"});
  EXPECT_EQ(c.find("x0_ptr + offs"), std::string::npos);
  ExpectInOrder(c, {"contig = x1.is_contiguous()\n", "CONTIG=contig"});
  EXPECT_EQ(c.find("x0.is_contiguous()"), std::string::npos);
}

TEST(CodegenTest, PointwiseOfBroadcastsOnlyStoresFlatWithoutFlag) {
  // No input has the output's shape: the freshly allocated output is the only flat tensor,
  // so the kernel needs no flag and no second path.
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = torch.mul(x0, x1)\n"
      "    return t0\n",
      "torch.randn(4, 1, 8), torch.randn(3, 1)");
  const std::string c = MustEmit(p);
  EXPECT_EQ(c.find("CONTIG"), std::string::npos);
  EXPECT_EQ(c.find("is_contiguous"), std::string::npos);
  ExpectInOrder(c, {"tl.load(x0_ptr + c0 * stride_x0_0 + c2 * stride_x0_2",
                    "tl.load(x1_ptr + c1 * stride_x1_0", "tl.store(t0_ptr + offs, "});
  EXPECT_EQ(c.find("stride_t0"), std::string::npos);
}

TEST(CodegenTest, GenericPointwiseHasContiguousFastPath) {
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = torch.add(x0, x1)\n"
      "    t1 = F.softplus(t0, 2.0, 20.0)\n"
      "    return t1\n",
      "torch.randn(4, 8), torch.randn(1, 8)");
  CodegenOptions generic;
  generic.generic_shapes = true;
  const std::string c = MustEmit(p, generic);
  const std::string fast = ContiguousBranch(c);
  ExpectInOrder(fast, {"c1 = offs % x0_s1", "tl.load(x0_ptr + offs",
                       "tl.load(x1_ptr + c1 * stride_x1_1", "tl.store(t1_ptr + offs"});
  EXPECT_EQ(fast.find("c0 ="), std::string::npos);
  ExpectInOrder(c, {"else:", "c0 = (offs // x0_s1)", "tl.load(x0_ptr + c0 * stride_x0_0",
                    "(x0_s0, x0_s1) = x0.shape", "contig = x0.is_contiguous()\n", "CONTIG=contig"});
}

TEST(CodegenTest, Literals) {
  EXPECT_EQ(FloatLiteral(1.0), "1.0");
  EXPECT_EQ(FloatLiteral(0.01), "0.01");
  EXPECT_EQ(FloatLiteral(1e-5), "1e-05");
  EXPECT_EQ(FloatLiteral(-2.5), "-2.5");
  EXPECT_EQ(NextPow2(17), 32);
  EXPECT_EQ(NextPow2(1), 1);
}


// Triton's shared memory for the five paper-preset tiles the H200 reported out of resources
// (compiled for sm_90 on the CPU): a div prologue (2 A loads) on 128x128x64 in 3 stages, a
// batch_norm prologue (5) on 128x64x64 in 3 and 4, a four-operator prologue (3) on 128x128x64.
TEST(HeuristicsTest, DotSharedBytesMatchesTritonsFigures) {
  EXPECT_EQ(DotSharedBytes(128, 128, 64, 3, {2, 1}), 262144);
  EXPECT_EQ(DotSharedBytes(128, 64, 64, 3, {5, 1}), 409600);
  EXPECT_EQ(DotSharedBytes(128, 64, 64, 4, {5, 1}), 589824);
  EXPECT_EQ(DotSharedBytes(128, 128, 64, 3, {3, 1}), 327680);
  EXPECT_EQ(DotSharedBytes(128, 256, 64, 3, {2, 1}), 360448);
}

TEST(HeuristicsTest, FitSharedMemoryDropsStagesThenBlockKThenTile) {
  ContractionConfig c = ChooseContraction(4096, 4096, 4096, 1, 0);
  c.tuned = TunedTiles(c, 4096, 4096);
  ASSERT_EQ(c.launch.num_stages, 3);
  ContractionConfig plain = c;
  FitSharedMemory({1, 1}, &plain);  // 192 KB: as it was
  EXPECT_EQ(plain.launch.num_stages, 3);
  EXPECT_EQ(plain.tuned, c.tuned);

  ContractionConfig two = c;
  FitSharedMemory({2, 1}, &two);  // 256 KB in 3 stages, 160 KB in 2
  EXPECT_EQ(two.launch.num_stages, 2);
  EXPECT_EQ(two.block_k, 64);
  ASSERT_FALSE(two.tuned.empty());
  EXPECT_EQ(two.tuned[0].num_stages, 2);  // the autotuner's first is the fitted tile
  EXPECT_EQ(two.tuned[0].block_m, 128);

  ContractionConfig many = c;
  FitSharedMemory({12, 1}, &many);  // 2 stages of 128x128x64 would be 480 KB
  EXPECT_EQ(many.launch.num_stages, 2);
  EXPECT_LT(many.block_k, 64);
  EXPECT_LE(DotSharedBytes(many.block_m, many.block_n, many.block_k, 2, {12, 1}),
            kSharedMemoryBudget);
  EXPECT_EQ(many.chunk_k % many.block_k, 0);
}

TEST(CodegenTest, ContractionsFeedingErrorAmplifiersUseTheFullPrecisionSplit) {
  // Every contraction of `program` (inputs `inputs`) takes bf16x6 on the GPU.
  const auto expect_full_precision = [](const std::string& program, const std::string& inputs) {
    const std::string c = MustEmit(MustParse(program, inputs));
    EXPECT_EQ(Count(c, "\"bf16x6\" if torch.get_float32_matmul_precision()"), 1) << program;
    EXPECT_EQ(Count(c, "fp16x3"), 0) << program;
  };
  expect_full_precision(
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = torch.bmm(x0, x1)\n"
      "    t1 = torch.mul(t0, x2)\n"
      "    t2 = torch.softmax(t1, 2)\n"
      "    return t2\n",
      "torch.randn(8, 64, 32), torch.randn(8, 32, 48), torch.randn(48)");
  // Pooling passes the rounding on (paper-preset program 39: conv_transpose1d -> max_pool1d
  // -> cumprod).
  expect_full_precision(
      "def fused_operator(x0, x1):\n"
      "    t0 = F.conv_transpose1d(x0, x1)\n"
      "    t1 = F.max_pool1d(t0, 2, 1)\n"
      "    t2 = torch.cumprod(t1, -1)\n"
      "    return t2\n",
      "torch.randn(2, 32, 40), torch.randn(32, 24, 3)");
  // So does a contraction (the q/k/v projection before q @ k^T and the softmax): both kernels.
  expect_full_precision(
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = F.linear(x0, x1)\n"
      "    t1 = torch.matmul(t0, x2)\n"
      "    t2 = torch.softmax(t1, 1)\n"
      "    return t2\n",
      "torch.randn(32, 16), torch.randn(24, 16), torch.randn(24, 32)");
  // An output that an operator outside the program amplifies (a search fragment's, read by
  // another fragment's softmax: CodegenOptions::amplified_outputs).
  const Program alone = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = F.linear(x0, x1)\n"
      "    return t0\n",
      "torch.randn(32, 16), torch.randn(24, 16)");
  EXPECT_EQ(Count(MustEmit(alone), "\"fp16x3\" if torch.get_float32_matmul_precision()"), 1);
  CodegenOptions amplified;
  amplified.amplified_outputs = {"t0"};
  EXPECT_EQ(Count(MustEmit(alone, amplified), "fp16x3"), 0);
  EXPECT_EQ(Count(EmitVariants(alone, 1, false, {"t0"}).at(0), "\"bf16x6\""), 1);
  // A reduction in between ends the chain: the sum's rounding is not the bmm's.  (Over the
  // rows: a sum over the columns would go before the product, reassociate.h.)
  const std::string summed = MustEmit(
      MustParse("def fused_operator(x0, x1):\n"
                "    t0 = torch.bmm(x0, x1)\n"
                "    t1 = torch.sum(t0, 1)\n"
                "    t2 = torch.exp(t1)\n"
                "    return t2\n",
                "torch.randn(8, 64, 32), torch.randn(8, 32, 48)"));
  EXPECT_EQ(Count(summed, "\"fp16x3\" if torch.get_float32_matmul_precision()"), 1);
  // fp16x3's range guard: an overflowing tile summed again with ieee products, and stored,
  // by a function of its own, after which the program returns.
  ExpectInOrder(summed, {"@triton.jit(noinline=True)\ndef k0_bmm_kernel_ieee_tile(pid, pid_b, "
                         "pid_m, pid_n, x0_ptr, ",
                         "offs_m = pid_m * BLOCK_M", "acc = tl.zeros([BLOCK_M, BLOCK_N]",
                         "acc += tl.dot(a, b, input_precision=\"ieee\")", "tl.store(",
                         "def k0_bmm_kernel(x0_ptr, ", "elif DOT_PRECISION == \"fp16x3\":",
                         "if DOT_PRECISION == \"fp16x3\":",
                         "if tl.sum((tl.abs(acc) < float(\"inf\")).to(tl.int32)) < BLOCK_M * "
                         "BLOCK_N:",
                         "k0_bmm_kernel_ieee_tile(pid, pid_b, pid_m, pid_n, x0_ptr, ",
                         "return\n", "tl.store("});
  EXPECT_EQ(Count(summed, "input_precision=\"ieee\""), 1);
  // The call passes the kernel's parameters and constexprs, in the function's order.
  const size_t def = summed.find("def k0_bmm_kernel_ieee_tile(");
  const std::string declared = summed.substr(def, summed.find("):\n", def) - def);
  const size_t call = summed.find("    k0_bmm_kernel_ieee_tile(");
  std::string passed = summed.substr(call + 4, summed.find(")\n", call) - call - 4);
  std::string expected = declared.substr(4);
  for (const char* c : {"BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"}) {
    const std::string typed = std::string(c) + ": tl.constexpr";
    expected.replace(expected.find(typed), typed.size(), c);
  }
  EXPECT_EQ(passed, expected);
}

}  // namespace
}  // namespace drtriton::codegen

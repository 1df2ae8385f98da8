// Expected-output tests for generic-shape candidates (CodegenOptions::generic_shapes): sizes
// are runtime arguments, no shape literal is left, and one operator chain gives one text
// at every shape of the same rank and broadcast pattern.
#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "ir/build.h"
#include "ir/parse_for_tests.h"

namespace drtriton::codegen {
namespace {

std::string Generic(const Program& p) {
  CodegenOptions options;
  options.generic_shapes = true;
  auto c = EmitCandidate(p, options);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().ToString());
  return c.ok() ? c.value() : "";
}

std::string Specialized(const Program& p) {
  auto c = EmitCandidate(p);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().ToString());
  return c.ok() ? c.value() : "";
}

// Integer literals of `text` other than 0 and 1: a whole run of digits that is not part of a
// name, a float ("2.0", "1e-05") or a `.stride(d)` / `num_warps=` / `num_stages=` argument.
std::set<std::string> IntLiterals(const std::string& text) {
  std::set<std::string> found;
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) || (i > 0 && name_char(text[i - 1]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    const std::string before = text.substr(i >= 12 ? i - 12 : 0, i >= 12 ? 12 : i);
    const bool is_float =
        (i > 0 && (text[i - 1] == '.' || text[i - 1] == '-' || text[i - 1] == '+')) ||
        (j < text.size() && (text[j] == '.' || text[j] == 'e'));
    const bool skipped = before.size() >= 7 && (before.substr(before.size() - 7) == "stride(" ||
                                                before.find("num_warps=") != std::string::npos ||
                                                before.find("num_stages=") != std::string::npos);
    const std::string lit = text.substr(i, j - i);
    if (!is_float && !skipped && lit != "0" && lit != "1") found.insert(lit);
    i = j;
  }
  return found;
}

// The generic candidate of `body` at inputs `a`, checked to need no specialized fallback and
// to be the very same text at inputs `b` (same ranks and broadcast pattern, other sizes).
std::string GenericAtTwoShapes(const char* body, const char* a, const char* b) {
  const Program pa = MustParse(body, a);
  EXPECT_TRUE(GenericUnsupportedOps(pa).empty());
  const std::string text = Generic(pa);
  EXPECT_EQ(text, Generic(MustParse(body, b)));
  return text;
}

// Every `checks` fragment occurs in `text`.
void ExpectAll(const std::string& text, const std::vector<std::string>& checks) {
  for (const auto& c : checks)
    EXPECT_NE(text.find(c), std::string::npos) << "missing: " << c << "\n--- in ---\n" << text;
}

const char* kPointwise =
    "def fused_operator(x0, x1):\n"
    "    t0 = torch.add(x0, x1)\n"
    "    t1 = F.softplus(t0, 2.0, 20.0)\n"
    "    return t1\n";

TEST(CodegenGenericTest, PointwiseReadsSizesAtRunTime) {
  const Program a = MustParse(kPointwise, "torch.randn(4, 8), torch.randn(1, 8)");
  const Program b = MustParse(kPointwise, "torch.randn(30, 5), torch.randn(1, 5)");
  EXPECT_TRUE(GenericUnsupportedOps(a).empty());
  const std::string c = Generic(a);
  EXPECT_EQ(c, Generic(b));
  EXPECT_NE(Specialized(a), Specialized(b));
  ExpectAll(c, {"def k0_softplus_kernel(x0_s0, x0_s1, x0_ptr", "mask = offs < x0_s0 * x0_s1",
                "c0 = (offs // x0_s1)", "c1 = offs % x0_s1",
                "tl.load(x1_ptr + c1 * stride_x1_1",  // broadcast dim: still strides, no c0
                "(x0_s0, x0_s1) = x0.shape", "(x1_s0, x1_s1) = x1.shape",
                "assert x1_s0 == 1, \"x1 must have size 1 in dim 0\"",
                "t1 = torch.empty((x0_s0, x0_s1), device=x0.device",
                "k0_softplus_kernel[(triton.cdiv(x0_s0 * x0_s1, 1024),)](",
                "x0_s0, x0_s1, x0, x0.stride(0)", "BLOCK=1024"});
  EXPECT_EQ(c.find("assert tuple("), std::string::npos);
  EXPECT_EQ(IntLiterals(c), std::set<std::string>{"1024"});  // the block size only
}

const char* kReduction =
    "def fused_operator(x0):\n"
    "    t0 = torch.mean(x0, 1)\n"
    "    t1 = torch.sigmoid(t0)\n"
    "    return t1\n";

TEST(CodegenGenericTest, ReductionLoopsOverARuntimeRow) {
  const std::string c =
      GenericAtTwoShapes(kReduction, "torch.randn(4, 8, 3)", "torch.randn(9, 5000, 7)");
  ExpectAll(c, {"def k0_mean_kernel(x0_s0, x0_s2, x0_s1, x0_ptr",
                "# mean over x0_s1 of x0_s0 * x0_s2 rows", "row_mask = rows < x0_s0 * x0_s2",
                "rc0 = (rows // x0_s2)", "rc1 = rows % x0_s2", "r0 = pid * 0",
                "while r0 < x0_s1:", "mask = row_mask & (r < x0_s1)", "r0 += BLOCK_R",
                "total / x0_s1", "tl.sigmoid(", "BLOCK_R = min(triton.next_power_of_2(x0_s1), 64)",
                "BLOCK_O = min(triton.next_power_of_2(x0_s0 * x0_s2), 64)",
                "[(triton.cdiv(x0_s0 * x0_s2, BLOCK_O),)](", "BLOCK_O=BLOCK_O, BLOCK_R=BLOCK_R"});
  EXPECT_EQ(IntLiterals(c), std::set<std::string>{"64"});  // the block caps only
}

TEST(CodegenGenericTest, NormKeepsProgramConstantsLiteral) {
  const char* body =
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = F.group_norm(x0, 3, x1, x2, 0.001)\n"
      "    return t0\n";
  const std::string c =
      GenericAtTwoShapes(body, "torch.randn(2, 6, 4), torch.randn(6), torch.randn(6)",
                         "torch.randn(5, 9, 7), torch.randn(9), torch.randn(9)");
  ExpectAll(c, {"row_mask = rows < 3 * x0_s0", "(rc1 * (x0_s1 // 3) + r // x0_s2) * stride_x1_0",
                "+ 0.001)", "BLOCK_R = min(triton.next_power_of_2((x0_s1 // 3) * x0_s2), 8192)",
                "BLOCK_O = min(triton.next_power_of_2(3 * x0_s0), 8192 // BLOCK_R)"});
  EXPECT_EQ(IntLiterals(c), (std::set<std::string>{"3", "8192"}));  // groups, tile
}

TEST(CodegenGenericTest, LinearTakesMNKAtRunTime) {
  const char* body =
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = F.linear(x0, x1, x2)\n"
      "    t1 = torch.relu(t0)\n"
      "    return t1\n";
  const std::string c =
      GenericAtTwoShapes(body, "torch.randn(2, 4, 8), torch.randn(16, 8), torch.randn(16)",
                         "torch.randn(3, 7, 40), torch.randn(9, 40), torch.randn(9)");
  ExpectAll(c, {"# linear: M=x0_s0 * x0_s1 N=x1_s0 K=x0_s2",
                "num_pid_m = tl.cdiv(x0_s0 * x0_s1, BLOCK_M)",
                "pid_b = pid // (num_pid_m * num_pid_n)", "mask_n = offs_n < x1_s0",
                "while k0 < x0_s2:", "tl.dot(a, b, input_precision=DOT_PRECISION)", "k0 += BLOCK_K",
                "dot_precision = \"fp16x3\" if torch.get_float32_matmul_precision() == \"highest\" "
                "else \"tf32\"",
                "dot_precision = \"bf16\" if float_dtype == torch.bfloat16 else \"fp16\"",
                "if x0.device.type != \"cuda\" and dot_precision != \"fp16\":",
                "t1 = torch.empty((x0_s0, x0_s1, x1_s0)",
                "[(triton.cdiv(x0_s0 * x0_s1, 128) * triton.cdiv(x1_s0, 128),)](",
                // Runtime sizes: both operands' rows are checked (heuristics.h, kRowAlignment).
                "k0_x0_repack = x0.stride(2) == 1 and x0.stride(1) % 16 != 0",
                "(x0_s2 + 15) // 16 * 16", "k0_x1_rows_kernel[(triton.cdiv(x1_s0, 32)"});
  // GROUP_M, blocks, and the row alignment (16, 15) and the copy's BLOCK_R (32); the TF32
  // rounding's half unit and mask (4096, 4294959104: WriteProducts).
  EXPECT_EQ(IntLiterals(c), (std::set<std::string>{"8", "15", "16", "32", "64", "128", "4096",
                                                   "4294959104"}));
}

TEST(CodegenGenericTest, PoolLengthsAreComputedInTheWrapper) {
  const char* body =
      "def fused_operator(x0):\n"
      "    t0 = F.max_pool2d(x0, 3, 2, 1, 1, True)\n"
      "    t1 = torch.relu(t0)\n"
      "    return t1\n";
  const std::string c =
      GenericAtTwoShapes(body, "torch.randn(2, 3, 8, 7)", "torch.randn(4, 5, 11, 20)");
  // torch's rule with the call's own numbers, unfolded: copied, not computed.
  ExpectAll(
      c, {"(x0_s0, x0_s1, x0_s2, x0_s3) = x0.shape",
          "t0_s2 = (x0_s2 + 2 * 1 - 1 * (3 - 1) - 1 + 2 - 1) // 2 + 1",
          "if (t0_s2 - 1) * 2 >= x0_s2 + 1:", "        t0_s2 -= 1",
          "t0_s3 = (x0_s3 + 2 * 1 - 1 * (3 - 1) - 1 + 2 - 1) // 2 + 1",
          "t1 = torch.empty((x0_s0, x0_s1, t0_s2, t0_s3)",
          "row_mask = rows < x0_s0 * x0_s1 * t0_s2 * t0_s3", "ok0 = (sp0 >= 0) & (sp0 < x0_s2)"});
}

TEST(CodegenGenericTest, ConvolutionReadsKernelSizesFromItsWeight) {
  const char* body =
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = F.conv2d(x0, x1, x2, 2, 1, 1, 2)\n"
      "    t1 = torch.relu(t0)\n"
      "    return t1\n";
  const std::string c =
      GenericAtTwoShapes(body, "torch.randn(2, 4, 8, 8), torch.randn(6, 2, 3, 3), torch.randn(6)",
                         "torch.randn(3, 6, 9, 12), torch.randn(4, 3, 5, 3), torch.randn(4)");
  ExpectAll(c, {"t0_s2 = (x0_s2 + 2 * 1 - 1 * (x1_s2 - 1) - 1) // 2 + 1",
                "t0_s3 = (x0_s3 + 2 * 1 - 1 * (x1_s3 - 1) - 1) // 2 + 1",
                "t1 = torch.empty((x0_s0, x1_s0, t0_s2, t0_s3)",
                "# conv2d: M=x0_s0 * t0_s2 * t0_s3 N=(x1_s0 // 2) K=x1_s1 * x1_s2 * x1_s3 batch=2",
                "ci = bc0 * x1_s1 + ka0", "(sp0 < x0_s2)"});
}

TEST(CodegenGenericTest, ComputedUnitLengthIsAsserted) {
  // A 3x3 kernel over 3 rows: an output length of 1, a unit dim of the candidate.
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = F.conv2d(x0, x1)\n"
      "    return t0\n",
      "torch.randn(2, 3, 3, 5), torch.randn(4, 3, 3, 3)");
  EXPECT_TRUE(GenericUnsupportedOps(p).empty());
  ExpectAll(Generic(p), {"t0_s2 = (x0_s2 + 2 * 0 - 1 * (x1_s2 - 1) - 1) // 1 + 1",
                         "assert t0_s2 == 1, \"t0_s2 must be 1\"",
                         "t0 = torch.empty((x0_s0, x1_s0, 1, t0_s3)"});
}

TEST(CodegenGenericTest, TransposedConvolutionLengths) {
  const Program p = MustParse(
      "def fused_operator(x0, x1):\n"
      "    t0 = F.conv_transpose1d(x0, x1, None, 2, 1, 1, 1, 2)\n"
      "    return t0\n",
      "torch.randn(2, 3, 6), torch.randn(3, 4, 3)");
  ExpectAll(Generic(p), {"t0_s2 = (x0_s2 - 1) * 2 - 2 * 1 + 2 * (x1_s2 - 1) + 1 + 1",
                         "t0 = torch.empty((x0_s0, x1_s1, t0_s2)"});
}

TEST(CodegenGenericTest, AdaptivePoolLoopsOverARuntimeBin) {
  const char* body =
      "def fused_operator(x0):\n"
      "    t0 = F.adaptive_avg_pool2d(x0, 3)\n"
      "    return t0\n";
  const std::string c =
      GenericAtTwoShapes(body, "torch.randn(2, 3, 8, 8)", "torch.randn(4, 2, 17, 5)");
  ExpectAll(c,
            {"start0 = (oc2 * x0_s2) // 3", "end0 = ((oc2 + 1) * x0_s2 + 3 - 1) // 3",
             "while r0 < (x0_s2 // 3 + 2) * (x0_s3 // 3 + 2):", "kc0 = (r // (x0_s3 // 3 + 2))",
             "t0 = torch.empty((x0_s0, x0_s1, 3, 3)",
             "BLOCK_R = min(triton.next_power_of_2((x0_s2 // 3 + 2) * (x0_s3 // 3 + 2)), 4096)"});
}

TEST(CodegenGenericTest, HugeTensorsStaySpecialized) {
  const Program p = MustParse(
      "def fused_operator(x0):\n"
      "    t0 = torch.sum(x0, 0)\n"
      "    return t0\n",
      "torch.randn(65536, 32768)");
  EXPECT_EQ(GenericUnsupportedOps(p), std::vector<std::string>{"2^31 elements"});
  EXPECT_EQ(Generic(p), Specialized(p));
}

TEST(CodegenGenericTest, EveryCatalogOperatorEmitsGeneric) {
  for (OpId id = 0; id < static_cast<OpId>(Catalog().size()); ++id) {
    const OpInfo& op = GetOp(id);
    if (op.kind != OpKind::kCompute || op.has_bool_param()) continue;
    auto p = SingleOpProgram(id);
    ASSERT_TRUE(p.ok()) << op.name;
    const std::string c = Generic(p.value());
    const bool generic = GenericUnsupportedOps(p.value()).empty();
    EXPECT_EQ(generic, c.find("assert tuple(") == std::string::npos) << op.name;
    // The frontend's layout operators and its class loss read literal sizes (layout.h) and
    // fall back to the specialized candidate; generic mode serves synthesized programs, which
    // never hold them.  Its comparisons are elementwise and emit generic code like any other,
    // and prod is a reduction over one dim like sum (tests/teach/test_prod.py runs it).
    EXPECT_EQ(generic, !op.has(kFrontendOnly) || op.has(kElementwise) ||
                           op.rule == ShapeRule::kReduce)
        << op.name;
  }
}

TEST(CodegenGenericTest, VariantsStayGeneric) {
  const Program p = MustParse(kReduction, "torch.randn(4, 8, 3)");
  const auto vs = EmitVariants(p, 4, /*generic_shapes=*/true);
  ASSERT_GE(vs.size(), 2u);
  for (const auto& v : vs) EXPECT_NE(v.find("(x0_s0, x0_s1, x0_s2) = x0.shape"), std::string::npos);
}

}  // namespace
}  // namespace drtriton::codegen

// Parse(): exact round trips, the tolerated spellings, and every error with its line.
#include <gtest/gtest.h>

#include <string>

#include "ir/program.h"

namespace drtriton {
namespace {

constexpr const char* kCanonical =
    "import torch\n"
    "import torch.nn.functional as F\n"
    "\n"
    "def fused_operator(x0, x1):\n"
    "    t0 = torch.add(x0, x1)\n"
    "    t1 = torch.relu(t0)\n"
    "    t2 = torch.sum(t1, 1)\n"
    "    return t2\n"
    "\n"
    "def get_inputs():\n"
    "    return [torch.randn(4, 8), torch.rand(1, 8)]\n";

// Wraps body lines (already indented) into a task with x0: (4, 8), x1: (1, 8).
// The first body line is line 5.
std::string Task(const std::string& body, const std::string& returned = "t0") {
  return "import torch\nimport torch.nn.functional as F\n\ndef fused_operator(x0, x1):\n" + body +
         "    return " + returned +
         "\n\ndef get_inputs():\n    return [torch.randn(4, 8), torch.rand(1, 8)]\n";
}

Program ParseOk(const std::string& text) {
  auto program = Parse(text);
  EXPECT_TRUE(program.ok()) << program.error().ToString() << "\n" << text;
  return program.ok() ? std::move(program).value() : Program();
}

// The body line of a parsed-and-printed one-line task.
std::string PrintedLine(const std::string& line) {
  const std::string text = ParseOk(Task("    t0 = " + line + "\n")).Print();
  const size_t begin = text.find("    t0 = ");
  if (begin == std::string::npos) return "<no t0 line>";
  return text.substr(begin + 9, text.find('\n', begin) - begin - 9);
}

TEST(ParserTest, CanonicalTextRoundTripsByteForByte) {
  const Program p = ParseOk(kCanonical);
  EXPECT_EQ(p.Print(), kCanonical);
  EXPECT_EQ(p.level(), 3);
  EXPECT_EQ(p.value(p.outputs().at(0)).shape, (Shape{4}));
  EXPECT_EQ(p.nodes().at(1).line, 6);
}

TEST(ParserTest, RoundTripsMultipleOutputsAndUnusedInputs) {
  const std::string text =
      "import torch\n"
      "import torch.nn.functional as F\n"
      "\n"
      "def fused_operator(a, b, c):\n"
      "    h = torch.relu(a)\n"
      "    s = torch.sum(h, -1, True)\n"
      "    o = torch.add(s, b)\n"
      "    return h, o\n"
      "\n"
      "def get_inputs():\n"
      "    return [torch.randn(2, 3, 5), torch.rand(3, 1), torch.randn(7)]\n";
  const Program p = ParseOk(text);
  EXPECT_EQ(p.Print(), text);
  EXPECT_EQ(p.outputs().size(), 2u);
  EXPECT_EQ(p.value(p.outputs()[1]).shape, (Shape{2, 3, 1}));
}

// An embedding's indices index its second tensor, the weight: drawn within its rows.
TEST(ParserTest, EmbeddingIndicesRoundTrip) {
  const std::string text =
      "import torch\n"
      "import torch.nn.functional as F\n"
      "\n"
      "def fused_operator(x0, x1):\n"
      "    t0 = F.embedding(x0, x1)\n"
      "    return t0\n"
      "\n"
      "def get_inputs():\n"
      "    return [torch.randint(0, 10, (2, 5)), torch.randn(10, 4)]\n";
  const Program p = ParseOk(text);
  EXPECT_EQ(p.Print(), text);
  EXPECT_EQ(p.value(p.outputs()[0]).shape, (Shape{2, 5, 4}));
  std::string past = text;
  past.replace(past.find("randint(0, 10,"), 14, "randint(0, 11,");
  const auto parsed = Parse(past);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().ToString().find("'input' indexes dim 0 of size 10"), std::string::npos)
      << parsed.error().ToString();
}

TEST(ParserTest, ClassIndicesFromRandintRoundTrip) {
  const std::string text =
      "import torch\n"
      "import torch.nn.functional as F\n"
      "\n"
      "def fused_operator(x0, x1):\n"
      "    t0 = torch.log_softmax(x0, 1)\n"
      "    t1 = F.nll_loss(t0, x1, reduction='sum')\n"
      "    return t1\n"
      "\n"
      "def get_inputs():\n"
      "    return [torch.randn(4, 8), torch.randint(0, 8, (4,))]\n";
  const Program p = ParseOk(text);
  EXPECT_EQ(p.Print(), text);
  EXPECT_EQ(p.value(p.inputs()[1]).dtype, "int64");
  EXPECT_EQ(p.value(p.inputs()[1]).range, (IndexRange{0, 8}));
  // (high, size) and size= read as (0, high, size); a list as the tuple.
  for (const char* make : {"torch.randint(8, (4,))", "torch.randint(0, 8, size=(4,))",
                           "torch.randint(0, 8, [4])"}) {
    std::string other = text;
    other.replace(other.find("torch.randint(0, 8, (4,))"), 25, make);
    EXPECT_EQ(ParseOk(other).Print(), text) << make;
  }
}

// A mask passed to forward: torch.randint(0, 2, size, dtype=torch.bool), dtype bool, read
// where a comparison's result is (torch.where's condition).
TEST(ParserTest, BoolMaskInputsRoundTrip) {
  const std::string text =
      "import torch\n"
      "import torch.nn.functional as F\n"
      "\n"
      "def fused_operator(x0, x1):\n"
      "    t0 = torch.where(x1, x0, x0)\n"
      "    return t0\n"
      "\n"
      "def get_inputs():\n"
      "    return [torch.randn(4, 8), torch.randint(0, 2, (4, 8), dtype=torch.bool)]\n";
  const Program p = ParseOk(text);
  EXPECT_EQ(p.Print(), text);
  EXPECT_EQ(p.value(p.inputs()[1]).dtype, "bool");
  // Another dtype, or a range other than [0, 2), is not a mask.
  std::string wide = text;
  wide.replace(wide.find("(0, 2, "), 7, "(0, 3, ");
  EXPECT_FALSE(Parse(wide).ok());
  std::string other = text;
  other.replace(other.find("torch.bool"), 10, "torch.int8");
  EXPECT_FALSE(Parse(other).ok());
}

TEST(ParserTest, KeywordAndPositionalFormsPrintTheSame) {
  EXPECT_EQ(PrintedLine("torch.sum(x0, 1)"), "torch.sum(x0, 1)");
  EXPECT_EQ(PrintedLine("torch.sum(x0, dim=1)"), "torch.sum(x0, 1)");
  EXPECT_EQ(PrintedLine("torch.sum(x0, 1, False)"), "torch.sum(x0, 1)");
  EXPECT_EQ(PrintedLine("torch.sum(x0, dim=1, keepdim=False)"), "torch.sum(x0, 1)");
  EXPECT_EQ(PrintedLine("torch.sum(x0, keepdim=True, dim=-1)"), "torch.sum(x0, -1, True)");
  EXPECT_EQ(PrintedLine("torch.sum(input=x0, dim=(1))"), "torch.sum(x0, 1)");
  EXPECT_EQ(PrintedLine("torch.add(x0, other=x1,)"), "torch.add(x0, x1)");
  EXPECT_EQ(PrintedLine("torch.add(x1, x0)"), "torch.add(x1, x0)");
}

TEST(ParserTest, AcceptsEveryCatalogSpelling) {
  const OpInfo& relu = GetOp(FindOp("relu"));
  std::vector<std::string> spellings = relu.aliases;
  spellings.push_back(relu.torch);
  spellings.push_back(relu.spelling);
  for (const std::string& s : spellings) {
    if (s.find('.') == std::string::npos) continue;
    EXPECT_EQ(PrintedLine(s + "(x0)"), relu.spelling + "(x0)") << s;
  }
}

TEST(ParserTest, ToleratesCommentsImportsLayoutAndOrder) {
  const std::string text =
      "# a task\n"
      "import torch\n"
      "import torch.nn as nn\n"
      "from torch import nn\n"
      "import torch.nn.functional as F  # F for functional\n"
      "\r\n"
      "def get_inputs():\n"
      "    # shapes\n"
      "    return [\n"
      "        torch.randn((4, 8)),   # x0\n"
      "        torch.rand([1, 8]),\n"
      "        torch.randn(size=(3,)),\n"
      "    ]\n"
      "\n"
      "def fused_operator(x0, x1, x2,):\n"
      "\tt0 = torch.add( x0 , x1 )\r\n"
      "\n"
      "\tt1 = torch.sum(t0,\n"
      "                  1)\n"
      "\treturn (t0, t1)\n";
  const Program p = ParseOk(text);
  EXPECT_EQ(p.Print(),
            "import torch\n"
            "import torch.nn.functional as F\n"
            "\n"
            "def fused_operator(x0, x1, x2):\n"
            "    t0 = torch.add(x0, x1)\n"
            "    t1 = torch.sum(t0, 1)\n"
            "    return t0, t1\n"
            "\n"
            "def get_inputs():\n"
            "    return [torch.randn(4, 8), torch.rand(1, 8), torch.randn(3)]\n");
  EXPECT_EQ(p.nodes().at(1).line, 18);
}

TEST(ParserTest, ReadsLiteralsOfEveryKind) {
  // Through the catalog's own attribute types: find an op taking each kind and check that
  // the literal survives the round trip.  Float spellings first (leaky_relu and friends).
  for (OpId id = 0; id < static_cast<OpId>(Catalog().size()); ++id) {
    const OpInfo& op = GetOp(id);
    if (op.kind != OpKind::kCompute || op.max_arity() != 1 || op.params.size() < 2) continue;
    const Param& param = op.params[1];
    if (param.kind != ParamKind::kAttr || param.keyword_only) continue;
    if (param.attr.type != AttrType::kFloat || param.attr.strict) continue;
    bool others_optional = true;
    for (size_t k = 2; k < op.params.size(); ++k) {
      others_optional &= !op.params[k].attr.default_value.is_none() || op.params[k].attr.nullable;
    }
    if (!others_optional) continue;
    for (const char* literal : {"1e-05", ".5", "2.", "-0.25", "3"}) {
      const std::string printed = PrintedLine(op.spelling + "(x0, " + literal + ")");
      const AttrValue v = AttrValue::Float(std::strtod(literal, nullptr));
      const std::string expected = v == param.attr.default_value
                                       ? op.spelling + "(x0)"
                                       : op.spelling + "(x0, " + v.ToPython() + ")";
      EXPECT_EQ(printed, expected) << literal;
    }
    return;
  }
  GTEST_SKIP() << "no one-tensor operator with a float attribute in the catalog yet";
}

// The DESIGN.md example, byte for byte.
TEST(ParserTest, DesignDocumentExampleRoundTrips) {
  if (FindOp("F.conv2d") == kInvalidOp) GTEST_SKIP() << "conv2d not in the catalog yet";
  const std::string text =
      "import torch\n"
      "import torch.nn.functional as F\n"
      "\n"
      "def fused_operator(x0, x1, x2):\n"
      "    t0 = F.conv2d(x0, x1, None, 1, 1)\n"
      "    t1 = torch.relu(t0)\n"
      "    t2 = torch.add(t1, x2)\n"
      "    return t2\n"
      "\n"
      "def get_inputs():\n"
      "    return [torch.randn(16, 3, 32, 32), torch.randn(8, 3, 3, 3), torch.randn(1, 8, 1, 1)]\n";
  const Program p = ParseOk(text);
  EXPECT_EQ(p.Print(), text);
  EXPECT_EQ(p.value(p.outputs().at(0)).shape, (Shape{16, 8, 32, 32}));
  EXPECT_EQ(p.op_names(), (std::vector<std::string>{"conv2d", "relu", "add"}));
}

// A conv line over x0: (2, 4, 8, 8), x1: (6, 4, 3, 3), printed back.
std::string PrintedConv(const std::string& call) {
  const std::string text =
      "import torch\nimport torch.nn.functional as F\n\ndef fused_operator(x0, x1):\n"
      "    t0 = " +
      call +
      "\n    return t0\n\ndef get_inputs():\n"
      "    return [torch.randn(2, 4, 8, 8), torch.randn(6, 4, 3, 3)]\n";
  const std::string printed = ParseOk(text).Print();
  const size_t begin = printed.find("t0 = ");
  if (begin == std::string::npos) return "<no t0 line>";
  return printed.substr(begin + 5, printed.find('\n', begin) - begin - 5);
}

TEST(ParserTest, OptionalTensorsListsAndDefaultsInConvolutions) {
  if (FindOp("F.conv2d") == kInvalidOp) GTEST_SKIP() << "conv2d not in the catalog yet";
  EXPECT_EQ(PrintedConv("F.conv2d(x0, x1)"), "F.conv2d(x0, x1)");
  EXPECT_EQ(PrintedConv("F.conv2d(x0, x1, None)"), "F.conv2d(x0, x1)");
  EXPECT_EQ(PrintedConv("F.conv2d(x0, x1, None, 1, 0, 1, 1)"), "F.conv2d(x0, x1)");
  EXPECT_EQ(PrintedConv("F.conv2d(x0, x1, padding=1)"), "F.conv2d(x0, x1, None, 1, 1)");
  EXPECT_EQ(PrintedConv("torch.nn.functional.conv2d(x0, weight=x1, stride=(2, 1), bias=None)"),
            "F.conv2d(x0, x1, None, [2, 1])");
  EXPECT_EQ(PrintedConv("F.conv2d(x0, x1, groups=1, padding=[1, 1])"),
            "F.conv2d(x0, x1, None, 1, [1, 1])");
  EXPECT_EQ(PrintedConv("F.conv2d(x0, x1, dilation=2)"), "F.conv2d(x0, x1, None, 1, 0, 2)");
}

TEST(ParserTest, PerDimListsNeedOneEntryPerSpatialDim) {
  if (FindOp("F.adaptive_avg_pool2d") == kInvalidOp) GTEST_SKIP() << "no adaptive pooling yet";
  EXPECT_EQ(PrintedConv("F.conv2d(x0, x1, None, [2])"), "F.conv2d(x0, x1, None, [2])");
  EXPECT_EQ(PrintedConv("F.adaptive_avg_pool2d(x0, [3, 2])"), "F.adaptive_avg_pool2d(x0, [3, 2])");
  for (const char* bad : {"F.conv2d(x0, x1, None, [2, 2, 2])", "F.adaptive_avg_pool2d(x0, [3])",
                          "F.adaptive_avg_pool2d(x0, [])"}) {
    auto program = Parse(
        "import torch\nimport torch.nn.functional as F\n\ndef fused_operator(x0, x1):\n"
        "    t0 = " +
        std::string(bad) +
        "\n    return t0\n\ndef get_inputs():\n"
        "    return [torch.randn(2, 4, 8, 8), torch.randn(6, 4, 3, 3)]\n");
    ASSERT_FALSE(program.ok()) << bad;
    EXPECT_EQ(program.error().line, 5);
    EXPECT_NE(program.error().message.find("needs 2 entries"), std::string::npos)
        << program.error().message;
  }
}

TEST(ParserTest, KeywordOnlyParametersPrintAsKeywords) {
  const OpId gelu = FindOp("F.gelu");
  if (gelu == kInvalidOp || GetOp(gelu).attr_index("approximate") < 0) {
    GTEST_SKIP() << "gelu(approximate=...) not in the catalog yet";
  }
  EXPECT_EQ(PrintedLine("F.gelu(x0, approximate=\"tanh\")"), "F.gelu(x0, approximate='tanh')");
  EXPECT_EQ(PrintedLine("F.gelu(x0, approximate='none')"), "F.gelu(x0)");
  auto error = Parse(Task("    t0 = F.gelu(x0, 'tanh')\n"));
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error().line, 5);
  EXPECT_NE(error.error().message.find("approximate must be passed by keyword"), std::string::npos)
      << error.error().message;
}

TEST(ParserTest, NnFunctionalSpelling) {
  const std::string text =
      "import torch\nimport torch.nn as nn\n\ndef fused_operator(x0):\n"
      "    t0 = nn.functional.softmax(x0, -1)\n    return t0\n\n"
      "def get_inputs():\n    return [torch.randn(2, 3)]\n";
  if (FindOp("torch.nn.functional.softmax") == kInvalidOp) GTEST_SKIP() << "no softmax yet";
  const Program p = ParseOk(text);
  EXPECT_EQ(p.op_names(), std::vector<std::string>{"softmax"});
}

struct ErrorCase {
  const char* name;
  std::string text;
  int line;
  const char* fragment;
};

class ParseErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParseErrorTest, NamesTheLineAndTheProblem) {
  const ErrorCase& c = GetParam();
  auto program = Parse(c.text);
  ASSERT_FALSE(program.ok()) << c.text;
  EXPECT_EQ(program.error().line, c.line) << program.error().ToString();
  EXPECT_NE(program.error().message.find(c.fragment), std::string::npos)
      << "message: " << program.error().message << "\nexpected: " << c.fragment;
}

const std::string kBadHeader = "import torch\n\ndef fused_operator(x0, x1):\n";
const std::string kInputs =
    "\ndef get_inputs():\n    return [torch.randn(4, 8), torch.rand(1, 8)]\n";

INSTANTIATE_TEST_SUITE_P(
    AllKinds, ParseErrorTest,
    ::testing::Values(
        ErrorCase{"RandintWithoutSize",
                  kBadHeader + "    return x0\n\ndef get_inputs():\n"
                               "    return [torch.randn(4, 8), torch.randint(0, 8)]\n",
                  7, "takes (high, size) or (low, high, size)"},
        ErrorCase{"RandintEmptyRange",
                  kBadHeader + "    return x0\n\ndef get_inputs():\n"
                               "    return [torch.randn(4, 8), torch.randint(3, 3, (4,))]\n",
                  7, "randint needs 0 <= low < high"},
        ErrorCase{"RandintTargetsPastTheClasses",
                  kBadHeader + "    t0 = F.nll_loss(x0, x1)\n    return t0\n\n"
                               "def get_inputs():\n"
                               "    return [torch.randn(4, 8), torch.randint(0, 9, (4,))]\n",
                  4, "draws indices up to 8"},
        ErrorCase{"UnknownOperator", Task("    t0 = torch.frobnicate(x0)\n"), 5,
                  "unknown operator 'torch.frobnicate'"},
        ErrorCase{"BareOperatorName", Task("    t0 = relu(x0)\n"), 5, "unknown operator 'relu'"},
        ErrorCase{"TooManyArguments", Task("    t0 = torch.relu(x0, x1)\n"), 5,
                  "torch.relu expects 1 argument, got 2"},
        ErrorCase{"MissingArgument", Task("    t0 = torch.sum(x0)\n"), 5,
                  "torch.sum expects 2 to 3 arguments, got 1 (missing 'dim')"},
        ErrorCase{"MissingTensor", Task("    t0 = torch.add(x0)\n"), 5, "(missing 'other')"},
        ErrorCase{"UnknownKeyword", Task("    t0 = torch.sum(x0, axis=1)\n"), 5,
                  "unknown keyword 'axis' for torch.sum"},
        ErrorCase{"DuplicateArgument", Task("    t0 = torch.sum(x0, 1, dim=0)\n"), 5,
                  "multiple values for argument 'dim'"},
        ErrorCase{"PositionalAfterKeyword", Task("    t0 = torch.sum(x0, dim=1, True)\n"), 5,
                  "follows a keyword argument"},
        ErrorCase{"BadNumber", Task("    t0 = torch.sum(x0, 1x)\n"), 5, "bad literal '1x'"},
        ErrorCase{"HugeInt", Task("    t0 = torch.sum(x0, 99999999999999999999)\n"), 5,
                  "bad literal '99999999999999999999'"},
        ErrorCase{"UnterminatedString", Task("    t0 = torch.sum(x0, 'abc)\n"), 5,
                  "unterminated string"},
        ErrorCase{"QuoteInString", Task("    t0 = torch.sum(x0, \"it's\")\n"), 5,
                  "strings may not contain quotes"},
        ErrorCase{"FloatInList", Task("    t0 = torch.sum(x0, [1.5])\n"), 5,
                  "lists may hold only integers"},
        ErrorCase{"WrongAttributeType", Task("    t0 = torch.sum(x0, 1, 3)\n"), 5,
                  "'keepdim' must be bool, got 3"},
        ErrorCase{"LiteralForTensor", Task("    t0 = torch.add(x0, 2.0)\n"), 5,
                  "argument 'other' of torch.add must be a tensor name, got 2.0"},
        ErrorCase{"TensorForLiteral", Task("    t0 = torch.sum(x0, x1)\n"), 5,
                  "must be a literal, got the tensor 'x1'"},
        ErrorCase{"DimOutOfRange", Task("    t0 = torch.sum(x0, 2)\n"), 5,
                  "not a dimension of a rank-2 input"},
        ErrorCase{"UndefinedName", Task("    t0 = torch.relu(x0)\n    t1 = torch.relu(x9)\n"), 6,
                  "use of undefined name 'x9'"},
        ErrorCase{"UndefinedReturn", Task("    t0 = torch.relu(x0)\n", "t7"), 6,
                  "use of undefined name 't7'"},
        ErrorCase{"Redefinition", Task("    t0 = torch.relu(x0)\n    t0 = torch.relu(x1)\n"), 6,
                  "redefinition of 't0' (first defined on line 5)"},
        ErrorCase{"RedefinesParameter", Task("    x1 = torch.relu(x0)\n", "x1"), 5,
                  "redefinition of 'x1' (first defined on line 4)"},
        ErrorCase{"IncompatibleShapes",
                  kBadHeader + "    t0 = torch.add(x0, x1)\n    return t0\n" +
                      "\ndef get_inputs():\n    return [torch.randn(4, 8), torch.randn(3, 8)]\n",
                  4, "do not broadcast"},
        ErrorCase{"SyntaxErrorShowsText", Task("    t0 = torch.relu(x0 x1)\n"), 5,
                  "syntax error: expected ',' or ')' but found 'x1' in 't0 = torch.relu(x0 x1)'"},
        ErrorCase{"NestedCall", Task("    t0 = torch.relu(torch.relu(x0))\n"), 5,
                  "one operator per line"},
        ErrorCase{"UnexpectedCharacter", Task("    t0 = torch.relu(x0) + x1\n"), 5,
                  "unexpected character '+'"},
        ErrorCase{"UnmatchedBracket", Task("    t0 = torch.relu(x0))\n"), 5, "unmatched ')'"},
        ErrorCase{"UnclosedBracket", Task("    t0 = torch.relu(x0\n"), 5, "never closed"},
        ErrorCase{"CreateInBody", Task("    t0 = torch.randn(4, 8)\n"), 5,
                  "creates inputs; use it only in get_inputs()"},
        ErrorCase{"StatementAfterReturn",
                  kBadHeader + "    return x0\n    t0 = torch.relu(x0)\n" + kInputs, 5,
                  "statement after return"},
        ErrorCase{"MissingReturn", kBadHeader + "    t0 = torch.relu(x0)\n" + kInputs, 3,
                  "fused_operator has no return statement"},
        ErrorCase{"MissingFusedOperator", "import torch\n" + kInputs, 4,
                  "missing 'def fused_operator(...)'"},
        ErrorCase{"MissingGetInputs", kBadHeader + "    return x0\n", 4,
                  "missing 'def get_inputs()'"},
        ErrorCase{"EmptyText", "", 1, "missing 'def fused_operator(...)'"},
        ErrorCase{"GetInputsCount",
                  kBadHeader + "    return x0\n\ndef get_inputs():\n    return [torch.randn(4)]\n",
                  7, "get_inputs returns 1 tensors but fused_operator takes 2 parameters"},
        ErrorCase{"GetInputsMissingReturn", kBadHeader + "    return x0\n\ndef get_inputs():\n", 6,
                  "get_inputs has no return statement"},
        ErrorCase{"GetInputsComputes",
                  kBadHeader + "    return x0\n\ndef get_inputs():\n"
                               "    return [torch.randn(4),\n            torch.relu(4)]\n",
                  8, "get_inputs may only create tensors"},
        ErrorCase{"GetInputsBadShape",
                  kBadHeader + "    return x0\n\ndef get_inputs():\n"
                               "    return [torch.randn(4),\n            torch.randn(0, 2)]\n",
                  8, "not positive"},
        ErrorCase{"GetInputsKeyword",
                  kBadHeader + "    return x0\n\ndef get_inputs():\n"
                               "    return [torch.randn(4, dtype=torch.float16), torch.rand(2)]\n",
                  7, "unknown keyword 'dtype' for torch.randn"},
        ErrorCase{"UnsupportedImport", "import numpy as np\n" + Task(""), 1,
                  "unsupported import of 'numpy as np'"},
        ErrorCase{"UnexpectedIndentation", "    import torch\n" + Task(""), 1,
                  "unexpected indentation"},
        ErrorCase{"TopLevelStatement", "x = 3\n" + Task(""), 1, "unexpected statement 'x = 3'"},
        ErrorCase{"UnknownFunction", "def helper(x):\n    return x\n" + Task(""), 1,
                  "unexpected function 'helper'"},
        ErrorCase{"RedefinedFunction", Task("    t0 = torch.relu(x0)\n") + kInputs, 11,
                  "redefinition of get_inputs (first defined on line 8)"},
        ErrorCase{"DuplicateParameter", "def fused_operator(x0, x0):\n    return x0\n" + kInputs, 1,
                  "redefinition of parameter 'x0'"},
        ErrorCase{"ReservedParameter", "def fused_operator(torch, x1):\n    return x1\n" + kInputs,
                  1, "'torch' cannot name a parameter"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

}  // namespace
}  // namespace drtriton

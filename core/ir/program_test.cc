// Building programs through the API: every check of AddInput/AddNode, the cost model
// (flops, bytes, unfused_bytes), SingleOpProgram and CanonicalKey.
#include "ir/program.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "ir/build.h"

namespace drtriton {
namespace {

OpId Op(const char* name) {
  const OpId id = FindOp(name);
  EXPECT_NE(id, kInvalidOp) << name << " is missing from the catalog";
  return id;
}

// x0: (4, 8) randn, x1: (1, 8) rand.
Program TwoInputs() {
  Program p;
  EXPECT_TRUE(p.AddInput("x0", {4, 8}, Op("randn")).ok());
  EXPECT_TRUE(p.AddInput("x1", {1, 8}, Op("rand")).ok());
  return p;
}

ValueId X(const Program& p, int k) { return p.inputs().at(static_cast<size_t>(k)); }

void ExpectError(const Result<ValueId>& r, const std::string& fragment) {
  ASSERT_FALSE(r.ok()) << "expected an error containing: " << fragment;
  EXPECT_NE(r.error().message.find(fragment), std::string::npos) << r.error().message;
}

TEST(ProgramTest, BuildsAndPrintsAChain) {
  Program p = TwoInputs();
  auto t0 = p.AddNode(Op("add"), {X(p, 0), X(p, 1)}, {}, "t0");
  ASSERT_TRUE(t0.ok()) << t0.error().ToString();
  auto t1 = p.AddNode(Op("relu"), {t0.value()}, {}, "t1");
  ASSERT_TRUE(t1.ok());
  auto t2 = p.AddNode(Op("sum"), {t1.value()}, {AttrValue::Int(-1), AttrValue::Bool(true)}, "t2");
  ASSERT_TRUE(t2.ok()) << t2.error().ToString();
  p.SetOutputs({t1.value(), t2.value()});

  EXPECT_EQ(p.value(t0.value()).shape, (Shape{4, 8}));
  EXPECT_EQ(p.value(t2.value()).shape, (Shape{4, 1}));
  EXPECT_EQ(p.value(t2.value()).dtype, "float32");
  EXPECT_EQ(p.value(t2.value()).producer.index, 2);
  EXPECT_EQ(p.level(), 3);
  EXPECT_EQ(p.op_names(), (std::vector<std::string>{"add", "relu", "sum"}));
  EXPECT_EQ(p.FindValue("t1"), t1.value());
  EXPECT_FALSE(p.FindValue("t9").valid());
  EXPECT_EQ(p.Print(),
            "import torch\n"
            "import torch.nn.functional as F\n"
            "\n"
            "def fused_operator(x0, x1):\n"
            "    t0 = torch.add(x0, x1)\n"
            "    t1 = torch.relu(t0)\n"
            "    t2 = torch.sum(t1, -1, True)\n"
            "    return t1, t2\n"
            "\n"
            "def get_inputs():\n"
            "    return [torch.randn(4, 8), torch.rand(1, 8)]\n");
}

TEST(ProgramTest, DropsTrailingDefaultArguments) {
  Program p = TwoInputs();
  auto t0 = p.AddNode(Op("sum"), {X(p, 0)}, {AttrValue::Int(0), AttrValue::Bool(false)}, "t0");
  ASSERT_TRUE(t0.ok());
  p.SetOutputs({t0.value()});
  EXPECT_NE(p.Print().find("    t0 = torch.sum(x0, 0)\n"), std::string::npos) << p.Print();
}

TEST(ProgramTest, CostModel) {
  Program p = TwoInputs();
  auto t0 = p.AddNode(Op("add"), {X(p, 0), X(p, 1)}, {}, "t0");
  auto t1 = p.AddNode(Op("relu"), {t0.value()}, {}, "t1");
  auto t2 = p.AddNode(Op("sum"), {t1.value()}, {AttrValue::Int(1), AttrValue::Bool(false)}, "t2");
  ASSERT_TRUE(t2.ok());
  p.SetOutputs({t2.value()});
  // add and relu: one per output element (32); sum: one per input element (32).
  EXPECT_DOUBLE_EQ(p.flops(), 32 + 32 + 32);
  // Fused: read x0 (32) and x1 (8), write t2 (4), float32.
  EXPECT_DOUBLE_EQ(p.bytes(), (32 + 8 + 4) * 4);
  // Unfused: add 32+8 -> 32, relu 32 -> 32, sum 32 -> 4.
  EXPECT_DOUBLE_EQ(p.unfused_bytes(), ((32 + 8 + 32) + (32 + 32) + (32 + 4)) * 4);
}

TEST(ProgramTest, BytesCountEachValueOnce) {
  Program p = TwoInputs();
  auto t0 = p.AddNode(Op("relu"), {X(p, 0)}, {}, "t0");
  p.SetOutputs({t0.value(), t0.value(), X(p, 1)});
  EXPECT_DOUBLE_EQ(p.bytes(), (32 + 8 + 32) * 4);
}

TEST(ProgramTest, IndexResultsAreInt64AndCostEightBytes) {
  const OpId argmax = FindOp("argmax");
  if (argmax == kInvalidOp) GTEST_SKIP() << "argmax not in the catalog yet";
  Program p = TwoInputs();
  auto t0 = p.AddNode(argmax, {X(p, 0)}, {AttrValue::Int(1), AttrValue::Bool(false)}, "t0");
  ASSERT_TRUE(t0.ok()) << t0.error().ToString();
  EXPECT_EQ(p.value(t0.value()).dtype, "int64");
  p.SetOutputs({t0.value()});
  EXPECT_DOUBLE_EQ(p.bytes(), (32 + 8) * 4 + 4 * 8);
  ExpectError(p.AddNode(Op("relu"), {t0.value()}, {}, "t1"), "int64");
}

TEST(ProgramTest, ComparisonsAreBoolAndOnlyWhereReadsThem) {
  Program p = TwoInputs();
  auto mask = p.AddNode(Op("gt"), {X(p, 0), X(p, 0)}, {}, "t0");
  ASSERT_TRUE(mask.ok()) << mask.error().ToString();
  EXPECT_EQ(p.value(mask.value()).dtype, "bool");
  auto picked = p.AddNode(Op("where"), {mask.value(), X(p, 0), X(p, 1)}, {}, "t1");
  ASSERT_TRUE(picked.ok()) << picked.error().ToString();
  EXPECT_EQ(p.value(picked.value()).dtype, "float32");
  p.SetOutputs({mask.value(), picked.value()});
  const double x0 = NumElements(p.value(X(p, 0)).shape), x1 = NumElements(p.value(X(p, 1)).shape);
  const double out = NumElements(p.value(picked.value()).shape);
  EXPECT_DOUBLE_EQ(p.bytes(), (x0 + x1) * 4 + x0 * 1 + out * 4);
  ExpectError(p.AddNode(Op("relu"), {mask.value()}, {}, "t2"), "bool");
  ExpectError(p.AddNode(Op("where"), {X(p, 0), X(p, 0), X(p, 1)}, {}, "t2"), "takes bool");
  ExpectError(p.AddNode(Op("where"), {mask.value(), mask.value(), X(p, 1)}, {}, "t2"), "bool");
}

TEST(ProgramTest, LogicalNotReadsAndGivesBool) {
  Program p = TwoInputs();
  auto mask = p.AddNode(Op("eq"), {X(p, 0), X(p, 1)}, {}, "t0");
  ASSERT_TRUE(mask.ok()) << mask.error().ToString();
  auto negated = p.AddNode(Op("logical_not"), {mask.value()}, {}, "t1");
  ASSERT_TRUE(negated.ok()) << negated.error().ToString();
  EXPECT_EQ(p.value(negated.value()).dtype, "bool");
  EXPECT_EQ(p.value(negated.value()).shape, p.value(mask.value()).shape);
  ExpectError(p.AddNode(Op("logical_not"), {X(p, 0)}, {}, "t2"), "takes bool");
}

TEST(ProgramTest, ClassIndicesAreInt64InputsThatOnlyNllLossReads) {
  Program p;
  ASSERT_TRUE(p.AddInput("x0", {6, 10}, Op("randn")).ok());
  auto target = p.AddInput("x1", {6}, Op("torch.randint"), {0, 10});
  ASSERT_TRUE(target.ok()) << target.error().ToString();
  EXPECT_EQ(p.value(target.value()).dtype, "int64");
  const std::vector<AttrValue> mean = {AttrValue::Int(-100), AttrValue::String("mean")};
  auto lsm = p.AddNode(Op("log_softmax"), {X(p, 0)}, {AttrValue::Int(1)}, "t0");
  ASSERT_TRUE(lsm.ok());
  auto loss = p.AddNode(Op("nll_loss"), {lsm.value(), target.value()}, mean, "t1");
  ASSERT_TRUE(loss.ok()) << loss.error().ToString();
  EXPECT_EQ(p.value(loss.value()).shape, Shape{});
  EXPECT_EQ(p.value(loss.value()).dtype, "float32");
  p.SetOutputs({loss.value()});
  EXPECT_EQ(p.Print(),
            "import torch\n"
            "import torch.nn.functional as F\n"
            "\n"
            "def fused_operator(x0, x1):\n"
            "    t0 = torch.log_softmax(x0, 1)\n"
            "    t1 = F.nll_loss(t0, x1)\n"
            "    return t1\n"
            "\n"
            "def get_inputs():\n"
            "    return [torch.randn(6, 10), torch.randint(0, 10, (6,))]\n");
  EXPECT_DOUBLE_EQ(p.bytes(), 60.0 * 4 + 6 * 8 + 4);
  // int64 only where indices go, and floats never there.
  ExpectError(p.AddNode(Op("relu"), {target.value()}, {}, "t2"), "takes float32");
  ExpectError(p.AddNode(Op("nll_loss"), {X(p, 0), X(p, 0)}, mean, "t2"), "takes int64");
  // Indices past the dim they index would read past it.
  auto wide = p.AddInput("x2", {6}, Op("torch.randint"), {0, 11});
  ASSERT_TRUE(wide.ok());
  ExpectError(p.AddNode(Op("nll_loss"), {X(p, 0), wide.value()}, mean, "t2"),
              "draws indices up to 10, but 'target' indexes dim 1 of size 10");
  ExpectError(p.AddInput("x3", {6}, Op("torch.randint"), {0, 0}), "0 <= low < high");
  ExpectError(p.AddInput("x4", {6}, Op("randn"), {0, 4}), "only torch.randint");
}

TEST(ProgramTest, AddInputChecks) {
  Program p;
  ExpectError(p.AddInput("x0", {2, 3}, Op("relu")), "create operator");
  ExpectError(p.AddInput("x0", {2, 3}, kInvalidOp), "create operator");
  ExpectError(p.AddInput("x0", {2, 0}, Op("randn")), "not positive");
  ExpectError(p.AddInput("x0", {-1}, Op("randn")), "not positive");
  ExpectError(p.AddInput("x0", {}, Op("randn")), "at least one dimension");
  ExpectError(p.AddInput("x0", {1 << 30, 1 << 30, 1 << 30}, Op("randn")), "2^40");
  ExpectError(p.AddInput("torch", {2}, Op("randn")), "cannot name");
  ExpectError(p.AddInput("2x", {2}, Op("randn")), "cannot name");
  ExpectError(p.AddInput("def", {2}, Op("randn")), "cannot name");
  ASSERT_TRUE(p.AddInput("x0", {2}, Op("randn")).ok());
  ExpectError(p.AddInput("x0", {2}, Op("randn")), "redefinition of 'x0'");
  EXPECT_EQ(p.inputs().size(), 1u);
}

TEST(ProgramTest, AddNodeRejectsWrongOperatorsAndArity) {
  Program p = TwoInputs();
  ExpectError(p.AddNode(Op("randn"), {}, {AttrValue::IntList({2})}, "t0"), "get_inputs");
  ExpectError(p.AddNode(kInvalidOp, {X(p, 0)}, {}, "t0"), "unknown operator");
  ExpectError(p.AddNode(Op("relu"), {X(p, 0), X(p, 1)}, {}, "t0"), "tensor");
  ExpectError(p.AddNode(Op("relu"), {}, {}, "t0"), "tensor");
  ExpectError(p.AddNode(Op("relu"), {ValueId{}}, {}, "t0"), "is required");
  ExpectError(p.AddNode(Op("relu"), {ValueId{57}}, {}, "t0"), "not a value of this program");
  ExpectError(p.AddNode(Op("sum"), {X(p, 0)}, {AttrValue::Int(1)}, "t0"), "attribute");
  EXPECT_EQ(p.level(), 0);
}

TEST(ProgramTest, AddNodeChecksAttributes) {
  Program p = TwoInputs();
  const OpId sum = Op("sum");
  ExpectError(p.AddNode(sum, {X(p, 0)}, {AttrValue::Bool(true), AttrValue::Bool(false)}, "t0"),
              "'dim' must be int");
  ExpectError(p.AddNode(sum, {X(p, 0)}, {AttrValue::Int(1), AttrValue::Int(1)}, "t0"),
              "'keepdim' must be bool");
  ExpectError(p.AddNode(sum, {X(p, 0)}, {AttrValue::None(), AttrValue::Bool(false)}, "t0"),
              "'dim' is required");
  ExpectError(p.AddNode(sum, {X(p, 0)}, {AttrValue::Int(2), AttrValue::Bool(false)}, "t0"),
              "not a dimension of a rank-2 input");
  ExpectError(p.AddNode(sum, {X(p, 0)}, {AttrValue::Int(-3), AttrValue::Bool(false)}, "t0"),
              "not a dimension");
  EXPECT_TRUE(p.AddNode(sum, {X(p, 0)}, {AttrValue::Int(-2), AttrValue::Bool(false)}, "t0").ok());
}

TEST(ProgramTest, AddNodeAcceptsAnIntWhereAFloatIsExpected) {
  // Any operator with a loose float attribute will do (leaky_relu's negative_slope, ...).
  for (OpId id = 0; id < static_cast<OpId>(Catalog().size()); ++id) {
    const OpInfo& op = GetOp(id);
    if (op.kind != OpKind::kCompute) continue;
    const std::vector<int> attr_params = op.attr_param_indices();
    for (size_t k = 0; k < attr_params.size(); ++k) {
      const AttrSpec& spec = op.params[static_cast<size_t>(attr_params[k])].attr;
      if (spec.type != AttrType::kFloat || spec.strict) continue;
      auto program = SingleOpProgram(id);
      ASSERT_TRUE(program.ok()) << program.error().ToString();
      Program p = program.value();
      const Node node = p.nodes().at(0);
      std::vector<AttrValue> attrs = node.attrs;
      attrs[k] = AttrValue::Int(1);
      auto t1 = p.AddNode(id, node.tensors, attrs, "t1");
      ASSERT_TRUE(t1.ok()) << op.name << ": " << t1.error().ToString();
      EXPECT_EQ(p.nodes().back().attrs[k], AttrValue::Float(1.0)) << op.name;
      return;
    }
  }
  GTEST_SKIP() << "no operator with a float attribute in the catalog yet";
}

TEST(ProgramTest, AddNodeChecksShapesRankAndNames) {
  Program p;
  ASSERT_TRUE(p.AddInput("x0", {4, 8}, Op("randn")).ok());
  ASSERT_TRUE(p.AddInput("x1", {3, 8}, Op("randn")).ok());
  ASSERT_TRUE(p.AddInput("x2", {5}, Op("randn")).ok());
  ExpectError(p.AddNode(Op("add"), {X(p, 0), X(p, 1)}, {}, "t0", 7), "broadcast");
  EXPECT_EQ(p.AddNode(Op("add"), {X(p, 0), X(p, 1)}, {}, "t0", 7).error().line, 7);

  // sum of a rank-1 tensor is a scalar; sum of a scalar is outside sum's rank bounds.
  auto t0 = p.AddNode(Op("sum"), {X(p, 2)}, {AttrValue::Int(0), AttrValue::Bool(false)}, "t0");
  ASSERT_TRUE(t0.ok()) << t0.error().ToString();
  EXPECT_TRUE(p.value(t0.value()).shape.empty());
  ExpectError(p.AddNode(Op("sum"), {t0.value()}, {AttrValue::Int(0), AttrValue::Bool(false)}, "t1"),
              "rank");

  ExpectError(p.AddNode(Op("relu"), {X(p, 0)}, {}, "x0"), "redefinition of 'x0'");
  ExpectError(p.AddNode(Op("relu"), {X(p, 0)}, {}, "t0"), "redefinition of 't0'");
  ExpectError(p.AddNode(Op("relu"), {X(p, 0)}, {}, "F"), "cannot name");
  ExpectError(p.AddNode(Op("relu"), {X(p, 0)}, {}, ""), "cannot name");
  EXPECT_EQ(p.level(), 1);
  EXPECT_EQ(p.values().size(), 4u);
}

TEST(BuildTest, SingleOpProgramForEveryComputeOperator) {
  int built = 0;
  for (OpId id = 0; id < static_cast<OpId>(Catalog().size()); ++id) {
    const OpInfo& op = GetOp(id);
    if (op.kind != OpKind::kCompute) {
      EXPECT_FALSE(SingleOpProgram(id).ok()) << op.name;
      continue;
    }
    auto program = SingleOpProgram(id);
    if (op.has_bool_param()) {
      EXPECT_FALSE(program.ok()) << op.name << ": no program input is bool";
      continue;
    }
    ASSERT_TRUE(program.ok()) << op.name << ": " << program.error().ToString();
    const Program& p = program.value();
    EXPECT_EQ(p.level(), 1);
    EXPECT_EQ(p.op_names(), std::vector<std::string>{op.name});
    for (size_t k = 0; k < p.inputs().size(); ++k) {
      EXPECT_EQ(p.value(p.inputs()[k]).name, "x" + std::to_string(k));
    }
    const std::string text = p.Print();
    auto reparsed = Parse(text);
    ASSERT_TRUE(reparsed.ok()) << op.name << ": " << reparsed.error().ToString() << "\n" << text;
    EXPECT_EQ(reparsed.value().Print(), text);
    EXPECT_EQ(CanonicalKey(reparsed.value()), CanonicalKey(p));
    ++built;
  }
  EXPECT_GE(built, 3);
  EXPECT_FALSE(SingleOpProgram(kInvalidOp).ok());
}

TEST(BuildTest, SingleOpProgramUsesRandForPositiveInputs) {
  for (OpId id = 0; id < static_cast<OpId>(Catalog().size()); ++id) {
    const OpInfo& op = GetOp(id);
    if (op.kind != OpKind::kCompute || op.has_bool_param()) continue;
    auto program = SingleOpProgram(id);
    ASSERT_TRUE(program.ok()) << op.name;
    const std::vector<int> tensor_params = op.tensor_param_indices();
    const Node& node = program.value().nodes().at(0);
    for (size_t k = 0; k < node.tensors.size(); ++k) {
      if (!node.tensors[k].valid()) continue;
      const Param& param = op.params[static_cast<size_t>(tensor_params[k])];
      const bool positive = param.positive || op.has(kPositiveInput);
      const char* create = param.index_dim >= 0 ? "randint" : positive ? "rand" : "randn";
      EXPECT_EQ(GetOp(program.value().value(node.tensors[k]).create_op).name, create)
          << op.name << " " << param.name;
    }
  }
}

TEST(BuildTest, InSynthDomainSeparatesSampledFromMerelyValid) {
  Program p = TwoInputs();
  auto t0 = p.AddNode(Op("relu"), {X(p, 0)}, {}, "t0");
  ASSERT_TRUE(t0.ok());
  EXPECT_TRUE(InSynthDomain(p));
  const OpId leaky = FindOp("F.leaky_relu");
  if (leaky == kInvalidOp) GTEST_SKIP() << "leaky_relu not in the catalog yet";
  const AttrSpec& slope = GetOp(leaky).params.at(1).attr;
  if (slope.strict || slope.domain != AttrDomain::kChoices) GTEST_SKIP() << "slope is not loose";
  std::vector<AttrValue> attrs = SingleOpProgram(leaky).value().nodes().at(0).attrs;
  attrs.at(0) = AttrValue::Float(0.0625);  // a slope a real model might use
  ASSERT_TRUE(p.AddNode(leaky, {t0.value()}, attrs, "t1").ok());
  EXPECT_FALSE(InSynthDomain(p));
}

TEST(BuildTest, CanonicalKeyIgnoresNamesOnly) {
  auto build = [](const char* a, const char* b, const char* c, int64_t dim) {
    Program p;
    auto x = p.AddInput(a, {4, 8}, FindOp("randn"));
    auto y = p.AddInput(b, {4, 8}, FindOp("randn"));
    auto s = p.AddNode(FindOp("add"), {x.value(), y.value()}, {}, c);
    auto r = p.AddNode(FindOp("sum"), {s.value()}, {AttrValue::Int(dim), AttrValue::Bool(false)},
                       std::string(c) + "_sum");
    p.SetOutputs({r.value()});
    return p;
  };
  const std::string key = CanonicalKey(build("x0", "x1", "t0", 1));
  EXPECT_EQ(CanonicalKey(build("a", "b", "c", 1)), key);
  EXPECT_NE(CanonicalKey(build("x0", "x1", "t0", 0)), key);

  // Swapping which input feeds which operand is a different program.
  Program swapped;
  auto x = swapped.AddInput("x0", {4, 8}, FindOp("randn"));
  auto y = swapped.AddInput("x1", {4, 8}, FindOp("rand"));
  auto s = swapped.AddNode(FindOp("add"), {x.value(), y.value()}, {}, "t0");
  swapped.SetOutputs({s.value()});
  Program other;
  auto x2 = other.AddInput("x0", {4, 8}, FindOp("randn"));
  auto y2 = other.AddInput("x1", {4, 8}, FindOp("rand"));
  auto s2 = other.AddNode(FindOp("add"), {y2.value(), x2.value()}, {}, "t0");
  other.SetOutputs({s2.value()});
  EXPECT_NE(CanonicalKey(swapped), CanonicalKey(other));
}

TEST(BuildTest, CanonicallyNamedPrintsOneTextPerKey) {
  auto build = [](const char* a, const char* b, const char* c) {
    Program p;
    auto x = p.AddInput(a, {4, 8}, FindOp("randn"));
    auto y = p.AddInput(b, {4, 8}, FindOp("randn"));
    auto s = p.AddNode(FindOp("add"), {y.value(), x.value()}, {}, c);
    auto r = p.AddNode(FindOp("sum"), {s.value()}, {AttrValue::Int(1), AttrValue::Bool(false)},
                       std::string(c) + "_sum");
    p.SetOutputs({r.value(), s.value()});
    return p;
  };
  const Program step3 = build("t15", "t13", "t18"), step2 = build("t8", "t6", "t11");
  EXPECT_NE(step3.Print(), step2.Print());
  const Program named = CanonicallyNamed(step3);
  EXPECT_EQ(named.Print(), CanonicallyNamed(step2).Print());
  EXPECT_EQ(CanonicalKey(named), CanonicalKey(step3));
  EXPECT_NE(named.Print().find("def fused_operator(x0, x1):"), std::string::npos);
  EXPECT_NE(named.Print().find("t0 = torch.add(x1, x0)"), std::string::npos);
  EXPECT_NE(named.Print().find("return t1, t0"), std::string::npos);
}

}  // namespace
}  // namespace drtriton

// The catalog as data: sizes, names, lookups and every entry's example.
#include "catalog/catalog.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace drtriton {
namespace {

OpArgs ExampleArgs(const OpInfo& op) {
  OpArgs args;
  for (const Shape& s : op.example.inputs) args.tensors.emplace_back(s);
  args.attrs = op.example.attrs;
  return args;
}

TEST(CatalogTest, HasAtLeast61Entries) { EXPECT_GE(Catalog().size(), 61u); }

TEST(CatalogTest, NamesAndSpellingsAreUnique) {
  std::set<std::string> names, keys;
  for (const OpInfo& op : Catalog()) {
    EXPECT_TRUE(names.insert(op.name).second) << op.name;
    // Every lookup key (name, torch, spelling, alias) names exactly one operator.
    std::set<std::string> own = {op.name, op.torch, op.spelling};
    own.insert(op.aliases.begin(), op.aliases.end());
    for (const auto& key : own) EXPECT_TRUE(keys.insert(key).second) << key;
  }
}

TEST(CatalogTest, FindOpFindsEveryKey) {
  for (size_t k = 0; k < Catalog().size(); ++k) {
    const OpInfo& op = Catalog()[k];
    const auto id = static_cast<OpId>(k);
    EXPECT_EQ(FindOp(op.name), id);
    EXPECT_EQ(FindOp(op.torch), id) << op.torch;
    EXPECT_EQ(FindOp(op.spelling), id) << op.spelling;
    for (const auto& alias : op.aliases) EXPECT_EQ(FindOp(alias), id) << alias;
  }
  EXPECT_EQ(FindOp("F.conv2d"), FindOp("conv2d"));
  EXPECT_EQ(FindOp("torch.conv2d"), FindOp("conv2d"));
  EXPECT_EQ(FindOp("torch.nn.functional.relu"), FindOp("torch.relu"));
  EXPECT_EQ(FindOp("F.softmax"), FindOp("softmax"));
  EXPECT_EQ(FindOp("torch.nope"), kInvalidOp);
  EXPECT_EQ(FindOp(""), kInvalidOp);
}

TEST(CatalogTest, CoversThePaperOperators) {
  const char* kRequired[] = {"torch.matmul",    "torch.bmm",     "F.linear",
                             "torch.transpose", "torch.add",     "torch.sub",
                             "torch.mul",       "torch.div",     "torch.maximum",
                             "torch.minimum",   "torch.pow",     "torch.clamp",
                             "torch.relu",      "F.leaky_relu",  "torch.sigmoid",
                             "torch.tanh",      "F.gelu",        "torch.selu",
                             "F.elu",           "F.hardsigmoid", "F.hardswish",
                             "F.hardtanh",      "F.softplus",    "F.mish",
                             "F.silu",          "torch.exp",     "torch.log",
                             "torch.abs",       "torch.sqrt",    "torch.neg",
                             "torch.sum",       "torch.mean",    "torch.amax",
                             "torch.amin",      "torch.argmax",  "torch.argmin",
                             "torch.logsumexp", "torch.softmax", "torch.log_softmax",
                             "torch.cumsum",    "torch.cumprod", "F.batch_norm",
                             "F.layer_norm",    "F.group_norm",  "F.instance_norm",
                             "torch.randn",     "torch.rand"};
  for (const char* spelling : kRequired) EXPECT_NE(FindOp(spelling), kInvalidOp) << spelling;
  for (const char* stem :
       {"F.max_pool", "F.avg_pool", "F.adaptive_avg_pool", "F.conv", "F.conv_transpose"})
    for (int n = 1; n <= 3; ++n) {
      const std::string spelling = stem + std::to_string(n) + "d";
      EXPECT_NE(FindOp(spelling), kInvalidOp) << spelling;
    }
}

TEST(CatalogTest, EntriesAreWellFormed) {
  for (const OpInfo& op : Catalog()) {
    SCOPED_TRACE(op.name);
    EXPECT_FALSE(op.doc.empty());
    EXPECT_EQ(op.torch.rfind("torch.", 0), 0u);
    EXPECT_LE(op.min_rank, op.max_rank);
    EXPECT_FALSE(ShapeRuleConstraints(op.rule).empty());
    EXPECT_EQ(op.example.inputs.size(), static_cast<size_t>(op.max_arity()));
    ASSERT_EQ(op.example.attrs.size(), static_cast<size_t>(op.num_attrs()));
    if (op.kind == OpKind::kCompute) {
      EXPECT_GE(op.arity(), 1);
    }
    const bool spatial = op.rule == ShapeRule::kConv || op.rule == ShapeRule::kConvTranspose ||
                         op.rule == ShapeRule::kPool || op.rule == ShapeRule::kAdaptivePool;
    EXPECT_EQ(spatial, op.spatial_dims > 0);
    for (const Param& p : op.params) {
      if (p.kind != ParamKind::kAttr) continue;
      // A domain the synthesizer can sample from.
      if (p.attr.domain == AttrDomain::kChoices) {
        EXPECT_FALSE(p.attr.choices.empty()) << p.name;
      }
      if (p.attr.domain == AttrDomain::kIntRange) {
        EXPECT_LE(p.attr.min, p.attr.max) << p.name;
      }
      // Defaults are values the attribute accepts.
      if (!p.attr.default_value.is_none()) {
        EXPECT_TRUE(p.attr.Accepts(p.attr.default_value)) << p.name;
      }
    }
  }
}

TEST(CatalogTest, EveryExampleInfersAShapeInsideTheSynthDomain) {
  for (const OpInfo& op : Catalog()) {
    SCOPED_TRACE(op.name);
    const OpArgs args = ExampleArgs(op);
    auto shape = InferShape(op, args);
    ASSERT_TRUE(shape.ok()) << shape.error().ToString();
    EXPECT_TRUE(InSynthDomain(op, args));
    if (op.kind == OpKind::kCompute) {
      const int rank = static_cast<int>(op.example.inputs[0].size());
      EXPECT_GE(rank, op.min_rank);
      EXPECT_LE(rank, op.max_rank);
    }
    EXPECT_GE(CountFlops(op, args, shape.value()), 0.0);
    EXPECT_GT(CountBytes(op, args, shape.value()), 0.0);
  }
}

TEST(CatalogTest, SynthDomainIsNarrowerThanWhatTheIRAccepts) {
  const OpInfo& conv = GetOp(FindOp("conv2d"));
  OpArgs args = ExampleArgs(conv);
  args.attrs[0] = AttrValue::Int(4);  // stride 4: real models use it, the synthesizer not
  EXPECT_TRUE(InferShape(conv, args).ok());
  EXPECT_FALSE(InSynthDomain(conv, args));
  args.attrs[0] = AttrValue::IntList({1, 2});  // per-dim list inside the domain
  EXPECT_TRUE(InSynthDomain(conv, args));

  const OpInfo& leaky = GetOp(FindOp("F.leaky_relu"));
  args = ExampleArgs(leaky);
  args.attrs[0] = AttrValue::Float(0.05);
  EXPECT_TRUE(InferShape(leaky, args).ok());
  EXPECT_FALSE(InSynthDomain(leaky, args));
  args.attrs[0] = AttrValue::Float(0.2);
  EXPECT_TRUE(InSynthDomain(leaky, args));
}

TEST(CatalogTest, EveryRuleHasConstraintsAndAName) {
  for (ShapeRule rule :
       {ShapeRule::kCreate, ShapeRule::kBroadcast, ShapeRule::kReduce, ShapeRule::kReduceAll,
        ShapeRule::kSameAsInput, ShapeRule::kMatmul, ShapeRule::kBmm, ShapeRule::kLinear,
        ShapeRule::kTranspose, ShapeRule::kConv, ShapeRule::kConvTranspose, ShapeRule::kPool,
        ShapeRule::kAdaptivePool}) {
    EXPECT_FALSE(ShapeRuleConstraints(rule).empty());
    EXPECT_NE(ShapeRuleName(rule), "unknown");
  }
}

TEST(CatalogTest, TraitsAreConsistent) {
  const OpInfo& argmax = GetOp(FindOp("argmax"));
  EXPECT_TRUE(argmax.has(kIndexResult));
  EXPECT_TRUE(GetOp(FindOp("torch.log")).has(kPositiveInput));
  EXPECT_TRUE(GetOp(FindOp("torch.sqrt")).params[0].positive);
  const OpInfo& bn = GetOp(FindOp("F.batch_norm"));
  EXPECT_TRUE(bn.params[2].positive);
  EXPECT_EQ(bn.params[2].name, "running_var");
  EXPECT_TRUE(GetOp(FindOp("F.gelu")).params[1].keyword_only);
  // Views whose innermost dim moves; a reshape keeps the element order.
  EXPECT_TRUE(GetOp(FindOp("transpose")).has(kReordersDims));
  EXPECT_TRUE(GetOp(FindOp("permute")).has(kReordersDims));
  EXPECT_FALSE(GetOp(FindOp("reshape")).has(kReordersDims));
  EXPECT_EQ(TraitNames(kElementwise | kUnary), (std::vector<std::string>{"elementwise", "unary"}));
  for (const OpInfo& op : Catalog()) {
    SCOPED_TRACE(op.name);
    EXPECT_EQ(op.kind == OpKind::kCreate, op.has(kCreateTrait));
    if (op.has(kElementwise)) {
      EXPECT_EQ(op.rule, ShapeRule::kBroadcast);
    }
    if (op.has(kReduction)) {
      EXPECT_EQ(op.rule, ShapeRule::kReduce);
    }
  }
}

TEST(CatalogTest, ArityCountsTensorParams) {
  const OpInfo& conv = GetOp(FindOp("conv2d"));
  EXPECT_EQ(conv.arity(), 2);
  EXPECT_EQ(conv.max_arity(), 3);
  EXPECT_EQ(conv.num_attrs(), 4);
  EXPECT_EQ(conv.attr_index("groups"), 3);
  EXPECT_EQ(conv.attr_index("nope"), -1);
  EXPECT_EQ(conv.spatial_dims, 2);
}

}  // namespace
}  // namespace drtriton

namespace drtriton {
namespace {

// The attributes a lowering is called with here: the example's, else each parameter's default.
std::vector<AttrValue> LoweringAttrs(const OpInfo& op) {
  if (static_cast<int>(op.example.attrs.size()) == op.num_attrs()) return op.example.attrs;
  std::vector<AttrValue> attrs;
  for (int k : op.attr_param_indices())
    attrs.push_back(op.params[static_cast<size_t>(k)].attr.default_value);
  return attrs;
}

// Lowering as data: every elementwise operator's entry carries its Triton expression, which
// uses each of its inputs; every other compute operator has none and belongs to a family the
// code generator lowers by its trait (one emitter per family: contraction, conv, rows, ...).
TEST(CatalogTest, EveryComputeOperatorHasALoweringOrAnEmitterFamily) {
  const uint32_t families = kReduction | kRowwise | kScan | kContraction | kNormalization |
                            kPooling | kConv | kConvTranspose | kLayout | kGather;
  for (const OpInfo& op : Catalog()) {
    if (op.kind != OpKind::kCompute) continue;
    if (!op.has(kElementwise)) {
      EXPECT_EQ(op.lowering, nullptr) << op.name;
      EXPECT_NE(op.traits & families, 0u) << op.name << ": no lowering and no emitter family";
      // The row emitter's operators say which computation they are; a channelwise one
      // (batch_norm in inference mode) is arithmetic on its running statistics instead, and
      // a layout gather (an embedding's rows) index arithmetic in the kernel that reads it.
      const bool rows = op.has(kReduction) || op.has(kRowwise) || op.has(kScan) ||
                        (op.has(kGather) && !op.has(kLayout)) ||
                        (op.has(kNormalization) && !op.has(kChannelwise));
      EXPECT_EQ(op.row != RowKind::kNone, rows) << op.name;
      continue;
    }
    EXPECT_EQ(op.row, RowKind::kNone) << op.name;
    ASSERT_NE(op.lowering, nullptr) << op.name << " has no lowering";
    std::vector<std::string> ins;
    for (int k = 0; k < op.arity(); ++k) ins.push_back("in" + std::to_string(k) + "_");
    const std::string formula = op.lowering(ins, LoweringAttrs(op));
    for (const std::string& in : ins) EXPECT_NE(formula.find(in), std::string::npos) << op.name;
  }
}

// The facts the code generator reads instead of names: a triangle operator is a layout
// operator with a diagonal, and the two keep opposite halves.
TEST(CatalogTest, TriangleOperatorsSayWhichHalfTheyKeep) {
  int upper = 0, lower = 0;
  for (const OpInfo& op : Catalog()) {
    if (op.triangle == Triangle::kNone) continue;
    EXPECT_TRUE(op.has(kLayout)) << op.name;
    EXPECT_GE(op.attr_index("diagonal"), 0) << op.name;
    upper += op.triangle == Triangle::kUpper;
    lower += op.triangle == Triangle::kLower;
  }
  EXPECT_EQ(upper, 1);
  EXPECT_EQ(lower, 1);
  EXPECT_EQ(GetOp(FindOp("triu")).triangle, Triangle::kUpper);
  EXPECT_EQ(GetOp(FindOp("tril")).triangle, Triangle::kLower);
}

}  // namespace
}  // namespace drtriton

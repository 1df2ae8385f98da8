// Elementwise operators: binary arithmetic, unary math and activations.  All use the
// broadcast rule; FLOPs per output element follow docs/flops.md (one per elementary
// operation of the reference formula).
#include <string>
#include <utility>

#include "catalog/entry_builder.h"
#include "catalog/lowering.h"

namespace drtriton::catalog_internal {
namespace {

// The layout operators' rank: real models combine rank-6 views elementwise (Mamba's chunked
// einsums); the synthesizer's default bounds stop at rank 5 (synth/bounds.h).
constexpr int kMaxElementwiseRank = 6;

Entry Unary(std::string name, std::string torch, std::string spelling, uint32_t traits,
            double flops, std::string doc) {
  Entry e(std::move(name), std::move(torch), std::move(spelling));
  e.Params({Tensor("input")})
      .Rule(ShapeRule::kBroadcast)
      .Rank(1, kMaxElementwiseRank)
      .Traits(kElementwise | kUnary | traits)
      .Flops(flops)
      .Doc(std::move(doc))
      .Example({{2, 3, 4}});
  return e;
}

// An activation that exists only in torch.nn.functional.
Entry Functional(const std::string& name, double flops, std::string doc) {
  return Unary(name, "torch.nn.functional." + name, "F." + name, kActivation, flops,
               std::move(doc));
}

Entry Binary(std::string name, std::string torch, double flops, std::string doc) {
  Entry e(std::move(name), torch, torch);
  e.Params({Tensor("input"), Tensor("other")})
      .Rule(ShapeRule::kBroadcast)
      .Rank(1, kMaxElementwiseRank)
      .Traits(kElementwise | kBinary)
      .Flops(flops)
      .Doc(std::move(doc))
      .Example({{2, 3, 4}, {3, 1}});
  return e;
}

// A comparison: a bool tensor of input OP other, broadcast, as torch.eq and friends return.
// Frontend-only: masks of real models (causal attention's `bias == 0`); the synthesizer's
// programs are float32 throughout.
Entry Comparison(std::string name, std::string doc) {
  Entry e = Binary(name, "torch." + name, 1, std::move(doc));
  e.Traits(kElementwise | kBinary | kBoolResult | kFrontendOnly);
  return e;
}

}  // namespace

void AddElementwiseOps(std::vector<OpInfo>& out) {
  // Binary arithmetic.
  out.push_back(Binary("add", "torch.add", 1, "input + other, broadcast")
                    .Traits(kElementwise | kBinary | kShiftsInput)
                    .Lower(lowering::Add));
  out.push_back(Binary("sub", "torch.sub", 1, "input - other, broadcast")
                    .Traits(kElementwise | kBinary | kShiftsInput)
                    .Alias({"torch.subtract"})
                    .Lower(lowering::Sub));
  out.push_back(Binary("mul", "torch.mul", 1, "input * other, broadcast")
                    .Traits(kElementwise | kBinary | kScalesInput)
                    .Alias({"torch.multiply"})
                    .Lower(lowering::Mul));
  out.push_back(Binary("div", "torch.div", 1, "input / other (true division), broadcast")
                    .Traits(kElementwise | kBinary | kScalesInput)
                    .Alias({"torch.divide", "torch.true_divide"})
                    .Lower(lowering::Div));
  out.push_back(Binary("maximum", "torch.maximum", 1, "elementwise max, broadcast")
                    .Lower(lowering::Maximum));
  out.push_back(Binary("minimum", "torch.minimum", 1, "elementwise min, broadcast")
                    .Lower(lowering::Minimum));
  // pow's exponent is a Python float here; integral exponents keep negative inputs legal.
  out.push_back(Unary("pow", "torch.pow", "torch.pow", 0, 1, "input ** exponent")
                    .Params({Tensor("input"), Attr("exponent", FloatChoices({2.0, 3.0}, {}))})
                    .Example({{2, 3, 4}}, {F(2.0)})
                    .Lower(lowering::Pow));
  // min is never sampled as None so that at least one bound is set (PyTorch's rule).
  AttrSpec clamp_min = NullableFloatChoices({-1.0, 0.0});
  clamp_min.choices.erase(clamp_min.choices.begin());
  out.push_back(Unary("clamp", "torch.clamp", "torch.clamp", 0, 2, "min(max(x, min), max)")
                    .Alias({"torch.clip"})
                    .Params({Tensor("input"), Attr("min", clamp_min),
                             Attr("max", NullableFloatChoices({1.0, 6.0}))})
                    .Example({{2, 3, 4}}, {F(-1.0), F(1.0)})
                    .Lower(lowering::Clamp));

  // Unary math.  log and sqrt are sampled on positive inputs (torch.rand) only.
  out.push_back(Unary("exp", "torch.exp", "torch.exp", kAmplifiesError, 1, "e ** x")
                    .Lower(lowering::Exp));
  out.push_back(Unary("log", "torch.log", "torch.log", kPositiveInput, 1, "natural log, x > 0")
                    .Params({PositiveTensor("input")})
                    .Lower(lowering::Log));
  out.push_back(Unary("abs", "torch.abs", "torch.abs", 0, 1, "|x|").Alias({"torch.absolute"})
                    .Lower(lowering::Abs));
  out.push_back(Unary("sqrt", "torch.sqrt", "torch.sqrt", kPositiveInput, 1, "square root, x > 0")
                    .Params({PositiveTensor("input")})
                    .Lower(lowering::Sqrt));
  out.push_back(Unary("neg", "torch.neg", "torch.neg", kScalesInput, 1, "-x")
                    .Alias({"torch.negative"})
                    .Lower(lowering::Neg));
  // More unary math, as models write it (1 / x exports as reciprocal; RMSNorm's rsqrt; a
  // position bias's sign and log2): frontend-only, so the synthesizer's draws are unchanged.
  out.push_back(Unary("reciprocal", "torch.reciprocal", "torch.reciprocal", kFrontendOnly, 1,
                      "1 / x")
                    .Lower(lowering::Reciprocal));
  out.push_back(Unary("rsqrt", "torch.rsqrt", "torch.rsqrt", kFrontendOnly | kPositiveInput, 2,
                      "1 / sqrt(x), x > 0")
                    .Params({PositiveTensor("input")})
                    .Lower(lowering::Rsqrt));
  out.push_back(Unary("sign", "torch.sign", "torch.sign", kFrontendOnly, 2,
                      "1, -1 or x itself (0, NaN)")
                    .Lower(lowering::Sign));
  out.push_back(Unary("sin", "torch.sin", "torch.sin", kFrontendOnly, 1, "sine")
                    .Lower(lowering::Sin));
  out.push_back(Unary("cos", "torch.cos", "torch.cos", kFrontendOnly, 1, "cosine")
                    .Lower(lowering::Cos));
  out.push_back(Unary("erf", "torch.erf", "torch.erf", kFrontendOnly, 1, "the error function")
                    .Alias({"torch.special.erf"})
                    .Lower(lowering::Erf));
  out.push_back(Unary("log2", "torch.log2", "torch.log2", kFrontendOnly | kPositiveInput, 1,
                      "base-2 log, x > 0")
                    .Params({PositiveTensor("input")})
                    .Lower(lowering::Log2));
  out.push_back(Unary("exp2", "torch.exp2", "torch.exp2", kFrontendOnly | kAmplifiesError, 1,
                      "2 ** x")
                    .Alias({"torch.special.exp2"})
                    .Lower(lowering::Exp2));
  out.push_back(Unary("floor", "torch.floor", "torch.floor", kFrontendOnly, 1,
                      "largest integer at most x")
                    .Lower(lowering::Floor));
  out.push_back(Unary("ceil", "torch.ceil", "torch.ceil", kFrontendOnly, 1,
                      "smallest integer at least x")
                    .Lower(lowering::Ceil));
  out.push_back(Unary("trunc", "torch.trunc", "torch.trunc", kFrontendOnly, 1,
                      "x rounded toward 0")
                    .Alias({"torch.fix"})
                    .Lower(lowering::Trunc));
  out.push_back(Unary("round", "torch.round", "torch.round", kFrontendOnly, 1,
                      "the nearest integer, halves to even")
                    .Lower(lowering::Round));
  // log(1 + x) and e ** x - 1, exact near 0: logsigmoid, softplus written out and
  // binary_cross_entropy(_with_logits) export to them.  FLOPs: log(1 + x), exp(x) - 1.
  out.push_back(Unary("log1p", "torch.log1p", "torch.log1p", kFrontendOnly | kPositiveInput, 2,
                      "log(1 + x), x > -1")
                    .Alias({"torch.special.log1p"})
                    .Params({PositiveTensor("input")})
                    .Lower(lowering::Log1p));
  out.push_back(Unary("expm1", "torch.expm1", "torch.expm1", kFrontendOnly | kAmplifiesError, 2,
                      "e ** x - 1")
                    .Alias({"torch.special.expm1"})
                    .Lower(lowering::Expm1));

  // Comparisons (bool results) and the selection that reads them.  masked_fill(x, m, v) is
  // where(m, v, x) with v a one-element constant (the frontend's spelling of a number).
  out.push_back(Comparison("eq", "input == other, a bool tensor")
                    .Lower(lowering::Eq));
  out.push_back(Comparison("ne", "input != other (true where either is NaN), a bool tensor")
                    .Lower(lowering::Ne));
  out.push_back(Comparison("lt", "input < other, a bool tensor").Alias({"torch.less"})
                    .Lower(lowering::Lt));
  out.push_back(Comparison("le", "input <= other, a bool tensor").Alias({"torch.less_equal"})
                    .Lower(lowering::Le));
  out.push_back(Comparison("gt", "input > other, a bool tensor").Alias({"torch.greater"})
                    .Lower(lowering::Gt));
  out.push_back(Comparison("ge", "input >= other, a bool tensor").Alias({"torch.greater_equal"})
                    .Lower(lowering::Ge));
  // The negation of a mask (the "safe softmax" of scaled_dot_product_attention: rows whose
  // scores are all -inf); bool in, bool out, as torch.logical_not of a bool tensor.
  out.push_back(Unary("logical_not", "torch.logical_not", "torch.logical_not",
                      kBoolResult | kFrontendOnly, 1, "not input, a bool tensor (input: bool)")
                    .Params({BoolTensor("input")})
                    .Lower(lowering::LogicalNot));
  out.push_back(Entry("where", "torch.where", "torch.where")
                    .Params({BoolTensor("condition"), Tensor("input"), Tensor("other")})
                    .Rule(ShapeRule::kBroadcast)
                    .Rank(1, kMaxElementwiseRank)
                    .Traits(kElementwise | kFrontendOnly)
                    .Flops(1)
                    .Doc("input where condition else other, broadcast (condition: bool)")
                    .Example({{3, 1}, {2, 3, 4}, {4}})
                    .Lower(lowering::Where));

  // Activations available as torch.* (and F.*).
  out.push_back(Unary("relu", "torch.relu", "torch.relu", kActivation, 1, "max(x, 0)")
                    .Alias({"torch.nn.functional.relu", "F.relu"})
                    .Lower(lowering::Relu));
  out.push_back(
      Unary("sigmoid", "torch.sigmoid", "torch.sigmoid", kActivation, 3, "1 / (1 + exp(-x))")
          .Alias({"torch.nn.functional.sigmoid", "F.sigmoid", "torch.special.expit"})
          .Lower(lowering::Sigmoid));
  out.push_back(Unary("tanh", "torch.tanh", "torch.tanh", kActivation, 1, "tanh(x)")
                    .Alias({"torch.nn.functional.tanh", "F.tanh"})
                    .Lower(lowering::Tanh));
  out.push_back(Unary("selu", "torch.selu", "torch.selu", kActivation, 5,
                      "scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))")
                    .Alias({"torch.nn.functional.selu", "F.selu"})
                    .Lower(lowering::Selu));

  // Activations of torch.nn.functional only.
  out.push_back(
      Functional("leaky_relu", 2, "x if x > 0 else negative_slope * x")
          .Params({Tensor("input"), Attr("negative_slope", FloatChoices({0.01, 0.1, 0.2}, 0.01))})
          .Example({{2, 3, 4}}, {F(0.1)})
          .Lower(lowering::LeakyRelu));
  // approximate is keyword-only in PyTorch: F.gelu(x, approximate='tanh').
  out.push_back(Functional("gelu", 5, "x * Phi(x); approximate='tanh' uses the tanh formula")
                    .Params({Tensor("input"),
                             KeywordAttr("approximate", StringChoices({"none", "tanh"}, "none"))})
                    .Example({{2, 3, 4}}, {S("tanh")})
                    .Lower(lowering::Gelu));
  out.push_back(Functional("elu", 4, "x if x > 0 else alpha * (exp(x) - 1)")
                    .Params({Tensor("input"), Attr("alpha", FloatChoices({1.0, 0.5}, 1.0))})
                    .Example({{2, 3, 4}}, {F(1.0)})
                    .Lower(lowering::Elu));
  out.push_back(Functional("hardsigmoid", 4, "relu6(x + 3) / 6")
                    .Lower(lowering::Hardsigmoid));
  out.push_back(Functional("hardswish", 5, "x * relu6(x + 3) / 6")
                    .Lower(lowering::Hardswish));
  out.push_back(Functional("hardtanh", 2, "clamp(x, min_val, max_val)")
                    .Params({Tensor("input"), Attr("min_val", FloatChoices({-1.0, -2.0}, -1.0)),
                             Attr("max_val", FloatChoices({1.0, 2.0}, 1.0))})
                    .Example({{2, 3, 4}}, {F(-1.0), F(1.0)})
                    .Lower(lowering::Clamp));
  out.push_back(Functional("softplus", 6, "log(1 + exp(beta * x)) / beta, linear above threshold")
                    .Params({Tensor("input"), Attr("beta", FloatChoices({1.0, 2.0}, 1.0)),
                             Attr("threshold", FloatChoices({20.0}, 20.0))})
                    .Example({{2, 3, 4}}, {F(1.0), F(20.0)})
                    .Lower(lowering::Softplus));
  out.push_back(Functional("mish", 5, "x * tanh(softplus(x))")
                    .Lower(lowering::Mish));
  out.push_back(Functional("silu", 4, "x * sigmoid(x)")
                    .Lower(lowering::Silu));
}

}  // namespace drtriton::catalog_internal

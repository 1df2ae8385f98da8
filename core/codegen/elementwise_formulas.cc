// Triton spellings of the catalog's elementwise operators, matching PyTorch's definitions
// (constants from torch/nn/functional.py and ATen's activation kernels).  Inputs are
// variable names, so a formula may use them more than once.
#include <cmath>
#include <string>
#include <vector>

#include "codegen/expr.h"

namespace drtriton::codegen {
namespace {

// tanh through the sigmoid: Triton has no tanh outside libdevice, which the interpreter
// lacks; 2 * sigmoid(2x) - 1 is within 1e-7 of tanh in fp32.
std::string Tanh(const std::string& x) { return "(2.0 * tl.sigmoid(2.0 * " + x + ") - 1.0)"; }

// log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold (as torch does).
std::string Softplus(const std::string& x, double beta, double threshold) {
  const std::string b = FloatLiteral(beta);
  return "tl.where(" + x + " * " + b + " > " + FloatLiteral(threshold) + ", " + x +
         ", tl.log(1.0 + tl.exp(" + x + " * " + b + ")) / " + b + ")";
}

std::string Pow(const std::string& x, double e) {
  if (e == 1.0) return x;
  if (e == 2.0) return "(" + x + " * " + x + ")";
  if (e == 3.0) return "(" + x + " * " + x + " * " + x + ")";
  if (e == 0.5) return "tl.sqrt(" + x + ")";
  // Fractional powers are only defined for positive x (NaN otherwise, as in torch).
  return "tl.exp(" + FloatLiteral(e) + " * tl.log(" + x + "))";
}

std::string Clamp(const std::string& x, const AttrValue& lo, const AttrValue& hi) {
  std::string e = x;
  if (!lo.is_none()) e = NanMax(e, FloatLiteral(lo.AsFloat()));
  if (!hi.is_none()) e = NanMin(e, FloatLiteral(hi.AsFloat()));
  return e;
}

std::string Binary(const std::string& name, const std::string& a, const std::string& b) {
  if (name == "add") return a + " + " + b;
  if (name == "sub") return a + " - " + b;
  if (name == "mul") return a + " * " + b;
  if (name == "div") return a + " / " + b;
  if (name == "maximum") return NanMax(a, b);
  if (name == "minimum") return NanMin(a, b);
  // Comparisons are IEEE, as torch's: false against NaN, except != which is true.
  if (name == "eq") return "(" + a + " == " + b + ")";
  if (name == "ne") return "(" + a + " != " + b + ")";
  if (name == "lt") return "(" + a + " < " + b + ")";
  if (name == "le") return "(" + a + " <= " + b + ")";
  if (name == "gt") return "(" + a + " > " + b + ")";
  if (name == "ge") return "(" + a + " >= " + b + ")";
  return "";
}

std::string Unary(const std::string& name, const std::string& x,
                  const std::vector<AttrValue>& attrs) {
  if (name == "exp") return "tl.exp(" + x + ")";
  if (name == "log") return "tl.log(" + x + ")";
  if (name == "abs") return "tl.abs(" + x + ")";
  if (name == "sqrt") return "tl.sqrt(" + x + ")";
  if (name == "neg") return "-" + x;
  if (name == "logical_not") return "(" + x + " == 0)";  // a bool lane: true is 1
  if (name == "relu") return NanMax(x, "0.0");
  if (name == "sigmoid") return "tl.sigmoid(" + x + ")";
  if (name == "tanh") return Tanh(x);
  if (name == "silu") return x + " * tl.sigmoid(" + x + ")";
  if (name == "pow") return Pow(x, attrs[0].AsFloat());
  if (name == "clamp") return Clamp(x, attrs[0], attrs[1]);
  if (name == "hardtanh") return Clamp(x, attrs[0], attrs[1]);
  if (name == "selu")  // alpha and scale from torch.nn.functional.selu
    return "1.0507009873554805 * tl.where(" + x + " > 0.0, " + x +
           ", 1.6732632423543772 * (tl.exp(" + x + ") - 1.0))";
  if (name == "elu")
    return "tl.where(" + x + " > 0.0, " + x + ", " + FloatLiteral(attrs[0].AsFloat()) +
           " * (tl.exp(" + x + ") - 1.0))";
  if (name == "leaky_relu")
    return "tl.where(" + x + " > 0.0, " + x + ", " + FloatLiteral(attrs[0].AsFloat()) + " * " + x +
           ")";
  if (name == "hardsigmoid") return NanMin(NanMax(x + " + 3.0", "0.0"), "6.0") + " / 6.0";
  if (name == "hardswish") return x + " * " + NanMin(NanMax(x + " + 3.0", "0.0"), "6.0") + " / 6.0";
  if (name == "softplus") return Softplus(x, attrs[0].AsFloat(), attrs[1].AsFloat());
  if (name == "mish") return x + " * " + Tanh(Softplus(x, 1.0, 20.0));
  if (name == "gelu") {
    if (!attrs.empty() && attrs[0].s == "tanh")  // sqrt(2 / pi) and 0.044715 as in torch
      return "0.5 * " + x + " * (1.0 + " +
             Tanh("0.7978845608028654 * (" + x + " + 0.044715 * " + x + " * " + x + " * " + x +
                  ")") +
             ")";
    return "0.5 * " + x + " * (1.0 + tl.erf(" + x + " * 0.7071067811865476))";
  }
  return "";
}

}  // namespace

std::string NanMax(const std::string& a, const std::string& b) {
  return "tl.maximum(" + a + ", " + b + ", propagate_nan=tl.PropagateNan.ALL)";
}

std::string NanMin(const std::string& a, const std::string& b) {
  return "tl.minimum(" + a + ", " + b + ", propagate_nan=tl.PropagateNan.ALL)";
}

std::string NanOfLanes(const std::string& acc) {
  return "tl.sum(tl.where(" + acc + " != " + acc + ", " + acc + ", 0.0), axis=1, keep_dims=True)";
}

std::string ElementwiseFormula(const OpInfo& op, const std::vector<std::string>& ins,
                               const std::vector<AttrValue>& attrs) {
  if (ins.size() == 3 && op.name == "where")
    return "tl.where(" + ins[0] + ", " + ins[1] + ", " + ins[2] + ")";
  if (ins.size() == 2) return Binary(op.name, ins[0], ins[1]);
  if (ins.size() == 1) return Unary(op.name, ins[0], attrs);
  return "";
}

}  // namespace drtriton::codegen

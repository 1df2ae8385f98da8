#include "catalog/lowering.h"

#include <string>

namespace drtriton::lowering {
namespace {

std::string Literal(double v) { return AttrValue::Float(v).ToPython(); }

// `libdevice_call` where the kernel compiles for the GPU, `portable` in the interpreter (the
// kernel's LIBDEVICE constexpr, lowering.h).
std::string OnGpuElse(const std::string& libdevice_call, const std::string& portable) {
  return "(" + libdevice_call + " if " + std::string(kLibdeviceFlag) + " else " + portable + ")";
}

// tanh: libdevice's tanhf on the GPU (as torch.compile's kernels), and in the interpreter,
// which has no libdevice, 2 * sigmoid(2x) - 1 (within 1e-7 of tanh in fp32), or below
// |x| = 0.04 the series x - x^3/3 + 2x^5/15 (the next term is 2e-10 of x there): the
// sigmoid form rounds tanh(x) to 0 for |x| below 3e-8, which a norm over values that small
// (mish(-20) = -4e-8) turned into wrong outputs (a tiny-preset amin -> mish -> group_norm).
std::string TanhOf(const std::string& x) {
  const std::string x2 = "(" + x + " * " + x + ")";
  return OnGpuElse("libdevice.tanh(" + x + ")",
                   "tl.where(tl.abs(" + x + ") < 0.04, " + x + " * (1.0 + " + x2 +
                       " * (-0.3333333333333333 + " + x2 + " * 0.13333333333333333)), " +
                       "2.0 * tl.sigmoid(2.0 * " + x + ") - 1.0)");
}

// log1p(exp(beta * x)) / beta, and x itself where beta * x > threshold (as torch does):
// log(1 + exp(.)) written out is 0 below beta * x = -17, where 1 + exp rounds to 1 (mish's
// tanh of it, normalized by a group norm, was then wrong: a tiny-preset amin -> mish ->
// group_norm).
std::string SoftplusOf(const std::string& x, double beta, double threshold) {
  const std::string b = Literal(beta);
  return "tl.where(" + x + " * " + b + " > " + Literal(threshold) + ", " + x + ", " +
         Log1p({"tl.exp(" + x + " * " + b + ")"}, {}) + " / " + b + ")";
}

std::string Relu6Of(const std::string& x) { return NanMin(NanMax(x + " + 3.0", "0.0"), "6.0"); }

std::string Infix(const Ins& in, const std::string& op) { return in[0] + " " + op + " " + in[1]; }
std::string Compare(const Ins& in, const std::string& op) {
  return "(" + in[0] + " " + op + " " + in[1] + ")";
}
std::string Call(const std::string& f, const Ins& in) { return f + "(" + in[0] + ")"; }

}  // namespace

std::string NanMax(const std::string& a, const std::string& b) {
  return "tl.maximum(" + a + ", " + b + ", propagate_nan=tl.PropagateNan.ALL)";
}

std::string NanMin(const std::string& a, const std::string& b) {
  return "tl.minimum(" + a + ", " + b + ", propagate_nan=tl.PropagateNan.ALL)";
}

std::string Add(const Ins& in, const Attrs&) { return Infix(in, "+"); }
std::string Sub(const Ins& in, const Attrs&) { return Infix(in, "-"); }
std::string Mul(const Ins& in, const Attrs&) { return Infix(in, "*"); }
std::string Div(const Ins& in, const Attrs&) { return Infix(in, "/"); }
std::string Maximum(const Ins& in, const Attrs&) { return NanMax(in[0], in[1]); }
std::string Minimum(const Ins& in, const Attrs&) { return NanMin(in[0], in[1]); }
std::string Eq(const Ins& in, const Attrs&) { return Compare(in, "=="); }
std::string Ne(const Ins& in, const Attrs&) { return Compare(in, "!="); }
std::string Lt(const Ins& in, const Attrs&) { return Compare(in, "<"); }
std::string Le(const Ins& in, const Attrs&) { return Compare(in, "<="); }
std::string Gt(const Ins& in, const Attrs&) { return Compare(in, ">"); }
std::string Ge(const Ins& in, const Attrs&) { return Compare(in, ">="); }
std::string Where(const Ins& in, const Attrs&) {
  return "tl.where(" + in[0] + ", " + in[1] + ", " + in[2] + ")";
}

std::string Exp(const Ins& in, const Attrs&) { return Call("tl.exp", in); }
std::string Log(const Ins& in, const Attrs&) { return Call("tl.log", in); }
std::string Abs(const Ins& in, const Attrs&) { return Call("tl.abs", in); }
std::string Sqrt(const Ins& in, const Attrs&) { return Call("tl.sqrt", in); }
std::string Neg(const Ins& in, const Attrs&) { return "-" + in[0]; }
std::string Reciprocal(const Ins& in, const Attrs&) { return "1.0 / " + in[0]; }
// libdevice's rsqrtf (MUFU.RSQ, within 2 ulp) in the sm_90 build, exact in the interpreter.
std::string Rsqrt(const Ins& in, const Attrs&) { return Call("tl.rsqrt", in); }
// 0 and NaN give themselves, -0.0 included, as torch.sign.
std::string Sign(const Ins& in, const Attrs&) {
  return "tl.where(" + in[0] + " > 0, 1.0, tl.where(" + in[0] + " < 0, -1.0, " + in[0] + "))";
}
// sin, cos, erf and log2 compile to libdevice's correctly range-reduced functions on the GPU
// (__nv_sinf, __nv_erff: no MUFU approximation in the sm_90 build).
std::string Sin(const Ins& in, const Attrs&) { return Call("tl.sin", in); }
std::string Cos(const Ins& in, const Attrs&) { return Call("tl.cos", in); }
std::string Erf(const Ins& in, const Attrs&) { return Call("tl.erf", in); }
std::string Log2(const Ins& in, const Attrs&) { return Call("tl.log2", in); }
std::string Exp2(const Ins& in, const Attrs&) { return Call("tl.exp2", in); }
std::string Floor(const Ins& in, const Attrs&) { return Call("tl.floor", in); }
std::string Ceil(const Ins& in, const Attrs&) { return Call("tl.ceil", in); }
std::string Trunc(const Ins& in, const Attrs&) {
  return "tl.where(" + in[0] + " < 0, tl.ceil(" + in[0] + "), tl.floor(" + in[0] + "))";
}
// Halves to even, as torch.round, from floors alone (the interpreter has no rint): r =
// floor(x + 0.5), one less where x was a half (r - x == 0.5) and r is odd.  x + 0.5 is exact
// below 2^23 in magnitude, and from there on every float32 is an integer already.
std::string Round(const Ins& in, const Attrs&) {
  const std::string& x = in[0];
  const std::string r = "tl.floor(" + x + " + 0.5)";
  const std::string tie_to_odd =
      "((" + r + " - " + x + ") == 0.5) & ((" + r + " - 2.0 * tl.floor(" + r + " * 0.5)) == 1.0)";
  return "tl.where(tl.abs(" + x + ") >= 8388608.0, " + x + ", tl.where(" + tie_to_odd + ", " +
         r + " - 1.0, " + r + "))";
}
// On the GPU, libdevice's log1pf and expm1f (within 1-2 ulp; torch.compile's too): Kahan's
// forms below cost two logs, an exp and two IEEE divides an element, and a pointwise
// log1p(|x|) - expm1(-|x|) over 1 GiB ran at 79% of the H100's copy bandwidth with them
// (results/h100-2026-12-07f, beyond task 1006).  The interpreter has no libdevice, so the
// kernel's LIBDEVICE constexpr (wrapper.cc: true on a CUDA input) picks at compile time.
// Kahan's corrections (Goldberg 1991, thm. 4): log1p(x) = log(u) * x / (u - 1) with u = 1 + x
// rounded, x itself where u rounds to 1; expm1(x) = (u - 1) * x / log(u) with u = e ** x,
// x where u rounds to 1 and -1 where u - 1 does.  The rounding of u cancels in the ratio, so
// both stay within a few ulp of the float64 answer near 0, where log(1 + x) and exp(x) - 1
// lose every digit (x = 1e-6: 5% off).  inf, -inf and NaN give what torch gives.
std::string Log1p(const Ins& in, const Attrs&) {
  const std::string& x = in[0];
  const std::string u = "(1.0 + " + x + ")";
  return OnGpuElse("libdevice.log1p(" + x + ")", "tl.where(" + u + " == 1.0, " + x + ", tl.where(" +
                                                     u + " == float('inf'), " + u + ", tl.log(" +
                                                     u + ") * (" + x + " / (" + u + " - 1.0))))");
}
std::string Expm1(const Ins& in, const Attrs&) {
  const std::string& x = in[0];
  const std::string u = "tl.exp(" + x + ")";
  return OnGpuElse("libdevice.expm1(" + x + ")",
                   "tl.where(" + u + " == 1.0, " + x + ", tl.where(" + u +
                       " - 1.0 == -1.0, -1.0, tl.where(" + u + " == float('inf'), " + u + ", (" +
                       u + " - 1.0) * (" + x + " / tl.log(" + u + ")))))");
}
std::string LogicalNot(const Ins& in, const Attrs&) {
  return "(" + in[0] + " == 0)";  // a bool lane: true is 1
}

std::string Pow(const Ins& in, const Attrs& attrs) {
  const std::string& x = in[0];
  const double e = attrs[0].AsFloat();
  if (e == 1.0) return x;
  if (e == 2.0) return "(" + x + " * " + x + ")";
  if (e == 3.0) return "(" + x + " * " + x + " * " + x + ")";
  if (e == 0.5) return "tl.sqrt(" + x + ")";
  // Fractional powers are only defined for positive x (NaN otherwise, as in torch).
  return "tl.exp(" + Literal(e) + " * tl.log(" + x + "))";
}

std::string Clamp(const Ins& in, const Attrs& attrs) {
  std::string e = in[0];
  if (!attrs[0].is_none()) e = NanMax(e, Literal(attrs[0].AsFloat()));
  if (!attrs[1].is_none()) e = NanMin(e, Literal(attrs[1].AsFloat()));
  return e;
}

std::string Relu(const Ins& in, const Attrs&) { return NanMax(in[0], "0.0"); }
std::string Sigmoid(const Ins& in, const Attrs&) { return Call("tl.sigmoid", in); }
std::string Tanh(const Ins& in, const Attrs&) { return TanhOf(in[0]); }
std::string Silu(const Ins& in, const Attrs&) { return in[0] + " * tl.sigmoid(" + in[0] + ")"; }

std::string Selu(const Ins& in, const Attrs&) {  // alpha and scale from F.selu
  const std::string& x = in[0];
  return "1.0507009873554805 * tl.where(" + x + " > 0.0, " + x + ", 1.6732632423543772 * (tl.exp(" +
         x + ") - 1.0))";
}

std::string Elu(const Ins& in, const Attrs& attrs) {
  const std::string& x = in[0];
  return "tl.where(" + x + " > 0.0, " + x + ", " + Literal(attrs[0].AsFloat()) + " * (tl.exp(" +
         x + ") - 1.0))";
}

std::string LeakyRelu(const Ins& in, const Attrs& attrs) {
  const std::string& x = in[0];
  return "tl.where(" + x + " > 0.0, " + x + ", " + Literal(attrs[0].AsFloat()) + " * " + x + ")";
}

std::string Hardsigmoid(const Ins& in, const Attrs&) { return Relu6Of(in[0]) + " / 6.0"; }
std::string Hardswish(const Ins& in, const Attrs&) {
  return in[0] + " * " + Relu6Of(in[0]) + " / 6.0";
}

std::string Softplus(const Ins& in, const Attrs& attrs) {
  return SoftplusOf(in[0], attrs[0].AsFloat(), attrs[1].AsFloat());
}

std::string Mish(const Ins& in, const Attrs&) {
  return in[0] + " * " + TanhOf(SoftplusOf(in[0], 1.0, 20.0));
}

std::string Gelu(const Ins& in, const Attrs& attrs) {
  const std::string& x = in[0];
  if (!attrs.empty() && attrs[0].s == "tanh")  // sqrt(2 / pi) and 0.044715 as in torch
    return "0.5 * " + x + " * (1.0 + " +
           TanhOf("0.7978845608028654 * (" + x + " + 0.044715 * " + x + " * " + x + " * " + x +
                  ")") +
           ")";
  return "0.5 * " + x + " * (1.0 + tl.erf(" + x + " * 0.7071067811865476))";
}

}  // namespace drtriton::lowering

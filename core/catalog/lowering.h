// How the code generator spells each elementwise operator in Triton: operator facts, so they
// live with the operator's catalog entry (OpInfo::lowering), and the emitters look them up
// instead of testing names.  A lowering takes the input variables' names (each may be used
// more than once) and the node's attributes, in the entry's parameter order, and returns one
// Triton expression computed in float32, matching PyTorch's definition (constants from
// torch/nn/functional.py and ATen's activation kernels).
#pragma once

#include <string>
#include <vector>

#include "catalog/attr.h"

namespace drtriton::lowering {

using Ins = std::vector<std::string>;
using Attrs = std::vector<AttrValue>;

// A kernel constexpr that lowerings may read (`a if LIBDEVICE else b`): true where the kernel
// compiles for the GPU, false in the CPU interpreter, which has no libdevice (extern calls).
// A kernel whose text names it declares it, and its launch passes it (codegen/wrapper.cc).
inline constexpr char kLibdeviceFlag[] = "LIBDEVICE";

// tl.maximum / tl.minimum that propagate NaN, as torch's maximum, clamp, relu and amax do. The
// default (PropagateNan.NONE) compiles to maxnum/minnum on the GPU, which drops a NaN operand;
// the interpreter propagates either way, so only the GPU would show the difference.
std::string NanMax(const std::string& a, const std::string& b);
std::string NanMin(const std::string& a, const std::string& b);

// Binary arithmetic and comparisons (IEEE, as torch's: false against NaN, except !=).
std::string Add(const Ins& in, const Attrs& attrs);
std::string Sub(const Ins& in, const Attrs& attrs);
std::string Mul(const Ins& in, const Attrs& attrs);
std::string Div(const Ins& in, const Attrs& attrs);
std::string Maximum(const Ins& in, const Attrs& attrs);
std::string Minimum(const Ins& in, const Attrs& attrs);
std::string Eq(const Ins& in, const Attrs& attrs);
std::string Ne(const Ins& in, const Attrs& attrs);
std::string Lt(const Ins& in, const Attrs& attrs);
std::string Le(const Ins& in, const Attrs& attrs);
std::string Gt(const Ins& in, const Attrs& attrs);
std::string Ge(const Ins& in, const Attrs& attrs);
std::string Where(const Ins& in, const Attrs& attrs);

// Unary math and activations.
std::string Exp(const Ins& in, const Attrs& attrs);
std::string Log(const Ins& in, const Attrs& attrs);
std::string Abs(const Ins& in, const Attrs& attrs);
std::string Sqrt(const Ins& in, const Attrs& attrs);
std::string Neg(const Ins& in, const Attrs& attrs);
std::string Reciprocal(const Ins& in, const Attrs& attrs);
std::string Rsqrt(const Ins& in, const Attrs& attrs);
std::string Sign(const Ins& in, const Attrs& attrs);
std::string Sin(const Ins& in, const Attrs& attrs);
std::string Cos(const Ins& in, const Attrs& attrs);
std::string Erf(const Ins& in, const Attrs& attrs);
std::string Log2(const Ins& in, const Attrs& attrs);
std::string Exp2(const Ins& in, const Attrs& attrs);
std::string Floor(const Ins& in, const Attrs& attrs);
std::string Ceil(const Ins& in, const Attrs& attrs);
std::string Trunc(const Ins& in, const Attrs& attrs);
std::string Round(const Ins& in, const Attrs& attrs);
std::string Log1p(const Ins& in, const Attrs& attrs);
std::string Expm1(const Ins& in, const Attrs& attrs);
std::string LogicalNot(const Ins& in, const Attrs& attrs);
std::string Pow(const Ins& in, const Attrs& attrs);
std::string Clamp(const Ins& in, const Attrs& attrs);  // clamp and hardtanh: (min, max)
std::string Relu(const Ins& in, const Attrs& attrs);
std::string Sigmoid(const Ins& in, const Attrs& attrs);
std::string Tanh(const Ins& in, const Attrs& attrs);
std::string Silu(const Ins& in, const Attrs& attrs);
std::string Selu(const Ins& in, const Attrs& attrs);
std::string Elu(const Ins& in, const Attrs& attrs);
std::string LeakyRelu(const Ins& in, const Attrs& attrs);
std::string Hardsigmoid(const Ins& in, const Attrs& attrs);
std::string Hardswish(const Ins& in, const Attrs& attrs);
std::string Softplus(const Ins& in, const Attrs& attrs);
std::string Mish(const Ins& in, const Attrs& attrs);
std::string Gelu(const Ins& in, const Attrs& attrs);

}  // namespace drtriton::lowering

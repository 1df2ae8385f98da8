// Text helpers shared by the emitters: literals, index decomposition, broadcasting.
#include <algorithm>
#include <cassert>
#include <string>
#include <utility>
#include <vector>

#include "catalog/attr.h"
#include "codegen/kernel.h"
#include "codegen/python_writer.h"
#include "codegen/sizes.h"

namespace drtriton::codegen {

// One spelling of float literals for programs and kernels: the catalog's shortest round-trip
// text ("0.01", "1e-05", "1.0", "float('inf')").
std::string FloatLiteral(double v) { return AttrValue::Float(v).ToPython(); }

std::string IntLiteral(int64_t v) { return std::to_string(v); }

int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < shape.size() && i < end; ++i) p *= shape[i];
  return p;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::vector<std::string> Decompose(PythonWriter& w, const std::string& flat, const Shape& shape,
                                   const std::string& prefix) {
  return DecomposeDims(w, flat, LiteralDims(shape), prefix);
}

std::vector<std::string> DecomposeDims(PythonWriter& w, const std::string& flat, const Dims& dims,
                                       const std::string& prefix) {
  std::vector<std::string> coords(dims.size(), "0");
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == "1") continue;
    const std::string inner = DimProduct(dims, i + 1);
    const std::string outer = DimProduct(dims, 0, i);  // "1" when nothing non-unit lies before
    std::string e = flat;
    if (inner != "1") e = "(" + e + " // " + Atom(inner) + ")";
    if (outer != "1") e = e + " % " + Atom(dims[i]);
    coords[i] = prefix + std::to_string(i);
    w.Line(coords[i] + " = " + e);
  }
  return coords;
}

std::vector<std::string> BroadcastCoords(const Shape& in, const Shape& out,
                                         const std::vector<std::string>& coords) {
  std::vector<std::string> result(in.size(), "0");
  const size_t lead = out.size() - in.size();
  for (size_t j = 0; j < in.size(); ++j)
    if (in[j] != 1) result[j] = coords[lead + j];
  return result;
}

int NormDim(int64_t dim, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  return static_cast<int>(dim < 0 ? dim + r : dim);
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

// --- KernelParams. -----------------------------------------------------------------------

void KernelParams::Add(std::string param, std::string arg) {
  for (const auto& p : params_)
    if (p == param) return;
  params_.push_back(std::move(param));
  args_.push_back(std::move(arg));
}

const std::string& KernelParams::TensorOf(ValueId v) const {
  for (const auto& [value, tensor] : rebound_)
    if (value == v) return tensor;
  return program_.value(v).name;
}

void KernelParams::Rebind(ValueId v, std::string tensor) {
  assert(std::find(params_.begin(), params_.end(), program_.value(v).name + "_ptr") ==
             params_.end() &&
         "Rebind before the value's first use");
  rebound_.emplace_back(v, std::move(tensor));
}

std::string KernelParams::Pointer(ValueId v) {
  const std::string& name = program_.value(v).name;
  Add(name + "_ptr", TensorOf(v));
  return name + "_ptr";
}

std::string KernelParams::Scratch(const std::string& name) {
  Add(name + "_ptr", name);
  return name + "_ptr";
}

void KernelParams::RebindLaidOut(ValueId v, std::string tensor, std::vector<std::string> strides) {
  Rebind(v, std::move(tensor));
  laid_out_.emplace_back(v, std::move(strides));
}

std::string KernelParams::Stride(ValueId v, int dim) {
  for (const auto& [value, strides] : laid_out_)
    if (value == v) return strides[static_cast<size_t>(dim)];
  const Value& value = program_.value(v);
  const bool rebound = TensorOf(v) != value.name;
  if (allocated_ == AllocatedStrides::kLiteral && value.producer.valid() && !rebound)
    return IntLiteral(Product(value.shape, static_cast<size_t>(dim) + 1));  // contiguous
  const std::string& name = value.name;
  const std::string d = std::to_string(dim);
  Add("stride_" + name + "_" + d, TensorOf(v) + ".stride(" + d + ")");
  return "stride_" + name + "_" + d;
}

std::string KernelParams::ScratchStride(const std::string& name, int dim) {
  const std::string d = std::to_string(dim);
  Add("stride_" + name + "_" + d, name + ".stride(" + d + ")");
  return "stride_" + name + "_" + d;
}

std::string KernelParams::Sizes(const std::string& expr) {
  for (const std::string& name : SizeNamesIn(expr)) Add(name, name);
  return expr;
}

void KernelParams::AddContiguousRead(std::vector<std::string> coords, std::string flat,
                                     Shape shape) {
  contiguous_reads_.push_back({std::move(coords), std::move(flat), std::move(shape)});
}

std::string KernelParams::ContiguousAddress(ValueId v, const std::vector<std::string>& coords) {
  for (const ContiguousRead& read : contiguous_reads_) {
    if (read.coords == coords && program_.value(v).shape == read.shape)
      return FlatAddress(v, read.flat);
  }
  return "";
}

std::string KernelParams::FlatAddress(ValueId v, const std::string& flat) {
  if (std::find(flat_values_.begin(), flat_values_.end(), v) == flat_values_.end())
    flat_values_.push_back(v);
  return Pointer(v) + " + " + flat;
}

std::string KernelParams::Offset(ValueId v, const std::vector<std::string>& coords,
                                 const std::string& zero) {
  if (!flat_.empty() && coords == flat_coords_ && program_.value(v).shape == flat_shape_) {
    FlatAddress(v, flat_);  // registers the pointer and records the flat read
    return flat_;
  }
  Pointer(v);  // the pointer before the strides, in the parameters' order
  std::string e;
  const auto add = [&e](const std::string& term) { e += (e.empty() ? "" : " + ") + term; };
  for (size_t d = 0; d < coords.size(); ++d) {
    if (coords[d] == "0") continue;
    const bool simple = coords[d].find(' ') == std::string::npos;
    const std::string c = simple ? coords[d] : "(" + coords[d] + ")";
    const std::string stride = Stride(v, static_cast<int>(d));
    add(stride == "1" ? c : c + " * " + stride);
  }
  if (!zero.empty() && (zero.find('+') != std::string::npos || e.empty())) add(zero);
  return e.empty() ? "0" : e;
}

std::string KernelParams::Address(ValueId v, const std::vector<std::string>& coords,
                                  const std::string& zero) {
  const std::string offset = Offset(v, coords, zero);
  return offset == "0" ? Pointer(v) : Pointer(v) + " + " + offset;
}

}  // namespace drtriton::codegen

// Shape rules of the layout operators (ops_layout.cc): reshape, permute, narrow, select,
// pad; flip's dims are checked with the same-as-input rule (CheckFlipDims).
#include <string>
#include <vector>

#include "catalog/call.h"

namespace drtriton::catalog_internal {
namespace {

std::vector<int64_t> Ints(const AttrValue* v) {
  if (!v || v->is_none()) return {};
  return v->type == AttrType::kInt ? std::vector<int64_t>{v->i} : v->ints;
}

std::string List(const std::vector<int64_t>& v) { return AttrValue::IntList(v).ToPython(); }

// Each of `dims` a distinct dim of a rank-`rank` tensor; normalised into `out`.
std::optional<Error> DistinctDims(const Call& call, const std::vector<int64_t>& dims, size_t rank,
                                  std::vector<size_t>& out) {
  const auto r = static_cast<int64_t>(rank);
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < -r || d >= r) return call.Fail("dim " + std::to_string(d) + " out of range");
    const auto k = static_cast<size_t>(d < 0 ? d + r : d);
    if (seen[k]) return call.Fail("dims " + List(dims) + " repeat a dim");
    seen[k] = true;
    out.push_back(k);
  }
  return std::nullopt;
}

// The dim attribute, already range-checked by CheckCall.
size_t Dim(const Call& call) {
  const int64_t d = call.Int("dim", 0);
  return static_cast<size_t>(d < 0 ? d + static_cast<int64_t>(call.input().size()) : d);
}

}  // namespace

Result<Shape> InferReshape(const Call& call) {
  Shape out = Ints(call.attr("shape"));
  const int64_t total = NumElements(call.input());
  int inferred = -1;
  int64_t known = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    if (out[k] == -1 && inferred < 0) {
      inferred = static_cast<int>(k);
      continue;
    }
    if (out[k] < 1) return call.Fail("shape " + List(out) + " has a dim < 1 or a second -1");
    known *= out[k];
  }
  if (inferred >= 0) {
    if (total % known != 0) return call.Fail("shape " + List(out) + " does not divide the input");
    out[static_cast<size_t>(inferred)] = total / known;
  }
  // [] is the 0-d view of one element: a reduction over every dim is 0-d, and the frontend
  // does its arithmetic with a number (a loss's total / n) in the one-element view.
  if (NumElements(out) != total) return call.Fail("shape " + List(out) + " has another size");
  return out;
}

Result<Shape> InferPermute(const Call& call) {
  const Shape& in = call.input();
  const std::vector<int64_t> dims = Ints(call.attr("dims"));
  if (dims.size() != in.size())
    return call.Fail("dims " + List(dims) + " must name each of the " + std::to_string(in.size()) +
                     " dims once");
  std::vector<size_t> order;
  if (auto err = DistinctDims(call, dims, in.size(), order)) return *err;
  Shape out;
  for (size_t k : order) out.push_back(in[k]);
  return out;
}

// PyTorch allows start in [-size, size]; the IR has no empty outputs, so length >= 1.
Result<Shape> InferNarrow(const Call& call) {
  Shape out = call.input();
  const size_t dim = Dim(call);
  const int64_t size = out[dim];
  int64_t start = call.Int("start", 0);
  const int64_t length = call.Int("length", 0);
  if (start < -size || start > size) return call.Fail("start out of range");
  if (start < 0) start += size;
  if (length < 0 || start + length > size) return call.Fail("start + length past the dim");
  if (length == 0) return call.Fail("length 0: the output would be empty");
  out[dim] = length;
  return out;
}

Result<Shape> InferSelect(const Call& call) {
  Shape out = call.input();
  const size_t dim = Dim(call);
  const int64_t index = call.Int("index", 0);
  if (index < -out[dim] || index >= out[dim]) return call.Fail("index out of range");
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(dim));
  return out;
}

Result<Shape> InferPad(const Call& call) {
  Shape out = call.input();
  const std::vector<int64_t> pad = Ints(call.attr("pad"));
  if (pad.size() % 2 != 0 || pad.size() > 2 * out.size())
    return call.Fail("pad " + List(pad) + " must hold (before, after) pairs, at most one per dim");
  for (size_t k = 0; k < pad.size(); k += 2) {
    // Negative padding crops in PyTorch; the IR spells a crop as narrow.
    if (pad[k] < 0 || pad[k + 1] < 0) return call.Fail("pad " + List(pad) + " must be >= 0");
    int64_t& d = out[out.size() - 1 - k / 2];
    d += pad[k] + pad[k + 1];
  }
  return out;
}

// PyTorch's expand: the input right-aligned to `size`; -1 keeps an input dim; a dim of the
// input is equal to its target or 1.
Result<Shape> InferExpand(const Call& call) {
  const Shape& in = call.input();
  Shape out = Ints(call.attr("size"));
  if (out.size() < in.size()) return call.Fail("size " + List(out) + " has fewer dims");
  const size_t offset = out.size() - in.size();
  for (size_t k = 0; k < out.size(); ++k) {
    const bool own = k >= offset;
    if (out[k] == -1 && own) out[k] = in[k - offset];
    if (out[k] < 1) return call.Fail("size " + List(out) + " has a dim < 1");
    if (own && in[k - offset] != 1 && in[k - offset] != out[k])
      return call.Fail("size " + List(out) + " does not broadcast the input");
  }
  return out;
}

std::optional<Error> CheckFlipDims(const Call& call) {
  const AttrValue* dims = call.attr("dims");
  if (!dims) return std::nullopt;
  std::vector<size_t> unused;
  return DistinctDims(call, Ints(dims), call.input().size(), unused);
}

}  // namespace drtriton::catalog_internal

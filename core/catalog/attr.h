// Attribute values and their specifications: the non-tensor arguments of an operator
// (dim, keepdim, stride, padding, negative_slope, eps, ...), spelled as Python literals.
#pragma once

#include <cstdint>
#include <utility>
#include <string>
#include <vector>

namespace drtriton {

using Shape = std::vector<int64_t>;

enum class AttrType { kNone, kBool, kInt, kFloat, kIntList, kString };

// One literal argument. kIntList prints as a Python list ("[64, 64]").
struct AttrValue {
  AttrType type = AttrType::kNone;
  bool b = false;
  int64_t i = 0;
  double f = 0.0;
  std::vector<int64_t> ints;
  std::string s;  // kString (e.g. gelu's approximate='tanh')

  static AttrValue None() { return {}; }
  static AttrValue Bool(bool v) { AttrValue a; a.type = AttrType::kBool; a.b = v; return a; }
  static AttrValue Int(int64_t v) { AttrValue a; a.type = AttrType::kInt; a.i = v; return a; }
  static AttrValue Float(double v) { AttrValue a; a.type = AttrType::kFloat; a.f = v; return a; }
  static AttrValue String(std::string v) {
    AttrValue a; a.type = AttrType::kString; a.s = std::move(v); return a;
  }
  static AttrValue IntList(std::vector<int64_t> v) {
    AttrValue a; a.type = AttrType::kIntList; a.ints = std::move(v); return a;
  }

  bool is_none() const { return type == AttrType::kNone; }
  // A number as a double: Python accepts an int literal wherever a float is expected.
  double AsFloat() const { return type == AttrType::kInt ? static_cast<double>(i) : f; }
  // An int or per-dimension list as `n` ints: an int (or one-element list) repeats n times,
  // as PyTorch's int[N] arguments do.  A list of another length comes back unchanged.
  std::vector<int64_t> AsInts(size_t n) const;
  // Python literal: None, True, 3, 0.01, 1e-05, [1, 2].  Floats print with the shortest
  // text that reads back to the same double, so printing round-trips exactly.
  std::string ToPython() const;
  bool operator==(const AttrValue& other) const;
  bool operator!=(const AttrValue& other) const { return !(*this == other); }
};

// Which values an attribute may take.  The synthesizer samples from this domain; the IR
// rejects wrong types, bad dims and values outside strict choices (see AttrSpec::InDomain).
enum class AttrDomain {
  kChoices,   // one of `choices`
  kIntRange,  // integer in [min, max]
  kDim,       // a dimension index of the first tensor input, in [-rank, rank)
  kFree,      // anything of the right type (e.g. normalized_shape, derived from shapes)
};

struct AttrSpec {
  AttrType type = AttrType::kInt;
  AttrDomain domain = AttrDomain::kFree;
  AttrValue default_value;           // the PyTorch default; kNone when required
  std::vector<AttrValue> choices;    // for kChoices
  int64_t min = 0, max = 0;          // for kIntRange, inclusive
  bool nullable = false;             // None is accepted too (e.g. clamp's max)
  bool int_or_list = false;          // kInt that may also be a per-dim list (kernel_size=(3, 3))
  // The choices are the only values PyTorch (or the IR) accepts, not just what the
  // synthesizer samples: gelu's approximate, batch_norm's training=False.
  bool strict = false;

  // Type check: None only when nullable; an int where a float is expected; an int or a
  // list for int_or_list and kIntList.  Says nothing about the domain.
  bool Accepts(const AttrValue& value) const;
  // Whether the synthesizer could have sampled `value`: in `choices`, in [min, max]
  // (every element of a list), or a dim of a tensor of rank `rank`.  Shape inference
  // checks only types, strict choices and dims, so that real models (stride 4, slope 0.05)
  // still parse; the synthesizer and the tests use InDomain.
  bool InDomain(const AttrValue& value, int rank) const;
};

}  // namespace drtriton

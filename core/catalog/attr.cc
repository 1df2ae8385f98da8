#include "catalog/attr.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace drtriton {
namespace {

// Shortest text that reads back to the same double, with a '.' or exponent so that
// Python sees a float ("1.0", "0.01", "1e-05").
std::string FloatLiteral(double v) {
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
  if (std::isnan(v)) return "float('nan')";
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string text(buf);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  // Python spells exponents with at least two digits ("1e-05"), as %g does.
  return text;
}

}  // namespace

std::string AttrValue::ToPython() const {
  switch (type) {
    case AttrType::kNone:
      return "None";
    case AttrType::kBool:
      return b ? "True" : "False";
    case AttrType::kInt:
      return std::to_string(i);
    case AttrType::kFloat:
      return FloatLiteral(f);
    case AttrType::kString:
      return "'" + s + "'";
    case AttrType::kIntList: {
      std::string text = "[";
      for (size_t k = 0; k < ints.size(); ++k) {
        if (k > 0) text += ", ";
        text += std::to_string(ints[k]);
      }
      return text + "]";
    }
  }
  return "None";
}

bool AttrValue::operator==(const AttrValue& other) const {
  if (type != other.type) return false;
  switch (type) {
    case AttrType::kNone:
      return true;
    case AttrType::kBool:
      return b == other.b;
    case AttrType::kInt:
      return i == other.i;
    case AttrType::kFloat:
      return f == other.f;
    case AttrType::kIntList:
      return ints == other.ints;
    case AttrType::kString:
      return s == other.s;
  }
  return false;
}

std::vector<int64_t> AttrValue::AsInts(size_t n) const {
  if (type == AttrType::kInt) return std::vector<int64_t>(n, i);
  if (type == AttrType::kIntList && ints.size() == 1) return std::vector<int64_t>(n, ints[0]);
  return ints;
}

bool AttrSpec::Accepts(const AttrValue& value) const {
  if (value.is_none()) return nullable;
  if (value.type == type) return true;
  if (type == AttrType::kFloat) return value.type == AttrType::kInt;
  if (type == AttrType::kIntList) return value.type == AttrType::kInt;
  if (type == AttrType::kInt && int_or_list) return value.type == AttrType::kIntList;
  return false;
}

namespace {

bool InRange(const AttrValue& value, int64_t lo, int64_t hi) {
  if (value.type == AttrType::kInt) return lo <= value.i && value.i <= hi;
  if (value.type != AttrType::kIntList) return false;
  for (int64_t v : value.ints)
    if (v < lo || v > hi) return false;
  return true;
}

// A list is in a domain of int choices when each element is one of them.
bool InChoices(const AttrValue& value, const std::vector<AttrValue>& choices) {
  for (const auto& c : choices)
    if (c == value) return true;
  if (value.type == AttrType::kFloat || value.type == AttrType::kInt) {
    for (const auto& c : choices)
      if ((c.type == AttrType::kFloat || c.type == AttrType::kInt) &&
          c.AsFloat() == value.AsFloat())
        return true;
  }
  if (value.type != AttrType::kIntList || value.ints.empty()) return false;
  for (int64_t v : value.ints)
    if (!InChoices(AttrValue::Int(v), choices)) return false;
  return true;
}

}  // namespace

bool AttrSpec::InDomain(const AttrValue& value, int rank) const {
  if (!Accepts(value)) return false;
  if (value.is_none()) return nullable;
  switch (domain) {
    case AttrDomain::kChoices:
      return InChoices(value, choices);
    case AttrDomain::kIntRange:
      return InRange(value, min, max);
    case AttrDomain::kDim:
      return InRange(value, -static_cast<int64_t>(rank), rank - 1);
    case AttrDomain::kFree:
      return true;
  }
  return false;
}

}  // namespace drtriton

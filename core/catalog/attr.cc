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
    case AttrType::kNone: return "None";
    case AttrType::kBool: return b ? "True" : "False";
    case AttrType::kInt: return std::to_string(i);
    case AttrType::kFloat: return FloatLiteral(f);
    case AttrType::kString: return "'" + s + "'";
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
    case AttrType::kNone: return true;
    case AttrType::kBool: return b == other.b;
    case AttrType::kInt: return i == other.i;
    case AttrType::kFloat: return f == other.f;
    case AttrType::kIntList: return ints == other.ints;
    case AttrType::kString: return s == other.s;
  }
  return false;
}

}  // namespace drtriton

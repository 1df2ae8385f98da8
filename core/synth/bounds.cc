#include "synth/bounds.h"

#include <cmath>
#include <sstream>

namespace drtriton::synth {
namespace {

// Gecode's IntVar range is about +-2^31; dims stay well inside so that the products the
// model posts on IntVars (kernel * output size, groups * channels) cannot overflow.
constexpr int64_t kMaxDim = int64_t{1} << 24;
constexpr int kMaxRank = 8;

struct Field {
  const char* name;
  double SynthBounds::*as_double;
  int64_t SynthBounds::*as_int;
};

const std::vector<Field>& Fields() {
  static const std::vector<Field> kFields = {
      {"dim_min", nullptr, &SynthBounds::dim_min},
      {"dim_max", nullptr, &SynthBounds::dim_max},
      {"elem_min", &SynthBounds::elem_min, nullptr},
      {"elem_max", &SynthBounds::elem_max, nullptr},
      {"flops_min", &SynthBounds::flops_min, nullptr},
      {"flops_max", &SynthBounds::flops_max, nullptr},
      {"max_rank", nullptr, &SynthBounds::max_rank},
      {"kernel_max", nullptr, &SynthBounds::kernel_max},
      {"fail_limit", nullptr, &SynthBounds::fail_limit},
      {"max_attempts", nullptr, &SynthBounds::max_attempts},
  };
  return kFields;
}

}  // namespace

const std::vector<std::string>& SynthBounds::FieldNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const auto& f : Fields()) names.emplace_back(f.name);
    return names;
  }();
  return kNames;
}

Result<bool> SynthBounds::Set(std::string_view name, double value) {
  for (const auto& f : Fields()) {
    if (name != f.name) continue;
    if (f.as_double) {
      this->*f.as_double = value;
      return true;
    }
    if (value != std::floor(value) || std::fabs(value) > 9.0e15) {
      return MakeError(std::string(name) + " must be an integer, got " + std::to_string(value));
    }
    this->*f.as_int = static_cast<int64_t>(value);
    return true;
  }
  std::string known;
  for (const auto& n : FieldNames()) known += (known.empty() ? "" : ", ") + n;
  return MakeError("unknown bound '" + std::string(name) + "' (known: " + known + ")");
}

double SynthBounds::Get(std::string_view name) const {
  for (const auto& f : Fields()) {
    if (name != f.name) continue;
    return f.as_double ? this->*f.as_double : static_cast<double>(this->*f.as_int);
  }
  return std::nan("");
}

Result<bool> SynthBounds::Validate() const {
  auto fail = [](const std::string& why) { return MakeError("impossible bounds: " + why); };
  if (dim_min < 1) return fail("dim_min must be >= 1");
  if (dim_max < dim_min) return fail("dim_max < dim_min");
  if (dim_max > kMaxDim) return fail("dim_max must be <= 2^24 (solver integer range)");
  if (!(elem_min >= 1)) return fail("elem_min must be >= 1");
  if (!(elem_max >= elem_min)) return fail("elem_max < elem_min");
  if (elem_max < static_cast<double>(dim_min))
    return fail("elem_max is below dim_min: no tensor fits");
  const double largest_tensor = std::pow(static_cast<double>(dim_max), static_cast<double>(max_rank));
  if (elem_min > largest_tensor)
    return fail("elem_min exceeds dim_max^max_rank: no tensor is large enough");
  if (!(flops_min >= 0)) return fail("flops_min must be >= 0");
  if (!(flops_max >= flops_min)) return fail("flops_max < flops_min");
  if (!(flops_max > 0)) return fail("flops_max must be > 0");
  if (max_rank < 1 || max_rank > kMaxRank) return fail("max_rank must be in [1, 8]");
  if (kernel_max < 1 || kernel_max > 64) return fail("kernel_max must be in [1, 64]");
  if (kernel_max < dim_min) return fail("kernel_max < dim_min: no conv or pool window fits");
  if (fail_limit < 1) return fail("fail_limit must be >= 1");
  if (max_attempts < 1) return fail("max_attempts must be >= 1");
  return true;
}

std::string SynthBounds::ToString() const {
  std::ostringstream out;
  bool first = true;
  for (const auto& f : Fields()) {
    out << (first ? "" : ", ") << f.name << "=" << Get(f.name);
    first = false;
  }
  return out.str();
}

Result<SynthBounds> Preset(std::string_view name) {
  SynthBounds b;  // the defaults are the paper's
  if (name == "paper") return b;
  if (name == "tiny") {
    b.dim_min = 1;
    b.dim_max = 16;
    b.elem_min = 1;
    b.elem_max = 4096;
    b.flops_min = 0;
    b.flops_max = 1 << 20;
    b.max_rank = 4;
    b.kernel_max = 3;
    return b;
  }
  std::string known;
  for (const auto& n : PresetNames()) known += (known.empty() ? "" : ", ") + n;
  return MakeError("unknown preset '" + std::string(name) + "' (known: " + known + ")");
}

const std::vector<std::string>& PresetNames() {
  static const std::vector<std::string> kNames = {"paper", "tiny"};
  return kNames;
}

}  // namespace drtriton::synth

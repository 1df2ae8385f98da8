// Bounds of a synthesis run: dimension sizes, per-tensor elements, the program's FLOPs
// window, ranks and kernel sizes.  Presets give the paper's values (Appendix B) and a tiny
// configuration for CPU tests; every field can be overridden by name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace drtriton::synth {

struct SynthBounds {
  int64_t dim_min = 1;             // every tensor dimension
  int64_t dim_max = 1 << 15;
  double elem_min = 32;            // elements of every computed tensor and first input
  double elem_max = 4294967296.0;  // elements of every tensor (2^32)
  double flops_min = 17179869184.0;  // program FLOPs (2^34), the catalog's convention
  double flops_max = 34359738368.0;  // 2^35
  int64_t max_rank = 5;            // rank of any tensor
  int64_t kernel_max = 16;         // conv/pool window per spatial dim (not in the paper)
  int64_t fail_limit = 64;         // solver failures per shape solve before resampling
  int64_t max_attempts = 400;      // DAGs tried per program before declaring bounds impossible

  // Field names accepted by Set(), in a stable order (for --help and the Python API).
  static const std::vector<std::string>& FieldNames();
  // Sets one field by name; errors name the field and the accepted values.
  Result<bool> Set(std::string_view name, double value);
  double Get(std::string_view name) const;
  // Rejects bounds that no program can meet, with a message saying which and why.
  Result<bool> Validate() const;
  std::string ToString() const;
};

// "paper": dims 1..2^15, elements 2^5..2^32, program FLOPs 2^34..2^35 (Appendix B).
// "tiny": small enough for Triton's CPU interpreter (well under a second per program).
Result<SynthBounds> Preset(std::string_view name);
const std::vector<std::string>& PresetNames();

}  // namespace drtriton::synth

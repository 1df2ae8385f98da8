// Integer arithmetic the shape rules and the code generator share.
#pragma once

#include <cstdint>

namespace drtriton {

// Floor division, as PyTorch's div_rtn (the numerator may be negative: a pool's padding).
inline int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

}  // namespace drtriton

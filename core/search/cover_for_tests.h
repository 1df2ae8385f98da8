// Covers the search's tests build by hand.
#pragma once

#include <vector>

#include "search/cover.h"

namespace drtriton::search {

// Every node of an n-node program as its own PyTorch segment.
inline std::vector<Segment> AllPyTorch(int n) {
  std::vector<Segment> cover;
  for (int i = 0; i < n; ++i) cover.push_back({i, i + 1, false});
  return cover;
}

}  // namespace drtriton::search

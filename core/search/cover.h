// The search's selection (paper §4): the cheapest cover of a program's node sequence by
// verified fused fragments and single operators left in PyTorch, by dynamic programming.
#pragma once

#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/program.h"

namespace drtriton::search {

inline constexpr double kNoCandidate = std::numeric_limits<double>::infinity();

// Nodes [start, end): one fused kernel (`fused`) or one PyTorch operator (end = start + 1).
struct Segment {
  int start = 0;
  int end = 0;
  bool fused = false;
  bool operator==(const Segment& o) const {
    return start == o.start && end == o.end && fused == o.fused;
  }
};

// fragment_costs[{i, j}]: cost of the best verified kernel for nodes [i, j) (absent or
// kNoCandidate: none); op_costs[i]: cost of node i in PyTorch.  Returns the cover in node
// order whose summed cost is least; on a tie the cover with fewer fused kernels wins (a
// kernel that is not faster is not worth its risk).
std::vector<Segment> BestCover(int n_ops,
                               const std::map<std::pair<int, int>, double>& fragment_costs,
                               const std::vector<double>& op_costs);

// A cover as the skeleton of the hybrid candidate: which parent values each segment reads
// and which it must hand on (read by a later segment or returned).  A PyTorch segment is one
// node, or the several nodes of a concatenation spelled as a sum of padded parts, joined
// into one torch.cat line (padded_sums.h).
struct PlannedSegment {
  Segment segment;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string torch_line;  // for a PyTorch segment: `t3 = torch.add(t2, x1)`, `t9 = torch.cat(..)`
};

std::vector<PlannedSegment> PlanHybrid(const Program& program, const std::vector<Segment>& cover);

// How many times each value is read: by a node, or as a program output (the joins of
// PyTorch lines, padded_sums.h and strided_slices.h, join only values read once).
std::vector<int> ReadCounts(const Program& program);

// The hybrid's entry point: `def triton_fused_operator(<inputs>):` whose fused segments call
// `fragment_<k>(...)` (k counts fused segments from 0) and whose other lines are the
// program's own PyTorch lines.  The caller defines fragment_<k> from each kernel.
std::string RenderHybrid(const Program& program, const std::vector<Segment>& cover);

}  // namespace drtriton::search

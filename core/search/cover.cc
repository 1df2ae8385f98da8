#include "search/cover.h"

#include <cassert>
#include <sstream>
#include <unordered_set>

#include "search/padded_sums.h"
#include "search/strided_slices.h"

namespace drtriton::search {
namespace {

// Best cover of the first j nodes: its cost, its number of kernels (the tie-break), and
// the segment that ends it.
struct Prefix {
  double cost = kNoCandidate;
  int kernels = 0;
  Segment last;
};

bool Better(double cost, int kernels, const Prefix& than) {
  if (cost != than.cost) return cost < than.cost;
  return kernels < than.kernels;
}

// The program's own line for each node result, from its printed task.
std::string TorchLine(const std::string& printed, const std::string& result) {
  const std::string prefix = "    " + result + " = ";
  std::istringstream lines(printed);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(prefix, 0) == 0) return line.substr(4);
  assert(false && "every node prints one line");
  return "";
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

std::vector<Segment> BestCover(int n_ops,
                               const std::map<std::pair<int, int>, double>& fragment_costs,
                               const std::vector<double>& op_costs) {
  assert(static_cast<int>(op_costs.size()) == n_ops && "one PyTorch cost per operator");
  std::vector<Prefix> best(static_cast<size_t>(n_ops) + 1);
  best[0].cost = 0.0;
  for (int j = 1; j <= n_ops; ++j) {
    Prefix& here = best[static_cast<size_t>(j)];
    const Prefix& before = best[static_cast<size_t>(j - 1)];
    here = {before.cost + op_costs[static_cast<size_t>(j - 1)], before.kernels, {j - 1, j, false}};
    for (const auto& [range, cost] : fragment_costs) {
      if (range.second != j || range.first < 0 || range.first >= j) continue;
      const Prefix& from = best[static_cast<size_t>(range.first)];
      if (Better(from.cost + cost, from.kernels + 1, here))
        here = {from.cost + cost, from.kernels + 1, {range.first, j, true}};
    }
  }
  std::vector<Segment> cover;
  for (int j = n_ops; j > 0; j = cover.back().start)
    cover.push_back(best[static_cast<size_t>(j)].last);
  return {cover.rbegin(), cover.rend()};
}

std::vector<PlannedSegment> PlanHybrid(const Program& program, const std::vector<Segment>& cover) {
  // Values a segment must hand on: read by a later segment or returned.  Walk backwards
  // so that `live` holds what the segments after the current one read.
  std::unordered_set<int32_t> live;
  for (ValueId id : program.outputs()) live.insert(id.index);
  const std::string printed = program.Print();
  std::vector<PlannedSegment> plan(cover.size());
  for (size_t s = cover.size(); s-- > 0;) {
    PlannedSegment& planned = plan[s];
    planned.segment = cover[s];
    std::unordered_set<int32_t> defined, read;
    for (int i = cover[s].start; i < cover[s].end; ++i)
      defined.insert(program.node(NodeId{i}).result.index);
    for (int i = cover[s].start; i < cover[s].end; ++i) {
      const ValueId result = program.node(NodeId{i}).result;
      if (live.count(result.index)) planned.outputs.push_back(program.value(result).name);
      for (ValueId t : program.node(NodeId{i}).tensors) {
        if (!t.valid() || defined.count(t.index) || !read.insert(t.index).second) continue;
        planned.inputs.push_back(program.value(t).name);
      }
    }
    for (int32_t d : defined) live.erase(d);
    for (int32_t r : read) live.insert(r);
    if (!cover[s].fused)
      planned.torch_line =
          TorchLine(printed, program.value(program.node(NodeId{cover[s].start}).result).name);
  }
  return JoinStridedSlices(program, JoinPaddedSums(program, std::move(plan)));
}

std::vector<int> ReadCounts(const Program& program) {
  std::vector<int> reads(program.values().size(), 0);
  for (const Node& node : program.nodes())
    for (ValueId t : node.tensors)
      if (t.valid()) ++reads[static_cast<size_t>(t.index)];
  for (ValueId id : program.outputs()) ++reads[static_cast<size_t>(id.index)];
  return reads;
}

std::string RenderHybrid(const Program& program, const std::vector<Segment>& cover) {
  std::vector<std::string> params, results;
  for (ValueId id : program.inputs()) params.push_back(program.value(id).name);
  for (ValueId id : program.outputs()) results.push_back(program.value(id).name);
  std::string text = "def triton_fused_operator(" + Join(params) + "):\n";
  int kernel = 0;
  for (const PlannedSegment& planned : PlanHybrid(program, cover)) {
    if (!planned.segment.fused) {
      text += "    " + planned.torch_line + "\n";
      continue;
    }
    // A fragment task returns a bare value for one output and a tuple for several, as
    // the names unpack.
    text += "    " + Join(planned.outputs) + " = fragment_" + std::to_string(kernel++) + "(" +
            Join(planned.inputs) + ")\n";
  }
  text += "    return " + Join(results) + "\n";
  return text;
}

}  // namespace drtriton::search

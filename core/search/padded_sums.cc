#include "search/padded_sums.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>

namespace drtriton::search {
namespace {

// A zero pad that widens one dim: the dim and how much it adds before and after.
struct Widening {
  int dim = 0;
  int64_t before = 0;
  int64_t after = 0;
};

std::optional<Widening> ZeroPadAlongOneDim(const Program& program, const Node& node) {
  if (GetOp(node.op).name != "pad" || node.attrs[2].AsFloat() != 0.0) return std::nullopt;
  const std::vector<int64_t>& pads = node.attrs[0].ints;  // (before, after), last dim first
  const int rank = static_cast<int>(program.value(node.result).shape.size());
  std::optional<Widening> widening;
  for (size_t pair = 0; pair + 1 < pads.size(); pair += 2) {
    if (pads[pair] == 0 && pads[pair + 1] == 0) continue;
    if (widening || pads[pair] < 0 || pads[pair + 1] < 0) return std::nullopt;
    widening = Widening{rank - 1 - static_cast<int>(pair / 2), pads[pair], pads[pair + 1]};
  }
  return widening;
}

// One part of the concatenation: the value and the positions [lo, hi) it fills along the dim.
struct Part {
  int64_t lo = 0;
  int64_t hi = 0;
  std::string name;
};

// The parts sorted by position when they lie side by side (each ends where the next starts).
std::optional<std::vector<Part>> SideBySide(std::vector<Part> parts) {
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.lo < b.lo; });
  for (size_t k = 0; k + 1 < parts.size(); ++k)
    if (parts[k].hi != parts[k + 1].lo) return std::nullopt;
  return parts;
}

// `result = torch.cat([parts], dim)`, in F.pad where the parts leave the dim's ends open.
std::string CatLine(const std::string& result, const std::vector<Part>& parts, int dim, int rank,
                    int64_t size) {
  std::string names;
  for (const Part& part : parts) names += (names.empty() ? "" : ", ") + part.name;
  std::string cat = "torch.cat([" + names + "], " + std::to_string(dim) + ")";
  const int64_t before = parts.front().lo, after = size - parts.back().hi;
  if (before == 0 && after == 0) return result + " = " + cat;
  std::string pad;
  for (int d = rank - 1; d > dim; --d) pad += "0, 0, ";
  pad += std::to_string(before) + ", " + std::to_string(after);
  return result + " = F.pad(" + cat + ", [" + pad + "])";
}

// The run of PyTorch segments from plan[first] that is a sum of side-by-side zero-padded
// parts, as one segment; nullopt when none starts there.
class PaddedSumReader {
 public:
  PaddedSumReader(const Program& program, const std::vector<PlannedSegment>& plan)
      : program_(program), plan_(plan), reads_(ReadCounts(program)) {}

  std::optional<std::pair<size_t, PlannedSegment>> From(size_t first) const {
    std::vector<Part> parts;
    std::unordered_set<int32_t> open;  // results of the run no line of it has read yet
    std::optional<Widening> along;
    Shape size;  // the concatenation's, set by the run's first pad
    std::optional<std::pair<size_t, PlannedSegment>> longest;
    for (size_t s = first; s < plan_.size(); ++s) {
      const Segment& segment = plan_[s].segment;
      if (segment.fused || segment.end != segment.start + 1) break;
      const Node& node = program_.node(NodeId{segment.start});
      const Shape& shape = program_.value(node.result).shape;
      if (const auto widening = ZeroPadAlongOneDim(program_, node)) {
        if (along && (widening->dim != along->dim || shape != size)) break;
        if (!node.tensors[0].valid() || open.count(node.tensors[0].index)) break;
        if (!along) along = widening, size = shape;
        const int64_t extent = shape[static_cast<size_t>(widening->dim)];
        parts.push_back({widening->before, extent - widening->after,
                         program_.value(node.tensors[0]).name});
      } else if (!Sums(node, open) || shape != size) {
        break;
      } else {
        open.erase(node.tensors[0].index);
        open.erase(node.tensors[1].index);
      }
      open.insert(node.result.index);
      if (open.size() != 1 || parts.size() < 2) continue;
      if (auto joined = Joined(first, s, parts, *along, size))
        longest = {s + 1, std::move(*joined)};
    }
    return longest;
  }

 private:
  // An add of two values the run made and no one else reads.
  bool Sums(const Node& node, const std::unordered_set<int32_t>& open) const {
    if (GetOp(node.op).name != "add" || node.tensors.size() != 2) return false;
    const ValueId a = node.tensors[0], b = node.tensors[1];
    if (!a.valid() || !b.valid() || a == b) return false;
    for (ValueId t : {a, b})
      if (!open.count(t.index) || reads_[static_cast<size_t>(t.index)] != 1) return false;
    return true;
  }

  std::optional<PlannedSegment> Joined(size_t first, size_t last, const std::vector<Part>& parts,
                                       const Widening& along, const Shape& size) const {
    const auto ordered = SideBySide(parts);
    if (!ordered) return std::nullopt;
    PlannedSegment joined;
    joined.segment = {plan_[first].segment.start, plan_[last].segment.end, false};
    for (const Part& part : parts)
      if (std::find(joined.inputs.begin(), joined.inputs.end(), part.name) == joined.inputs.end())
        joined.inputs.push_back(part.name);
    joined.outputs = plan_[last].outputs;
    const ValueId result = program_.node(NodeId{plan_[last].segment.start}).result;
    const int rank = static_cast<int>(size.size());
    joined.torch_line = CatLine(program_.value(result).name, *ordered, along.dim, rank,
                                size[static_cast<size_t>(along.dim)]);
    return joined;
  }

  const Program& program_;
  const std::vector<PlannedSegment>& plan_;
  std::vector<int> reads_;
};

}  // namespace

std::vector<PlannedSegment> JoinPaddedSums(const Program& program,
                                           std::vector<PlannedSegment> plan) {
  const PaddedSumReader reader(program, plan);
  std::vector<PlannedSegment> joined;
  for (size_t s = 0; s < plan.size();) {
    if (auto run = reader.From(s)) {
      joined.push_back(std::move(run->second));
      s = run->first;
    } else {
      joined.push_back(plan[s++]);
    }
  }
  return joined;
}

}  // namespace drtriton::search

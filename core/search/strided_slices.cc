#include "search/strided_slices.h"

#include <optional>
#include <string>
#include <utility>

namespace drtriton::search {
namespace {

// One dim of the view: position p reads element offset + step * p of the source's dim
// `source` (offsets kept per source dim, since a split leaves two dims on one source dim).
// Positions from `valid` on are a pad's zeros.  A split of a partly padded dim leaves the
// pair constrained: (outer i, inner j) is real only while i * inner.size + j < inner.limit,
// until a select of the inner phase settles it.
struct Axis {
  int source = 0;
  int64_t step = 1;
  int64_t size = 0;
  int64_t valid = 0;
  bool constrained = false;
  int64_t limit = 0;  // the inner dim's of a constrained pair
};

int WrapDim(int64_t dim, size_t rank) {
  return static_cast<int>(dim < 0 ? dim + static_cast<int64_t>(rank) : dim);
}

// The view of one source value that a chain of layout lines builds.
class StridedView {
 public:
  explicit StridedView(const Shape& source) : source_(source), offset_(source.size(), 0) {
    for (size_t d = 0; d < source.size(); ++d)
      axes_.push_back({static_cast<int>(d), 1, source[d], source[d]});
  }

  // Applies `node` (reading the view, making `shape`); false where it is not a view step.
  bool Apply(const Node& node, const Shape& shape) {
    const std::string& op = GetOp(node.op).name;
    if (op == "narrow") return Narrow(WrapDim(node.attrs[0].i, axes_.size()), node.attrs[1].i,
                                      node.attrs[2].i);
    if (op == "select") return Select(WrapDim(node.attrs[0].i, axes_.size()), node.attrs[1].i);
    if (op == "pad") return node.attrs[2].AsFloat() == 0.0 && Pad(node.attrs[0].ints);
    if (op == "reshape") return Split(shape);
    return false;
  }

  // `source[...]` where the view is a strided slice of it: every dim real, dims in order.
  std::optional<std::string> Subscript(const std::string& source) const {
    std::vector<int> axis_of(source_.size(), -1);
    int last = -1;
    for (size_t a = 0; a < axes_.size(); ++a) {
      const Axis& axis = axes_[a];
      if (axis.constrained || axis.valid != axis.size || axis.source <= last) return std::nullopt;
      last = axis.source;
      axis_of[static_cast<size_t>(axis.source)] = static_cast<int>(a);
    }
    std::vector<std::string> index;
    for (size_t d = 0; d < source_.size(); ++d) {
      const int64_t start = offset_[d];
      if (axis_of[d] < 0) {
        index.push_back(std::to_string(start));
        continue;
      }
      const Axis& axis = axes_[static_cast<size_t>(axis_of[d])];
      if (axis.size == 0) return std::nullopt;
      const int64_t stop = start + axis.step * (axis.size - 1) + 1;
      std::string text = start == 0 ? ":" : std::to_string(start) + ":";
      // The stop only where `start::step` would run past the view's last element.
      if ((source_[d] - start + axis.step - 1) / axis.step != axis.size)
        text += std::to_string(stop);
      if (axis.step != 1) text += ":" + std::to_string(axis.step);
      index.push_back(text);
    }
    while (!index.empty() && index.back() == ":") index.pop_back();
    if (index.empty()) return std::nullopt;  // the whole value: nothing to join
    std::string joined;
    for (const std::string& part : index) joined += (joined.empty() ? "" : ", ") + part;
    return source + "[" + joined + "]";
  }

 private:
  bool Narrow(int dim, int64_t start, int64_t length) {
    if (dim < 0 || dim >= static_cast<int>(axes_.size())) return false;
    Axis& axis = axes_[static_cast<size_t>(dim)];
    if (axis.constrained || start < 0 || start + length > axis.valid) return false;
    offset_[static_cast<size_t>(axis.source)] += axis.step * start;
    axis.size = axis.valid = length;
    return true;
  }

  // Zeros after one dim's end (pad lists (before, after) pairs from the last dim backwards).
  bool Pad(const std::vector<int64_t>& pads) {
    std::optional<int> padded;
    int64_t after = 0;
    for (size_t pair = 0; pair + 1 < pads.size(); pair += 2) {
      if (pads[pair] == 0 && pads[pair + 1] == 0) continue;
      if (padded || pads[pair] != 0 || pads[pair + 1] < 0) return false;
      padded = static_cast<int>(axes_.size()) - 1 - static_cast<int>(pair / 2);
      after = pads[pair + 1];
    }
    if (!padded || *padded < 0) return false;
    Axis& axis = axes_[static_cast<size_t>(*padded)];
    if (axis.constrained) return false;
    axis.size += after;
    return true;
  }

  // A reshape that splits one dim into (n, k) and keeps the others.
  bool Split(const Shape& shape) {
    if (shape.size() != axes_.size() + 1) return false;
    size_t d = 0;
    while (d < axes_.size() && axes_[d].size == shape[d]) ++d;
    if (d == axes_.size()) return false;
    for (size_t e = d + 1; e < axes_.size(); ++e)
      if (axes_[e].size != shape[e + 1]) return false;
    const int64_t n = shape[d], k = shape[d + 1];
    Axis whole = axes_[d];
    if (whole.constrained || n * k != whole.size) return false;
    Axis outer{whole.source, whole.step * k, n, n};
    Axis inner{whole.source, whole.step, k, k};
    if (whole.valid < whole.size) outer.constrained = inner.constrained = true;
    inner.limit = whole.valid;
    axes_[d] = outer;
    axes_.insert(axes_.begin() + static_cast<std::ptrdiff_t>(d) + 1, inner);
    return true;
  }

  bool Select(int dim, int64_t index) {
    if (dim < 0 || dim >= static_cast<int>(axes_.size())) return false;
    const Axis axis = axes_[static_cast<size_t>(dim)];
    if (index < 0 || index >= axis.valid) return false;
    if (axis.constrained) {
      // Only the inner phase of a pair settles it: every outer position must stay real.
      if (dim == 0) return false;
      Axis& outer = axes_[static_cast<size_t>(dim) - 1];
      if (!outer.constrained || (outer.size - 1) * axis.size + index >= axis.limit) return false;
      outer.constrained = false;
    }
    offset_[static_cast<size_t>(axis.source)] += axis.step * index;
    axes_.erase(axes_.begin() + dim);
    return true;
  }

  Shape source_;
  std::vector<int64_t> offset_;
  std::vector<Axis> axes_;
};

// The longest run from plan[first] that is a strided slice of one value, as one segment.
std::optional<std::pair<size_t, PlannedSegment>> SliceRunFrom(
    const Program& program, const std::vector<PlannedSegment>& plan, const std::vector<int>& reads,
    size_t first) {
  std::optional<StridedView> view;
  ValueId source, previous;
  std::optional<std::pair<size_t, PlannedSegment>> longest;
  for (size_t s = first; s < plan.size(); ++s) {
    const Segment& segment = plan[s].segment;
    if (segment.fused || segment.end != segment.start + 1) break;
    const Node& node = program.node(NodeId{segment.start});
    if (node.tensors.empty() || !node.tensors[0].valid()) break;
    if (!view) {
      source = node.tensors[0];
      view.emplace(program.value(source).shape);
    } else if (node.tensors[0] != previous || reads[static_cast<size_t>(previous.index)] != 1) {
      break;
    }
    if (!view->Apply(node, program.value(node.result).shape)) break;
    previous = node.result;
    if (s == first) continue;
    if (auto line = view->Subscript(program.value(source).name)) {
      PlannedSegment joined;
      joined.segment = {plan[first].segment.start, segment.end, false};
      joined.inputs = {program.value(source).name};
      joined.outputs = plan[s].outputs;
      joined.torch_line = program.value(node.result).name + " = " + *line;
      longest = {s + 1, std::move(joined)};
    }
  }
  return longest;
}

}  // namespace

std::vector<PlannedSegment> JoinStridedSlices(const Program& program,
                                              std::vector<PlannedSegment> plan) {
  const std::vector<int> reads = ReadCounts(program);
  std::vector<PlannedSegment> joined;
  for (size_t s = 0; s < plan.size();) {
    if (auto run = SliceRunFrom(program, plan, reads, s)) {
      joined.push_back(std::move(run->second));
      s = run->first;
    } else {
      joined.push_back(plan[s++]);
    }
  }
  return joined;
}

}  // namespace drtriton::search

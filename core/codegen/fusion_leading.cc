// Leading statistics (fusion.h Group::leading_stats): row reductions that another reduction's
// kernel over the same rows computes first, in registers, instead of kernels storing them.
// The pattern is statistics of deviations from statistics, written out: a variance's
// sum((x - mean(x))^2), a cosine similarity's dot product of rows divided by their norms, a
// loss over two distances of the same rows.
//
// Where the statistic's value lands: the absorbing kernel binds it as one value a row
// ([BLOCK_O, 1]), so every read must address it by the row alone.  A statistic in keepdim
// form (the input's rank, the reduced dim 1) broadcasts along the reduced dim wherever it is
// read; one without the dim has the anchor result's shape and is read only by the epilogue of
// an anchor of that shape (read against the (rows, R) input it would broadcast along the
// wrong dim, as it does in PyTorch).
#include <algorithm>
#include <vector>

#include "catalog/catalog.h"
#include "codegen/fusion.h"
#include "codegen/kernel.h"

namespace drtriton::codegen {
namespace {

bool IsStatistic(RowKind kind) {
  return kind == RowKind::kSum || kind == RowKind::kMean || kind == RowKind::kMax ||
         kind == RowKind::kMin;
}

int ReducedDim(const Program& program, const Node& reduction) {
  return NormDim(reduction.attrs[0].i, program.value(reduction.tensors[0]).shape.size());
}

// The values stored by other kernels that `from` is computed from inline (through elementwise
// and layout nodes), stopping at `stop` (the anchor's result, bound in its kernel).
std::vector<ValueId> StoredReads(const Program& program, const std::vector<bool>& materialized,
                                 ValueId from, ValueId stop) {
  std::vector<ValueId> todo = {from}, out, seen;
  while (!todo.empty() && seen.size() < 256) {
    const ValueId v = todo.back();
    todo.pop_back();
    if (v == stop || std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
    seen.push_back(v);
    const NodeId producer = program.value(v).producer;
    if (materialized[v.index] || !producer.valid()) {
      out.push_back(v);
      continue;
    }
    if (!IsInlinable(program, producer)) continue;
    for (ValueId t : program.node(producer).tensors)
      if (t.valid()) todo.push_back(t);
  }
  return out;
}

// Whether every reader of `stat`, through values computed inline, is inside `group`'s kernel:
// its anchor or one of `anchors` (the other statistics it computes), or a chain ending in the
// value the group stores or in one of `values` (the statistics' stored values, which the
// kernel computes): no other kernel needs the statistic stored.
bool ReadOnlyBy(const Program& program, const std::vector<std::vector<NodeId>>& users,
                const std::vector<bool>& materialized, const Group& group, ValueId stat,
                const std::vector<NodeId>& anchors, const std::vector<ValueId>& values) {
  const auto inside = [](const auto& list, const auto& x) {
    return std::find(list.begin(), list.end(), x) != list.end();
  };
  std::vector<ValueId> todo = {stat};
  while (!todo.empty()) {
    const ValueId v = todo.back();
    todo.pop_back();
    if (v != stat && IsOutput(program, v) && v != group.output) return false;
    for (NodeId u : users[v.index]) {
      if (u == group.anchor || inside(anchors, u)) continue;
      const ValueId result = program.node(u).result;
      if (!IsInlinable(program, u)) return false;
      if (result == group.output || inside(values, result)) continue;
      if (materialized[result.index]) return false;
      todo.push_back(result);
    }
  }
  return true;
}

// The statistic whose group stores `v` (its result, or the end of an elementwise epilogue of
// its shape), with no other schedule of its own; null otherwise.
const Node* StatisticStoring(const Program& program, const FusionPlan& plan, ValueId v) {
  for (const Group& g : plan.groups)
    if (g.output == v && g.kind == GroupKind::kRows && g.anchor.valid() && !g.broadcast &&
        !g.absorbed.valid() && g.leading_stats.empty() &&
        IsStatistic(GetOp(program.node(g.anchor).op).row))
      return &program.node(g.anchor);
  return nullptr;
}

NodeId StatisticOf(const Program& program, const FusionPlan& plan, ValueId v) {
  return program.value(StatisticStoring(program, plan, v)->result).producer;
}

// Whether the stored value `v` is a statistic (or its epilogue) of `group`'s rows in a form it
// may bind (file comment); `in_input`: read at the input's coordinates (the anchor's input or
// another statistic's), else by the epilogue only.  Who else reads it: ReadOnlyBy.
bool Qualifies(const Program& program, const FusionPlan& plan, const Group& group, ValueId v,
               bool in_input) {
  const Node* stat = StatisticStoring(program, plan, v);
  if (!stat || IsOutput(program, v)) return false;
  const Node& anchor = program.node(group.anchor);
  const Shape& in = program.value(anchor.tensors[0]).shape;
  if (program.value(stat->tensors[0]).shape != in) return false;
  const int dim = ReducedDim(program, anchor);
  if (ReducedDim(program, *stat) != dim) return false;
  Shape keepdim = in;
  keepdim[static_cast<size_t>(dim)] = 1;
  const Shape& shape = program.value(v).shape;
  const bool rows_only =
      shape == program.value(anchor.result).shape && !in_input && !group.broadcast;
  return shape == keepdim || rows_only;
}

// The statistics `group` may compute first, in node order, each with its pass: 0 for those
// that read no other, else one past the last pass of those it reads (a variance's sum of
// squares reads the mean: a z-score's sum is three passes).  Candidates are read by the
// anchor's input or epilogue, or by another candidate's input; a candidate read outside the
// kernel that the candidates make is dropped, until none is.
std::vector<Group::LeadingStat> LeadingStatsOf(const Program& program,
                                               const std::vector<std::vector<NodeId>>& users,
                                               const FusionPlan& plan, const Group& group) {
  const Node& anchor = program.node(group.anchor);
  std::vector<ValueId> found;
  std::vector<ValueId> inputs = {anchor.tensors[0]};  // read at the input's coordinates
  const auto consider = [&](ValueId from, bool in_input) {
    for (ValueId v : StoredReads(program, plan.materialized, from, anchor.result))
      if (std::find(found.begin(), found.end(), v) == found.end() &&
          Qualifies(program, plan, group, v, in_input)) {
        found.push_back(v);
        inputs.push_back(StatisticStoring(program, plan, v)->tensors[0]);
      }
  };
  if (group.output != anchor.result)  // the epilogue's reads (its end is stored: expand it)
    for (ValueId t : program.node(program.value(group.output).producer).tensors)
      if (t.valid()) consider(t, false);
  for (size_t i = 0; i < inputs.size(); ++i) consider(inputs[i], true);
  for (bool dropped = true; dropped;) {
    const std::vector<ValueId> current = found;
    std::vector<NodeId> anchors;
    for (ValueId v : current) anchors.push_back(StatisticOf(program, plan, v));
    found.clear();
    for (ValueId v : current)
      if (ReadOnlyBy(program, users, plan.materialized, group, v, anchors, current))
        found.push_back(v);
    dropped = found.size() != current.size();
  }
  std::vector<Group::LeadingStat> stats;
  for (ValueId v : found) stats.push_back({StatisticOf(program, plan, v), v, 0});
  std::sort(stats.begin(), stats.end(),
            [](const auto& a, const auto& b) { return a.node.index < b.node.index; });
  for (Group::LeadingStat& stat : stats) {  // in node order: those it reads come first
    const ValueId in = program.node(stat.node).tensors[0];
    for (ValueId r : StoredReads(program, plan.materialized, in, ValueId{}))
      for (const Group::LeadingStat& earlier : stats)
        if (earlier.stored == r) stat.pass = std::max(stat.pass, earlier.pass + 1);
  }
  return stats;
}

}  // namespace

void AbsorbLeadingStats(const Program& program, FusionPlan& plan) {
  const auto users = Consumers(program);
  std::vector<NodeId> dropped;
  for (Group& g : plan.groups) {
    if (g.kind != GroupKind::kRows || !g.anchor.valid() || g.absorbed.valid() ||
        g.row_tail.valid() || !IsStatistic(GetOp(program.node(g.anchor).op).row))
      continue;
    const Node& anchor = program.node(g.anchor);
    Shape keepdim = program.value(anchor.tensors[0]).shape;
    keepdim[static_cast<size_t>(ReducedDim(program, anchor))] = 1;
    if (!RowsStayWhole(program.value(anchor.tensors[0]).shape, keepdim)) continue;
    // A group absorbed here is an earlier one (its result is read by a later group), already
    // passed by this loop: a group is never both given and taken.
    for (const Group::LeadingStat& stat : LeadingStatsOf(program, users, plan, g)) {
      if (std::find(dropped.begin(), dropped.end(), stat.node) != dropped.end()) continue;
      g.leading_stats.push_back(stat);
      dropped.push_back(stat.node);
    }
  }
  const auto gone = [&](const Group& g) {
    return g.anchor.valid() && std::find(dropped.begin(), dropped.end(), g.anchor) != dropped.end();
  };
  plan.groups.erase(std::remove_if(plan.groups.begin(), plan.groups.end(), gone),
                    plan.groups.end());
}

}  // namespace drtriton::codegen

// Leading statistics (fusion.h Group::leading_stat): a row reduction that another reduction's
// kernel over the same rows computes first, in registers, instead of a kernel storing it.
// The pattern is a statistic of deviations from a statistic, written out: a variance's
// sum((x - mean(x))^2) with its normalized tail, a logsumexp's sum(exp(x - max(x))).
#include <algorithm>
#include <vector>

#include "catalog/catalog.h"
#include "codegen/fusion.h"

namespace drtriton::codegen {
namespace {

bool IsStatistic(RowKind kind) {
  return kind == RowKind::kSum || kind == RowKind::kMean || kind == RowKind::kMax ||
         kind == RowKind::kMin;
}

// Whether every reader of `stat`, through values computed inline, is `group`'s anchor or ends
// in the value the group stores: no other kernel needs the statistic stored.
bool ReadOnlyBy(const Program& program, const std::vector<std::vector<NodeId>>& users,
                const std::vector<bool>& materialized, const Group& group, ValueId stat) {
  std::vector<ValueId> todo = {stat};
  while (!todo.empty()) {
    const ValueId v = todo.back();
    todo.pop_back();
    if (v != stat && IsOutput(program, v) && v != group.output) return false;
    for (NodeId u : users[v.index]) {
      if (u == group.anchor) continue;
      const ValueId result = program.node(u).result;
      if (!IsInlinable(program, u)) return false;
      if (result == group.output) continue;
      if (materialized[result.index]) return false;
      todo.push_back(result);
    }
  }
  return true;
}

// The statistic that `group`'s anchor input reads inline and that qualifies (fusion.h), or an
// invalid id: a stored reduction over rows of the same shape as the anchor's (the same input
// shape, the same kept shape), with a group of its own that stores its bare result.
NodeId LeadingStatOf(const Program& program, const std::vector<std::vector<NodeId>>& users,
                     const FusionPlan& plan, const Group& group) {
  const Node& anchor = program.node(group.anchor);
  const Shape& in = program.value(anchor.tensors[0]).shape;
  const Shape& kept = program.value(anchor.result).shape;
  std::vector<ValueId> todo = {anchor.tensors[0]};
  for (size_t seen = 0; !todo.empty() && seen < 64; ++seen) {
    const ValueId v = todo.back();
    todo.pop_back();
    const NodeId producer = program.value(v).producer;
    if (!producer.valid()) continue;
    const Node& node = program.node(producer);
    if (!plan.materialized[v.index]) {
      if (IsInlinable(program, producer))
        for (ValueId t : node.tensors)
          if (t.valid()) todo.push_back(t);
      continue;
    }
    if (!IsStatistic(GetOp(node.op).row) || IsOutput(program, v)) continue;
    if (program.value(node.tensors[0]).shape != in || program.value(v).shape != kept) continue;
    const bool bare = std::any_of(plan.groups.begin(), plan.groups.end(), [&](const Group& g) {
      return g.anchor == producer && g.output == v && !g.broadcast && !g.absorbed.valid() &&
             !g.leading_stat.valid();
    });
    if (bare && ReadOnlyBy(program, users, plan.materialized, group, v)) return producer;
  }
  return {};
}

}  // namespace

void AbsorbLeadingStats(const Program& program, FusionPlan& plan) {
  const auto users = Consumers(program);
  std::vector<NodeId> dropped;
  for (Group& g : plan.groups) {
    if (g.kind != GroupKind::kRows || !g.broadcast || g.leading_stat.valid()) continue;
    const RowKind kind = GetOp(program.node(g.anchor).op).row;
    if (kind != RowKind::kSum && kind != RowKind::kMean) continue;
    const NodeId stat = LeadingStatOf(program, users, plan, g);
    if (!stat.valid() || std::find(dropped.begin(), dropped.end(), stat) != dropped.end()) continue;
    g.leading_stat = stat;
    dropped.push_back(stat);
  }
  plan.groups.erase(std::remove_if(plan.groups.begin(), plan.groups.end(),
                                   [&](const Group& g) {
                                     return g.anchor.valid() &&
                                            std::find(dropped.begin(), dropped.end(), g.anchor) !=
                                                dropped.end();
                                   }),
                    plan.groups.end());
}

}  // namespace drtriton::codegen

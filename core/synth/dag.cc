#include "synth/dag.h"

#include "synth/op_rules.h"

namespace drtriton::synth {

const char* RejectName(Reject r) {
  switch (r) {
    case Reject::kNone: return "ok";
    case Reject::kRank: return "rank";
    case Reject::kPositive: return "positive_input";
    case Reject::kIndexDtype: return "index_dtype";
    case Reject::kUnsupported: return "unsupported";
    case Reject::kInfeasible: return "infeasible";
    case Reject::kUnsolved: return "unsolved";
    case Reject::kRefused: return "refused";
    case Reject::kCount: break;
  }
  return "?";
}

const std::vector<OpId>& SynthOps() {
  static const std::vector<OpId> kOps = [] {
    std::vector<OpId> ops;
    const auto& catalog = Catalog();
    for (size_t k = 0; k < catalog.size(); ++k) {
      const OpInfo& op = catalog[k];
      if (op.kind == OpKind::kCompute && op.rule != ShapeRule::kReduceAll &&
          !op.has(kFrontendOnly))
        ops.push_back(static_cast<OpId>(k));
    }
    return ops;
  }();
  return kOps;
}

#ifdef DRTRITON_HAVE_GECODE

bool SampleDag(int level, const SynthBounds& bounds, Rng& rng, ShapeModel& model, Dag& dag,
               std::vector<OpCounters>& counters) {
  std::vector<OpId> order = SynthOps();
  for (int step = 0; step < level; ++step) {
    const bool last = step + 1 == level;
    // Trying the operators in a fresh random order and taking the first that fits draws
    // uniformly among the applicable ones.
    rng.Shuffle(order);
    bool placed = false;
    for (OpId id : order) {
      OpCounters& count = counters[static_cast<size_t>(id)];
      ++count.tried;
      Reject why = Precheck(GetOp(id), last, dag, bounds);
      if (why == Reject::kNone) {
        const size_t num_tensors = dag.tensors.size();
        const size_t num_nodes = dag.nodes.size();
        model.Checkpoint();
        why = AppendOp(id, last, bounds, rng, model, dag);
        if (why == Reject::kNone && !model.Propagate()) why = Reject::kInfeasible;
        if (why != Reject::kNone) {
          model.Rollback();
          dag.tensors.resize(num_tensors);
          dag.nodes.resize(num_nodes);
        }
      }
      if (why == Reject::kNone) {
        placed = true;
        break;
      }
      ++count.rejected[static_cast<int>(why)];
    }
    if (!placed) return false;
  }
  return true;
}

#endif  // DRTRITON_HAVE_GECODE

}  // namespace drtriton::synth

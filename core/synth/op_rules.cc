// AppendOp: one operator's structure and constraints, posted by its ShapeRule's family
// (op_rules_<family>.cc, sharing op_rules_context.h).
#include "synth/op_rules.h"

#ifdef DRTRITON_HAVE_GECODE

#include <algorithm>
#include <utility>

#include "synth/op_rules_context.h"

namespace drtriton::synth {
namespace {

using rules::Ctx;

Reject PostRule(Ctx& c, int primary) {
  switch (c.op.rule) {
    case ShapeRule::kBroadcast: return rules::PostBroadcast(c, primary);
    case ShapeRule::kReduce: return rules::PostReduce(c, primary);
    case ShapeRule::kSameAsInput: return rules::PostSameAsInput(c, primary);
    case ShapeRule::kMatmul: return rules::PostMatmul(c, primary);
    case ShapeRule::kBmm: return rules::PostBmm(c, primary);
    case ShapeRule::kLinear: return rules::PostLinear(c, primary);
    case ShapeRule::kTranspose: return rules::PostTranspose(c, primary);
    case ShapeRule::kConv: return rules::PostConv(c, primary, /*transposed=*/false);
    case ShapeRule::kConvTranspose: return rules::PostConv(c, primary, /*transposed=*/true);
    case ShapeRule::kPool: return rules::PostPool(c, primary);
    case ShapeRule::kAdaptivePool: return rules::PostAdaptivePool(c, primary);
    case ShapeRule::kCreate:
    case ShapeRule::kReduceAll:
    case ShapeRule::kReshape:  // the layout rules are frontend-only (kFrontendOnly)
    case ShapeRule::kPermute:
    case ShapeRule::kNarrow:
    case ShapeRule::kSelect:
    case ShapeRule::kPad:
    case ShapeRule::kExpand:
    case ShapeRule::kClassLoss: break;  // int64 class indices: no synthesized input is integer
    case ShapeRule::kEmbedding: break;  // int64 row indices: likewise
  }
  return Reject::kUnsupported;
}

bool NeedsPositiveInput(const OpInfo& op) {
  const auto tensors = op.tensor_param_indices();
  return op.has(kPositiveInput) ||
         (!tensors.empty() && op.params[static_cast<size_t>(tensors[0])].positive);
}

}  // namespace

std::vector<int> PrimaryRanks(const OpInfo& op, const SynthBounds& bounds) {
  int lo = std::max(op.min_rank, 1);
  int hi = std::min<int>(op.max_rank, static_cast<int>(bounds.max_rank));
  switch (op.rule) {
    case ShapeRule::kMatmul:
    case ShapeRule::kTranspose: lo = std::max(lo, 2); break;
    case ShapeRule::kBmm: lo = std::max(lo, 3); hi = std::min(hi, 3); break;
    case ShapeRule::kConv:
    case ShapeRule::kConvTranspose:
    case ShapeRule::kPool:
    case ShapeRule::kAdaptivePool:
      lo = std::max(lo, op.spatial_dims + 1);
      hi = std::min(hi, op.spatial_dims + 2);
      break;
    case ShapeRule::kSameAsInput:
      for (const Param& p : op.params)
        if (p.kind != ParamKind::kAttr && p.aux == AuxShape::kChannels) lo = std::max(lo, 2);
      if (op.attr_index("num_groups") >= 0) lo = std::max(lo, 2);
      break;
    case ShapeRule::kCreate:
    case ShapeRule::kReduceAll: return {};
    default: break;
  }
  std::vector<int> ranks;
  for (int r = lo; r <= hi; ++r) ranks.push_back(r);
  return ranks;
}

Reject Precheck(const OpInfo& op, bool last, const Dag& dag, const SynthBounds& bounds) {
  if (op.kind != OpKind::kCompute || op.tensor_param_indices().empty()) return Reject::kUnsupported;
  const std::vector<int> ranks = PrimaryRanks(op, bounds);
  if (ranks.empty()) return Reject::kRank;
  if (op.has(kIndexResult) && !last) return Reject::kIndexDtype;
  const int frontier = dag.frontier();
  if (frontier < 0) return Reject::kNone;
  const DagTensor& t = dag.tensors[static_cast<size_t>(frontier)];
  if (std::find(ranks.begin(), ranks.end(), t.rank()) == ranks.end()) return Reject::kRank;
  if (NeedsPositiveInput(op) && !t.positive) return Reject::kPositive;
  return Reject::kNone;
}

Reject AppendOp(OpId id, bool last, const SynthBounds& bounds, Rng& rng, ShapeModel& model,
                Dag& dag) {
  const OpInfo& op = GetOp(id);
  Ctx c{op, id, last, bounds, rng, model, dag, {}, {}, op.tensor_param_indices(), -1, {}, false};
  c.node.op = id;
  c.node.attrs.resize(static_cast<size_t>(op.num_attrs()));
  c.attr_set.assign(static_cast<size_t>(op.num_attrs()), false);

  int primary = dag.frontier();
  if (primary < 0) {
    const std::vector<int> ranks = PrimaryRanks(op, bounds);
    std::vector<VarId> dims = c.NewDims(rng.Pick(ranks));
    model.Elements(dims, bounds.elem_min, bounds.elem_max);
    primary = c.AddInput(std::move(dims), NeedsPositiveInput(op));
  }
  const int rank = c.T(primary).rank();
  if (const Reject r = PostRule(c, primary); r != Reject::kNone) return r;

  // Attributes the rule left alone come from their catalog domains.
  if (const Reject r = rules::SampleUnsetAttrs(c, rank, /*reject_unmodeled=*/true);
      r != Reject::kNone)
    return r;

  const DagTensor& out = c.T(c.node.output);
  model.Elements(out.dims, bounds.elem_min, bounds.elem_max);
  const std::vector<VarId> flops_dims = c.flops_explicit ? c.flops_dims : c.T(c.flops_ref).dims;
  model.AddFlops(op.flops_per_element, flops_dims, last);
  dag.nodes.push_back(std::move(c.node));
  return Reject::kNone;
}

}  // namespace drtriton::synth

#endif  // DRTRITON_HAVE_GECODE

// Broadcast: n-ary elementwise operators (add, mul, where, lerp, ...).
#include "synth/op_rules_context.h"

#ifdef DRTRITON_HAVE_GECODE

#include <algorithm>
#include <utility>

namespace drtriton::synth::rules {
namespace {

// A secondary operand, chosen before any dim is aligned: the output's rank is the
// largest operand rank, so all ranks must be known first.
struct Operand {
  int existing = -1;  // a reused tensor, or -1 (created once its dims are aligned)
  int rank = 0;
  bool omitted = false;  // an optional tensor passed as None
};

// Omitted, reused, or (rank drawn up to one more than the primary's) to be created.
Operand ChooseOperand(Ctx& c, size_t k, int primary_rank) {
  Operand operand;
  if (c.Optional(k) && c.rng.Bernoulli(kOmitOptional)) {
    operand.omitted = true;
    return operand;
  }
  operand.existing = c.PickExisting(1, static_cast<int>(c.bounds.max_rank));
  operand.rank =
      operand.existing >= 0
          ? c.T(operand.existing).rank()
          : static_cast<int>(c.rng.Int(1, std::min<int64_t>(c.bounds.max_rank, primary_rank + 1)));
  return operand;
}

}  // namespace

// Right-aligned; every secondary dim equals the output dim or is 1.  The first input
// always spans its dims fully (the output keeps its shape there), secondaries may add
// leading dims.
Reject PostBroadcast(Ctx& c, int primary) {
  const int rank = c.T(primary).rank();
  std::vector<Operand> others;
  int out_rank = rank;
  for (size_t k = 1; k < c.tensor_params.size(); ++k) {
    others.push_back(ChooseOperand(c, k, rank));
    out_rank = std::max(out_rank, others.back().rank);
  }
  std::vector<VarId> out(static_cast<size_t>(out_rank - rank), -1);  // leading: unknown
  const std::vector<VarId>& primary_dims = c.T(primary).dims;
  out.insert(out.end(), primary_dims.begin(), primary_dims.end());
  c.node.tensors = {primary};
  for (size_t j = 0; j < others.size(); ++j) {
    const Operand& operand = others[j];
    if (operand.omitted) {
      c.node.tensors.push_back(-1);
      continue;
    }
    if (operand.existing >= 0) {
      const std::vector<VarId> existing_dims = c.T(operand.existing).dims;
      AlignBroadcastOperand(c, out, operand.rank, &existing_dims);
      c.node.tensors.push_back(operand.existing);
    } else {
      std::vector<VarId> dims = AlignBroadcastOperand(c, out, operand.rank, nullptr);
      c.node.tensors.push_back(c.AddInputFor(j + 1, std::move(dims)));
    }
  }
  FinishFlopsPerOutputElement(c, std::move(out));
  return Reject::kNone;
}

}  // namespace drtriton::synth::rules

#endif  // DRTRITON_HAVE_GECODE

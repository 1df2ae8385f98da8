// Contractions: torch.matmul (rank >= 2), torch.bmm and F.linear.  The second operand is
// reused from the candidate list (its shape then constrains the first) or created to fit.
#include "synth/op_rules_context.h"

#ifdef DRTRITON_HAVE_GECODE

#include <algorithm>
#include <utility>

namespace drtriton::synth::rules {
namespace {

// 2 * M * N * K-style FLOPs: every output element costs the contracted dim `k`.
void FinishContraction(Ctx& c, std::vector<VarId> out, VarId k) {
  std::vector<VarId> flops_dims = out;
  flops_dims.push_back(k);
  FinishExplicitFlops(c, std::move(out), std::move(flops_dims));
}

}  // namespace

// (..., M, K) @ (..., K, N) -> (broadcast ..., M, N).
Reject PostMatmul(Ctx& c, int primary) {
  const std::vector<VarId> a = c.T(primary).dims;
  const int ra = static_cast<int>(a.size());
  const VarId m = a[static_cast<size_t>(ra - 2)];
  const VarId k = a[static_cast<size_t>(ra - 1)];
  const int existing = c.PickExisting(2, static_cast<int>(c.bounds.max_rank));
  const int rb = existing >= 0
                     ? c.T(existing).rank()
                     : static_cast<int>(c.rng.Int(2, std::min<int64_t>(c.bounds.max_rank, ra + 1)));
  // The output's batch dims: a's, right-aligned, with leading slots only b has.
  std::vector<VarId> out(static_cast<size_t>(std::max(0, rb - ra)), -1);
  out.insert(out.end(), a.begin(), a.end() - 2);
  int other = existing;
  VarId n;
  if (existing >= 0) {
    const std::vector<VarId> b = c.T(existing).dims;
    const std::vector<VarId> batch_b(b.begin(), b.end() - 2);
    c.model.Equal(b[static_cast<size_t>(rb - 2)], k);
    n = b[static_cast<size_t>(rb - 1)];
    AlignBroadcastOperand(c, out, rb - 2, &batch_b);
  } else {
    std::vector<VarId> b = AlignBroadcastOperand(c, out, rb - 2, nullptr);
    n = c.model.Dim();
    b.push_back(k);
    b.push_back(n);
    other = c.AddInputFor(1, std::move(b));
  }
  c.node.tensors = {primary, other};
  out.push_back(m);
  out.push_back(n);
  FinishContraction(c, std::move(out), k);
  return Reject::kNone;
}

// (B, M, K) @ (B, K, N).
Reject PostBmm(Ctx& c, int primary) {
  const std::vector<VarId> a = c.T(primary).dims;
  int other = c.PickExisting(3, 3);
  VarId n;
  if (other >= 0) {
    const std::vector<VarId> b = c.T(other).dims;
    c.model.Equal(b[0], a[0]);
    c.model.Equal(b[1], a[2]);
    n = b[2];
  } else {
    n = c.model.Dim();
    other = c.AddInputFor(1, {a[0], a[2], n});
  }
  c.node.tensors = {primary, other};
  FinishContraction(c, {a[0], a[1], n}, a[2]);
  return Reject::kNone;
}

// (..., K), weight (N, K), bias (N,).
Reject PostLinear(Ctx& c, int primary) {
  const std::vector<VarId> in = c.T(primary).dims;
  const VarId k = in.back();
  int weight = c.PickExisting(2, 2);
  VarId n;
  if (weight >= 0) {
    const std::vector<VarId> w = c.T(weight).dims;
    c.model.Equal(w[1], k);
    n = w[0];
  } else {
    n = c.model.Dim();
    weight = c.AddInputFor(1, {n, k});
  }
  c.node.tensors = {primary, weight};
  AddOptionalBias(c, n);
  std::vector<VarId> out(in.begin(), in.end() - 1);
  out.push_back(n);
  FinishContraction(c, std::move(out), k);
  return Reject::kNone;
}

}  // namespace drtriton::synth::rules

#endif  // DRTRITON_HAVE_GECODE

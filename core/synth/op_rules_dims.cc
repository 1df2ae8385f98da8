// Rules that pick dims by index: reductions over one dim (sum, mean, amax, argmax, ...)
// and transpose.
#include "synth/op_rules_context.h"

#ifdef DRTRITON_HAVE_GECODE

#include <utility>

namespace drtriton::synth::rules {

// Drop `dim`, or keep it as 1 with keepdim.  A rank-1 input keeps its dim (a 0-d result
// would end the program).
Reject PostReduce(Ctx& c, int primary) {
  const std::vector<VarId> in = c.T(primary).dims;
  const int rank = static_cast<int>(in.size());
  const int dim = static_cast<int>(c.rng.Int(0, rank - 1));
  c.SetAttr("dim", AttrValue::Int(PrintedDim(dim, rank, c.rng)));
  bool keepdim = rank == 1;
  const int keep_pos = c.AttrPos("keepdim");
  if (keep_pos >= 0 && !keepdim) {
    const AttrValue v = SampleFromDomain(c.Spec(keep_pos), rank, c.rng);
    keepdim = v.type == AttrType::kBool && v.b;
  }
  if (keep_pos < 0 && rank == 1) return Reject::kRank;
  if (keep_pos >= 0) c.SetAttr("keepdim", AttrValue::Bool(keepdim));
  std::vector<VarId> out = in;
  if (keepdim)
    out[static_cast<size_t>(dim)] = c.model.One();
  else
    out.erase(out.begin() + dim);
  c.node.tensors = {primary};
  FinishFlopsPerElementOf(c, primary, std::move(out));
  return Reject::kNone;
}

// transpose(dim0, dim1): two distinct dims swap.
Reject PostTranspose(Ctx& c, int primary) {
  std::vector<VarId> out = c.T(primary).dims;
  const int rank = static_cast<int>(out.size());
  // Both indices are drawn before either is printed (the Rng order the synthesizer has
  // always used); dim1 skips over dim0 so that the two differ.
  const int d0 = static_cast<int>(c.rng.Int(0, rank - 1));
  int d1 = static_cast<int>(c.rng.Int(0, rank - 2));
  if (d1 >= d0) ++d1;
  c.SetAttr("dim0", AttrValue::Int(PrintedDim(d0, rank, c.rng)));
  c.SetAttr("dim1", AttrValue::Int(PrintedDim(d1, rank, c.rng)));
  std::swap(out[static_cast<size_t>(d0)], out[static_cast<size_t>(d1)]);
  c.node.tensors = {primary};
  FinishFlopsPerOutputElement(c, std::move(out));
  return Reject::kNone;
}

}  // namespace drtriton::synth::rules

#endif  // DRTRITON_HAVE_GECODE

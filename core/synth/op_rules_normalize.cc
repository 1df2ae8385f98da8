// Same shape as the input: softmax, scans and normalizations (batch/layer/group/instance
// norm).  Secondary tensors have the shapes the catalog's AuxShape names: (C,) or
// normalized_shape.
#include "synth/op_rules_context.h"

#ifdef DRTRITON_HAVE_GECODE

#include <algorithm>
#include <utility>

namespace drtriton::synth::rules {
namespace {

// PyTorch refuses statistics over a single value ("Expected more than 1 value per
// channel"): such products get a lower bound of 2 and no upper bound of their own.
constexpr double kNoMax = 1e300;

// normalized_shape: the last 1..3 dims of the input (empty when the operator has none).
std::vector<VarId> ChooseNormalizedShape(Ctx& c, const std::vector<VarId>& in) {
  if (c.AttrPos("normalized_shape") < 0) return {};
  const int m = static_cast<int>(c.rng.Int(1, std::min(static_cast<int>(in.size()), 3)));
  std::vector<VarId> normalized(in.end() - m, in.end());
  c.SetVarAttr("normalized_shape", normalized, /*always_list=*/true);
  return normalized;
}

// num_groups divides the channels (dim 1).
Reject PostNumGroups(Ctx& c, const std::vector<VarId>& in) {
  if (c.AttrPos("num_groups") < 0) return Reject::kNone;
  if (in.size() < 2) return Reject::kRank;
  const VarId groups = DomainVar(c, "num_groups", 1, c.bounds.dim_max);
  if (groups < 0) return Reject::kUnsupported;
  const VarId per_group = c.model.Dim();
  c.model.Product(groups, per_group, in[1]);
  c.SetVarAttr("num_groups", {groups});
  // F.group_norm: more than one value per (sample, group) is required.
  std::vector<VarId> per_stat = {in[0], per_group};
  per_stat.insert(per_stat.end(), in.begin() + 2, in.end());
  c.model.Elements(per_stat, 2, kNoMax);
  return Reject::kNone;
}

// Statistics computed from the input need more than one value each.
void PostStatisticSizes(Ctx& c, const std::vector<VarId>& in) {
  const int rank = static_cast<int>(in.size());
  if (c.BoolAttr("training") == true) {  // batch statistics: > 1 value per channel
    std::vector<VarId> per_channel = in;
    if (rank >= 2) per_channel.erase(per_channel.begin() + 1);
    c.model.Elements(per_channel, 2, kNoMax);
  }
  if (c.BoolAttr("use_input_stats") == true) {  // instance statistics: > 1 spatial element
    c.model.Elements(std::vector<VarId>(in.begin() + std::min(rank, 2), in.end()), 2, kNoMax);
  }
}

// The shape the catalog gives an auxiliary tensor (weight, bias, running_mean, ...).
Reject AuxDims(const Param& p, const std::vector<VarId>& in, const std::vector<VarId>& normalized,
               std::vector<VarId>& dims) {
  switch (p.aux) {
    case AuxShape::kChannels:
      if (in.size() < 2) return Reject::kRank;
      dims = {in[1]};
      return Reject::kNone;
    case AuxShape::kNormalized:
      if (normalized.empty()) return Reject::kUnsupported;
      dims = normalized;
      return Reject::kNone;
    case AuxShape::kFree:
      return Reject::kUnsupported;
  }
  return Reject::kUnsupported;
}

// Tensor params after the input.  Running statistics come as a pair (PyTorch wants both or
// neither), required when the operator does not compute its own statistics.
Reject AddAuxTensors(Ctx& c, const std::vector<VarId>& in, const std::vector<VarId>& normalized) {
  const bool need_running_stats =
      c.BoolAttr("use_input_stats") == false || c.BoolAttr("training") == false;
  const bool omit_running_stats = !need_running_stats && c.rng.Bernoulli(kOmitOptional);
  for (size_t j = 1; j < c.tensor_params.size(); ++j) {
    const Param& p = c.TensorParam(j);
    const bool running = p.name.rfind("running_", 0) == 0;
    // Drawn even for a required param (the Rng order the synthesizer has always used).
    const bool omit = running ? omit_running_stats : c.rng.Bernoulli(kOmitOptional);
    if (c.Optional(j) && omit) {
      c.node.tensors.push_back(-1);
      continue;
    }
    std::vector<VarId> dims;
    if (const Reject r = AuxDims(p, in, normalized, dims); r != Reject::kNone) return r;
    c.node.tensors.push_back(c.AddInputFor(j, std::move(dims)));
  }
  return Reject::kNone;
}

}  // namespace

Reject PostSameAsInput(Ctx& c, int primary) {
  const std::vector<VarId> in = c.T(primary).dims;
  const std::vector<VarId> normalized = ChooseNormalizedShape(c, in);
  if (const Reject r = PostNumGroups(c, in); r != Reject::kNone) return r;
  // The remaining attributes (training, use_input_stats, eps, momentum, dim) now, since
  // the statistics' sizes and the running-statistics wiring depend on them.
  SampleUnsetAttrs(c, static_cast<int>(in.size()), /*reject_unmodeled=*/false);
  PostStatisticSizes(c, in);
  c.node.tensors = {primary};
  if (const Reject r = AddAuxTensors(c, in, normalized); r != Reject::kNone) return r;
  FinishFlopsPerElementOf(c, primary, in);
  return Reject::kNone;
}

}  // namespace drtriton::synth::rules

#endif  // DRTRITON_HAVE_GECODE

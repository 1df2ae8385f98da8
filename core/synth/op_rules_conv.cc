// F.convNd and F.conv_transposeNd: input (N, C_in, *S) or (C_in, *S); weight
// (C_out, C_in / groups, *k), transposed (C_in, C_out / groups, *k); bias (C_out,).
// C_in and C_out are multiples of groups.
#include "synth/op_rules_window.h"

#ifdef DRTRITON_HAVE_GECODE

#include <algorithm>
#include <utility>

namespace drtriton::synth::rules {
namespace {

VarId GroupsVar(Ctx& c) {
  if (c.AttrPos("groups") < 0) return c.model.One();
  const VarId groups = DomainVar(c, "groups", 1, c.bounds.dim_max);
  if (groups < 0) return c.model.One();
  c.SetVarAttr("groups", {groups});
  return groups;
}

// Transposed conv, one spatial dim: out = (in - 1) * s - 2p + dil * (k - 1) +
// output_padding + 1, with output_padding < max(stride, dilation).  The output_padding
// variable, or -1 when the catalog's choices leave none.
VarId PostTransposedOutput(Ctx& c, const Window& w, size_t k, int64_t stride, VarId in, VarId out) {
  const int64_t dil = w.dilation[k];
  const VarId output_padding = DomainVar(c, "output_padding", 0, std::max(stride, dil) - 1);
  if (output_padding < 0) return -1;
  c.model.LinearEq(
      {{1, out}, {-stride, in}, {2, w.padding[k]}, {-dil, w.kernel[k]}, {-1, output_padding}},
      1 - stride - dil);
  return output_padding;
}

}  // namespace

Reject PostConv(Ctx& c, int primary, bool transposed) {
  const std::vector<VarId> in = c.T(primary).dims;
  const int n = c.op.spatial_dims;
  const int channel = static_cast<int>(in.size()) - n - 1;  // 1 when batched
  const VarId c_in = in[static_cast<size_t>(channel)];
  const VarId groups = GroupsVar(c);
  const VarId c_out = c.model.Dim();
  const VarId in_per_group = c.model.Dim();
  const VarId out_per_group = c.model.Dim();
  c.model.Product(groups, in_per_group, c_in);
  c.model.Product(groups, out_per_group, c_out);
  const std::vector<int64_t> stride = FixedPerDim(c, "stride", n);
  const std::optional<Window> window = MakeWindow(c, n, /*pool=*/false);
  if (!window) return Reject::kUnsupported;
  const Window& w = *window;
  std::vector<VarId> out(in.begin(), in.begin() + channel);
  out.push_back(c_out);
  std::vector<VarId> output_padding;
  for (size_t k = 0; k < static_cast<size_t>(n); ++k) {
    const VarId x = in[static_cast<size_t>(channel + 1) + k];
    const VarId y = c.model.Dim();
    if (transposed) {
      const VarId op = PostTransposedOutput(c, w, k, stride[k], x, y);
      if (op < 0) return Reject::kUnsupported;
      output_padding.push_back(op);
    } else {
      PostWindowOutput(c, w, k, stride[k], x, y);
    }
    out.push_back(y);
  }
  if (transposed) c.SetVarAttr("output_padding", output_padding);
  std::vector<VarId> weight = transposed ? std::vector<VarId>{c_in, out_per_group}
                                         : std::vector<VarId>{c_out, in_per_group};
  weight.insert(weight.end(), w.kernel.begin(), w.kernel.end());
  c.node.tensors = {primary, c.AddInputFor(1, weight)};
  AddOptionalBias(c, c_out);
  // 2 * (output positions) * (C_in / groups) * prod(k); transposed: input positions and
  // C_out / groups (torch.utils.flop_counter's convention).
  std::vector<VarId> flops_dims = transposed ? in : out;
  flops_dims.push_back(transposed ? out_per_group : in_per_group);
  FinishExplicitFlops(c, std::move(out), TimesKernel(std::move(flops_dims), w));
  return Reject::kNone;
}

}  // namespace drtriton::synth::rules

#endif  // DRTRITON_HAVE_GECODE

// Pooling over the trailing spatial dims: F.max_poolNd / F.avg_poolNd (a window) and
// F.adaptive_avg_poolNd (an output size).
#include "synth/op_rules_window.h"

#ifdef DRTRITON_HAVE_GECODE

#include <utility>

namespace drtriton::synth::rules {
namespace {

// stride=None (= kernel_size, encoded as 0) when the catalog allows it, half of the time;
// otherwise a fixed value per spatial dim.
std::vector<int64_t> PoolStride(Ctx& c, int n) {
  std::vector<int64_t> stride(static_cast<size_t>(n), 0);
  const int stride_pos = c.AttrPos("stride");
  if (stride_pos < 0) return stride;
  const AttrSpec& spec = c.Spec(stride_pos);
  if ((spec.nullable || spec.default_value.is_none()) && c.rng.Bernoulli(kPoolStrideDefault)) {
    c.SetAttr("stride", AttrValue::None());
    return stride;
  }
  return FixedPerDim(c, "stride", n);
}

}  // namespace

Reject PostPool(Ctx& c, int primary) {
  const std::vector<VarId> in = c.T(primary).dims;
  const int n = c.op.spatial_dims;
  const size_t first_spatial = in.size() - static_cast<size_t>(n);
  const std::optional<Window> window = MakeWindow(c, n, /*pool=*/true);
  if (!window) return Reject::kUnsupported;
  const Window& w = *window;
  c.SetVarAttr("kernel_size", w.kernel);
  const std::vector<int64_t> stride = PoolStride(c, n);
  // ceil_mode changes the formula and return_indices the result type: keep both off.
  c.SetAttr("ceil_mode", AttrValue::Bool(false));
  c.SetAttr("return_indices", AttrValue::Bool(false));
  c.SetAttr("divisor_override", AttrValue::None());
  std::vector<VarId> out(in.begin(), in.begin() + static_cast<long>(first_spatial));
  for (size_t k = 0; k < static_cast<size_t>(n); ++k) {
    const VarId y = c.model.Dim();
    const VarId x = in[first_spatial + k];
    PostWindowOutput(c, w, k, stride[k], x, y);
    // The window fits the unpadded input (avg_pool3d's kernel checks ignore padding).
    c.model.LinearLe({{w.dilation[k], w.kernel[k]}, {-1, x}}, w.dilation[k] - 1);
    out.push_back(y);
  }
  c.node.tensors = {primary};
  FinishExplicitFlops(c, out, TimesKernel(out, w));
  return Reject::kNone;
}

// Any output size up to the input's.
Reject PostAdaptivePool(Ctx& c, int primary) {
  const std::vector<VarId> in = c.T(primary).dims;
  const int n = c.op.spatial_dims;
  const size_t first_spatial = in.size() - static_cast<size_t>(n);
  std::vector<VarId> out(in.begin(), in.begin() + static_cast<long>(first_spatial));
  std::vector<VarId> sizes;
  for (size_t k = 0; k < static_cast<size_t>(n); ++k) {
    const VarId y = DomainVar(c, "output_size", 1, c.bounds.dim_max);
    if (y < 0) return Reject::kUnsupported;
    c.model.LinearLe({{1, y}, {-1, in[first_spatial + k]}}, 0);
    sizes.push_back(y);
    out.push_back(y);
  }
  c.SetVarAttr("output_size", sizes);
  c.node.tensors = {primary};
  FinishFlopsPerElementOf(c, primary, std::move(out));
  return Reject::kNone;
}

}  // namespace drtriton::synth::rules

#endif  // DRTRITON_HAVE_GECODE

#include "synth/op_rules_window.h"

#ifdef DRTRITON_HAVE_GECODE

#include <algorithm>

namespace drtriton::synth::rules {

std::optional<Window> MakeWindow(Ctx& c, int n, bool pool) {
  Window w;
  w.dilation = FixedPerDim(c, "dilation", n);
  for (int k = 0; k < n; ++k) {
    // A conv kernel is a weight dim (dim bounds); a pool kernel is an attribute.
    const VarId kernel =
        pool ? DomainVar(c, "kernel_size", 1, c.bounds.kernel_max)
             : c.model.Int(c.bounds.dim_min, std::min(c.bounds.kernel_max, c.bounds.dim_max));
    const VarId pad = DomainVar(c, "padding", 0, c.bounds.kernel_max);
    if (kernel < 0 || pad < 0) return std::nullopt;
    const int64_t dil = w.dilation[static_cast<size_t>(k)];
    c.model.LinearLe({{2, pad}, {-dil, kernel}}, 1 - dil);
    if (pool) c.model.LinearLe({{2, pad}, {-1, kernel}}, 0);  // padding <= kernel_size / 2
    w.kernel.push_back(kernel);
    w.padding.push_back(pad);
  }
  c.SetVarAttr("padding", w.padding);
  return w;
}

// As two linear inequalities:
//   s * (out - 1) <= in + 2p - dil * (k - 1) - 1 <= s * (out - 1) + s - 1.
void PostWindowOutput(Ctx& c, const Window& w, size_t k, int64_t stride, VarId in, VarId out) {
  const VarId kernel = w.kernel[k];
  const VarId pad = w.padding[k];
  const int64_t dil = w.dilation[k];
  if (stride > 0) {
    c.model.LinearLe({{stride, out}, {-1, in}, {-2, pad}, {dil, kernel}}, stride + dil - 1);
    c.model.LinearLe({{1, in}, {2, pad}, {-dil, kernel}, {-stride, out}}, -dil);
    return;
  }
  // stride = kernel_size: kernel * out is an IntVar product.
  const VarId product = c.model.Int(1, c.bounds.kernel_max * c.bounds.dim_max);
  c.model.Product(kernel, out, product);
  c.model.LinearLe({{1, product}, {dil - 1, kernel}, {-1, in}, {-2, pad}}, dil - 1);
  c.model.LinearLe({{1, in}, {2, pad}, {-dil, kernel}, {-1, product}}, -dil);
}

std::vector<VarId> TimesKernel(std::vector<VarId> dims, const Window& w) {
  dims.insert(dims.end(), w.kernel.begin(), w.kernel.end());
  return dims;
}

}  // namespace drtriton::synth::rules

#endif  // DRTRITON_HAVE_GECODE

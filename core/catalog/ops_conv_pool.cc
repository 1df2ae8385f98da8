// Convolutions, transposed convolutions and pooling in 1, 2 and 3 spatial dims.  One
// family function per operator, called for N = 1, 2, 3; inputs are (N, C, *spatial) or
// unbatched (C, *spatial), as in PyTorch.
#include <string>

#include "catalog/entry_builder.h"

namespace drtriton::catalog_internal {
namespace {

std::string Nd(const char* stem, int n) { return stem + std::to_string(n) + "d"; }

// Example input (N, C, 8, ...) with `n` spatial dims of `size`.
Shape Spatial(std::vector<int64_t> lead, int n, int64_t size) {
  for (int k = 0; k < n; ++k) lead.push_back(size);
  return lead;
}

AttrSpec Stride() { return PerDim(IntChoices({1, 2}, 1)); }
AttrSpec Dilation() { return PerDim(IntChoices({1, 2}, 1)); }
AttrSpec Groups() { return IntRange(1, 4, 1); }  // divisibility is the shape rule's

// kernel_size in {2, 3}, pool padding at most kernel / 2 = 1.
AttrSpec PoolKernel() { return PerDim(IntChoices({2, 3}, {})); }
AttrSpec PoolStride() {  // None = kernel_size
  AttrSpec s = PerDim(IntChoices({1, 2}, {}));
  s.nullable = true;
  s.choices.insert(s.choices.begin(), AttrValue::None());
  return s;
}

Entry Conv(int n) {
  const std::string name = Nd("conv", n);
  return Entry(name, "torch.nn.functional." + name, "F." + name)
      .Alias({"torch." + name})
      .Params({Tensor("input"), Tensor("weight"), OptionalTensor("bias"), Attr("stride", Stride()),
               Attr("padding", PerDim(IntRange(0, 3, 0))), Attr("dilation", Dilation()),
               Attr("groups", Groups())})
      .Rule(ShapeRule::kConv, n)
      .Rank(n + 1, n + 2)
      .Traits(kConv)
      .Flops(2)
      .Doc("cross-correlation: (N, C_in, *), (C_out, C_in / groups, *k), (C_out,)")
      .Example({Spatial({2, 4}, n, 8), Spatial({6, 2}, n, 3), {6}}, {I(1), I(1), I(1), I(2)});
}

Entry ConvTranspose(int n) {
  const std::string name = Nd("conv_transpose", n);
  return Entry(name, "torch.nn.functional." + name, "F." + name)
      .Alias({"torch." + name})
      .Params({Tensor("input"), Tensor("weight"), OptionalTensor("bias"), Attr("stride", Stride()),
               Attr("padding", PerDim(IntRange(0, 3, 0))),
               Attr("output_padding", PerDim(IntRange(0, 1, 0))), Attr("groups", Groups()),
               Attr("dilation", Dilation())})
      .Rule(ShapeRule::kConvTranspose, n)
      .Rank(n + 1, n + 2)
      .Traits(kConvTranspose)
      .Flops(2)
      .Doc("transposed conv: (N, C_in, *), (C_in, C_out / groups, *k), (C_out,)")
      .Example({Spatial({2, 4}, n, 5), Spatial({4, 3}, n, 3), {6}}, {I(2), I(1), I(1), I(2), I(1)});
}

Entry MaxPool(int n) {
  const std::string name = Nd("max_pool", n);
  return Entry(name, "torch.nn.functional." + name, "F." + name)
      .Alias({"torch." + name})
      .Params({Tensor("input"), Attr("kernel_size", PoolKernel()), Attr("stride", PoolStride()),
               Attr("padding", PerDim(IntRange(0, 1, 0))), Attr("dilation", Dilation()),
               Attr("ceil_mode", BoolAttr(false))})
      .Rule(ShapeRule::kPool, n)
      .Rank(n + 1, n + 2)
      .Traits(kPooling)
      .Flops(1)
      .Doc("max over each kernel window (stride defaults to kernel_size)")
      .Example({Spatial({2, 3}, n, 7)}, {I(3), I(2), I(1), I(1), B(true)});
}

Entry AvgPool(int n) {
  const std::string name = Nd("avg_pool", n);
  Entry e(name, "torch.nn.functional." + name, "F." + name);
  if (n == 1) e.Alias({"torch.avg_pool1d"});  // torch.avg_pool2d/3d do not exist
  e.Params({Tensor("input"), Attr("kernel_size", PoolKernel()), Attr("stride", PoolStride()),
            Attr("padding", PerDim(IntRange(0, 1, 0))), Attr("ceil_mode", BoolAttr(false)),
            Attr("count_include_pad", BoolAttr(true))})
      .Rule(ShapeRule::kPool, n)
      .Rank(n + 1, n + 2)
      .Traits(kPooling)
      .Flops(1)
      .Doc("mean over each kernel window (stride defaults to kernel_size)")
      .Example({Spatial({2, 3}, n, 7)}, {I(2), None(), I(1), B(false), B(true)});
  return e;
}

Entry AdaptiveAvgPool(int n) {
  const std::string name = Nd("adaptive_avg_pool", n);
  Entry e(name, "torch.nn.functional." + name, "F." + name);
  if (n == 1) e.Alias({"torch.adaptive_avg_pool1d"});
  e.Params({Tensor("input"), Attr("output_size", PerDim(IntRange(1, 8, {})))})
      .Rule(ShapeRule::kAdaptivePool, n)
      .Rank(n + 1, n + 2)
      .Traits(kPooling)
      .Flops(1)
      .Doc("mean over output_size windows that tile the input")
      .Example({Spatial({2, 3}, n, 7)}, {I(3)});
  return e;
}

}  // namespace

void AddConvPoolOps(std::vector<OpInfo>& out) {
  for (int n = 1; n <= 3; ++n) out.push_back(Conv(n));
  for (int n = 1; n <= 3; ++n) out.push_back(ConvTranspose(n));
  for (int n = 1; n <= 3; ++n) out.push_back(MaxPool(n));
  for (int n = 1; n <= 3; ++n) out.push_back(AvgPool(n));
  for (int n = 1; n <= 3; ++n) out.push_back(AdaptiveAvgPool(n));
}

}  // namespace drtriton::catalog_internal

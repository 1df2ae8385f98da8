// Shape rules of convolution, transposed convolution and pooling (N = spatial_dims).
// Inputs are ([batch,] C, *L): the channel dim sits right before the N spatial dims.
#include <string>

#include "catalog/call.h"
#include "util/int_math.h"

namespace drtriton::catalog_internal {
namespace {

size_t ChannelDim(const Call& call) {
  return call.input().size() - static_cast<size_t>(call.op().spatial_dims) - 1;
}

std::string List(const std::vector<int64_t>& v) { return AttrValue::IntList(v).ToPython(); }

// Every value of a per-dim attribute at least `lo`.
std::optional<Error> AtLeast(const Call& call, const char* name, const std::vector<int64_t>& v,
                             int64_t lo) {
  for (int64_t x : v)
    if (x < lo)
      return call.Fail(std::string(name) + " " + List(v) + " must be >= " + std::to_string(lo));
  return std::nullopt;
}

// Shared by conv and conv_transpose: groups, bias and the per-dim attributes.
struct ConvAttrs {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups = 1;
};

Result<ConvAttrs> ReadConvAttrs(const Call& call) {
  ConvAttrs a;
  a.stride = call.PerDim("stride", 1);
  a.padding = call.PerDim("padding", 0);
  a.dilation = call.PerDim("dilation", 1);
  a.output_padding = call.PerDim("output_padding", 0);
  a.groups = call.Int("groups", 1);
  if (auto e = AtLeast(call, "stride", a.stride, 1)) return *e;
  if (auto e = AtLeast(call, "padding", a.padding, 0)) return *e;
  if (auto e = AtLeast(call, "dilation", a.dilation, 1)) return *e;
  if (auto e = AtLeast(call, "output_padding", a.output_padding, 0)) return *e;
  if (a.groups < 1) return call.Fail("groups " + std::to_string(a.groups) + " < 1");
  return a;
}

// The weight's rank and the bias's shape, common to both convolutions.
std::optional<Error> CheckWeightAndBias(const Call& call, int64_t out_channels) {
  const Shape* bias = call.tensor("bias");
  if (bias && *bias != Shape{out_channels})
    return call.Fail("bias must have shape " + ShapeText({out_channels}));
  return std::nullopt;
}

const Shape* Weight(const Call& call) {
  const Shape* w = call.tensor("weight");
  const auto rank = static_cast<size_t>(call.op().spatial_dims + 2);
  return w && w->size() == rank ? w : nullptr;
}

// Output = input's leading dims up to the channel, then `channels`, then `spatial`.
Shape Assemble(const Call& call, int64_t channels, const std::vector<int64_t>& spatial) {
  const Shape& in = call.input();
  Shape out(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(ChannelDim(call)));
  out.push_back(channels);
  out.insert(out.end(), spatial.begin(), spatial.end());
  return out;
}

std::vector<int64_t> SpatialOf(const Shape& s, size_t n) {
  return std::vector<int64_t>(s.end() - static_cast<std::ptrdiff_t>(n), s.end());
}

}  // namespace

Result<Shape> InferConv(const Call& call) {
  const auto n = static_cast<size_t>(call.op().spatial_dims);
  const Shape* w = Weight(call);
  if (!w) return call.Fail("weight must have rank " + std::to_string(n + 2));
  auto attrs = ReadConvAttrs(call);
  if (!attrs) return attrs.error();
  const ConvAttrs& a = attrs.value();
  const int64_t c_in = call.input()[ChannelDim(call)];
  const int64_t c_out = (*w)[0];
  if (c_in % a.groups != 0 || c_out % a.groups != 0)
    return call.Fail("in channels " + std::to_string(c_in) + " and out channels " +
                     std::to_string(c_out) + " must be divisible by groups " +
                     std::to_string(a.groups));
  if ((*w)[1] * a.groups != c_in)
    return call.Fail("weight.shape[1] * groups must equal the input channels " +
                     std::to_string(c_in));
  if (auto e = CheckWeightAndBias(call, c_out)) return *e;
  const std::vector<int64_t> in = SpatialOf(call.input(), n), k = SpatialOf(*w, n);
  std::vector<int64_t> out(n);
  for (size_t d = 0; d < n; ++d) {
    const int64_t span = in[d] + 2 * a.padding[d] - a.dilation[d] * (k[d] - 1) - 1;
    if (span < 0) return call.Fail("kernel larger than the padded input");
    out[d] = span / a.stride[d] + 1;
  }
  return Assemble(call, c_out, out);
}

Result<Shape> InferConvTranspose(const Call& call) {
  const auto n = static_cast<size_t>(call.op().spatial_dims);
  const Shape* w = Weight(call);
  if (!w) return call.Fail("weight must have rank " + std::to_string(n + 2));
  auto attrs = ReadConvAttrs(call);
  if (!attrs) return attrs.error();
  const ConvAttrs& a = attrs.value();
  const int64_t c_in = call.input()[ChannelDim(call)];
  if ((*w)[0] != c_in)
    return call.Fail("weight.shape[0] must equal the input channels " + std::to_string(c_in));
  if (c_in % a.groups != 0)
    return call.Fail("in channels " + std::to_string(c_in) + " not divisible by groups " +
                     std::to_string(a.groups));
  const int64_t c_out = (*w)[1] * a.groups;
  if (auto e = CheckWeightAndBias(call, c_out)) return *e;
  const std::vector<int64_t> in = SpatialOf(call.input(), n), k = SpatialOf(*w, n);
  std::vector<int64_t> out(n);
  for (size_t d = 0; d < n; ++d) {
    if (a.output_padding[d] >= a.stride[d] && a.output_padding[d] >= a.dilation[d])
      return call.Fail("output_padding " + List(a.output_padding) +
                       " must be smaller than stride or dilation");
    out[d] = (in[d] - 1) * a.stride[d] - 2 * a.padding[d] + a.dilation[d] * (k[d] - 1) +
             a.output_padding[d] + 1;
    if (out[d] < 1) return call.Fail("output size " + List(out) + " too small (padding)");
  }
  return Assemble(call, c_out, out);
}

Result<Shape> InferPool(const Call& call) {
  const auto n = static_cast<size_t>(call.op().spatial_dims);
  const std::vector<int64_t> k = call.PerDim("kernel_size", 1);
  const std::vector<int64_t> stride = call.PerDim("stride", 0);  // 0: None
  const std::vector<int64_t> pad = call.PerDim("padding", 0);
  const std::vector<int64_t> dil = call.PerDim("dilation", 1);
  const bool ceil_mode = call.Bool("ceil_mode", false);
  if (auto e = AtLeast(call, "kernel_size", k, 1)) return *e;
  if (auto e = AtLeast(call, "padding", pad, 0)) return *e;
  if (auto e = AtLeast(call, "dilation", dil, 1)) return *e;
  const AttrValue* stride_attr = call.attr("stride");
  const bool stride_given = stride_attr && !stride_attr->is_none();
  if (stride_given)
    if (auto e = AtLeast(call, "stride", stride, 1)) return *e;
  const std::vector<int64_t> in = SpatialOf(call.input(), n);
  // PyTorch's avg_pool3d (alone among the pools) checks the kernel against the unpadded
  // input: "input image (T: 1 ...) smaller than kernel size".
  const bool kernel_within_input = n == 3 && call.attr("count_include_pad") != nullptr;
  std::vector<int64_t> out(n);
  for (size_t d = 0; d < n; ++d) {
    const int64_t s = stride_given ? stride[d] : k[d];
    if (kernel_within_input && in[d] < k[d])
      return call.Fail("input smaller than kernel_size " + List(k) +
                       " (avg_pool3d ignores padding here)");
    if (pad[d] > k[d] / 2)
      return call.Fail("padding " + List(pad) + " must be at most half of kernel_size " + List(k));
    const int64_t span = in[d] + 2 * pad[d] - dil[d] * (k[d] - 1) - 1;
    out[d] = FloorDiv(span + (ceil_mode ? s - 1 : 0), s) + 1;
    // A ceil-mode window must start inside the input or its left padding.
    if (ceil_mode && (out[d] - 1) * s >= in[d] + pad[d]) --out[d];
    if (out[d] < 1) return call.Fail("kernel larger than the padded input");
  }
  return Assemble(call, call.input()[ChannelDim(call)], out);
}

Result<Shape> InferAdaptivePool(const Call& call) {
  // Unlike kernel_size and stride, PyTorch does not repeat a one-entry output_size list.
  const AttrValue* size_attr = call.attr("output_size");
  const auto n = static_cast<size_t>(call.op().spatial_dims);
  if (size_attr && size_attr->type == AttrType::kIntList && size_attr->ints.size() != n)
    return call.Fail("output_size " + size_attr->ToPython() + " must have " + std::to_string(n) +
                     " entries");
  const std::vector<int64_t> size = call.PerDim("output_size", 1);
  if (auto e = AtLeast(call, "output_size", size, 1)) return *e;
  return Assemble(call, call.input()[ChannelDim(call)], size);
}

// Adaptive windows along one dim: [floor(i L / O), ceil((i + 1) L / O)).
double AdaptiveWindowVolume(const Shape& input, const Shape& out, int spatial_dims) {
  double volume = 1;
  const auto n = static_cast<size_t>(spatial_dims);
  if (input.size() < n || out.size() < n) return 0;
  for (size_t d = 0; d < n; ++d) {
    const int64_t len = input[input.size() - n + d], size = out[out.size() - n + d];
    // Beyond 2^16 windows the exact sum is not worth the loop: windows then overlap by
    // at most one element each, so len + size - 1 is within a factor of two.
    double total = static_cast<double>(len + size - 1);
    if (size <= (int64_t{1} << 16)) total = 0;
    for (int64_t i = 0; i < size && size <= (int64_t{1} << 16); ++i) {
      const int64_t start = (i * len) / size;
      const int64_t end = ((i + 1) * len + size - 1) / size;
      total += static_cast<double>(end - start);
    }
    volume *= total;
  }
  return volume;
}

}  // namespace drtriton::catalog_internal

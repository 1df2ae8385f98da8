// FLOPs and bytes of one application; the convention is docs/flops.md.  Contractions and
// convolutions match torch.utils.flop_counter.FlopCounterMode: 2 per multiply-add, bias
// not counted.
#include "catalog/call.h"
#include "catalog/catalog.h"

namespace drtriton {
namespace {

using catalog_internal::Call;

double Elements(const Shape* s) { return s ? static_cast<double>(NumElements(*s)) : 0.0; }

// The position among the tensor parameters of a gather's index (Param::index_dim), or -1.
int IndexPosition(const OpInfo& op) {
  const std::vector<int> tensor_params = op.tensor_param_indices();
  for (size_t k = 0; k < tensor_params.size(); ++k)
    if (op.params[static_cast<size_t>(tensor_params[k])].index_dim >= 0)
      return static_cast<int>(k);
  return -1;
}

const Param& TensorParam(const OpInfo& op, int position) {
  return op.params[static_cast<size_t>(op.tensor_param_indices()[static_cast<size_t>(position)])];
}

const Shape* TensorArg(const OpArgs& args, size_t k) {
  return k < args.tensors.size() && args.tensors[k] ? &*args.tensors[k] : nullptr;
}

// Elements of the operator's index tensor (nll_loss's target): as many as a gather picks.
double IndexElements(const OpInfo& op, const OpArgs& args) {
  const int index = IndexPosition(op);
  return index < 0 ? 0 : Elements(TensorArg(args, static_cast<size_t>(index)));
}

// The tensor input a gather's indices index (Param::index_of), or -1 for no gather.
int IndexedPosition(const OpInfo& op) {
  const int index = IndexPosition(op);
  return op.has(kGather) && index >= 0 ? TensorParam(op, index).index_of : -1;
}

// Elements a gather picks of the tensor it indexes: per index, what lies past the indexed
// dim (nll_loss: one class score; an embedding: one row of D).
double GatheredElements(const OpInfo& op, const OpArgs& args) {
  const Shape* indexed = TensorArg(args, static_cast<size_t>(IndexedPosition(op)));
  if (!indexed) return 0;
  double tail = 1;
  const int index_dim = TensorParam(op, IndexPosition(op)).index_dim;
  for (size_t d = static_cast<size_t>(index_dim) + 1; d < indexed->size(); ++d)
    tail *= static_cast<double>((*indexed)[d]);
  return IndexElements(op, args) * tail;
}

// Bytes of one element of a tensor parameter: a bool (where's condition, a comparison's
// result) is one byte, int64 indices eight, floats `elem_bytes`.
double ParamElementBytes(const Param& param, int elem_bytes) {
  if (param.dtype == "bool") return 1;
  if (param.dtype == "int64") return 8;
  return elem_bytes;
}

// Product of a tensor's dims after the first: (C_in / g) * prod(k) for a conv weight,
// (C_out / g) * prod(k) for a transposed-conv weight.
double InnerVolume(const Shape* s) {
  if (!s || s->empty()) return 0;
  return static_cast<double>(NumElements(Shape(s->begin() + 1, s->end())));
}

// Multiply-adds of the contraction and convolution rules.
double MultiplyAdds(const Call& call, const Shape& out) {
  const Shape& in = call.input();
  switch (call.op().rule) {
    case ShapeRule::kMatmul:
    case ShapeRule::kBmm:
    case ShapeRule::kLinear:
      return static_cast<double>(NumElements(out)) * static_cast<double>(in.back());
    case ShapeRule::kConv:  // each output element: (C_in / g) * prod(k) taps
      return static_cast<double>(NumElements(out)) * InnerVolume(call.tensor("weight"));
    case ShapeRule::kConvTranspose:  // each input element scatters to (C_out / g) * prod(k)
      return static_cast<double>(NumElements(in)) * InnerVolume(call.tensor("weight"));
    default:
      return 0;
  }
}

// Kernel taps per output element of a pooling window (adaptive: the mean window).
double PoolTaps(const Call& call, const Shape& out) {
  const int n = call.op().spatial_dims;
  if (call.op().rule == ShapeRule::kAdaptivePool) {
    double windows = 1;
    for (size_t d = out.size() - static_cast<size_t>(n); d < out.size(); ++d)
      windows *= static_cast<double>(out[d]);
    return catalog_internal::AdaptiveWindowVolume(call.input(), out, n) / windows;
  }
  double taps = 1;
  for (int64_t k : call.PerDim("kernel_size", 1)) taps *= static_cast<double>(k);
  return taps;
}

}  // namespace

double CountFlops(const OpInfo& op, const OpArgs& args, const Shape& out) {
  if (op.kind == OpKind::kCreate || args.tensors.empty() || !args.tensors[0]) return 0;
  const Call call(op, args);
  const double out_elems = static_cast<double>(NumElements(out));
  if (op.has(kContraction) || op.has(kConv) || op.has(kConvTranspose))
    return op.flops_per_element * MultiplyAdds(call, out);
  if (op.has(kPooling)) return op.flops_per_element * PoolTaps(call, out) * out_elems;
  if (op.has(kReduction) || op.has(kScan) || op.has(kNormalization))
    return op.flops_per_element * Elements(&call.input());
  // A gather (nll_loss) works on the elements its indices pick: one per index.
  if (op.has(kGather)) return op.flops_per_element * IndexElements(op, args);
  return op.flops_per_element * out_elems;
}

double CountBytes(const OpInfo& op, const OpArgs& args, const Shape& out, int elem_bytes) {
  // A gather reads what its indices pick of the tensor they index, not the whole of it.
  const std::vector<int> tensor_params = op.tensor_param_indices();
  const int indexed = IndexedPosition(op);
  double in_bytes = 0;
  for (size_t k = 0; k < args.tensors.size(); ++k) {
    const Param& param = op.params[static_cast<size_t>(tensor_params[k])];
    const double elements = static_cast<int>(k) == indexed ? GatheredElements(op, args)
                                                           : Elements(TensorArg(args, k));
    in_bytes += elements * ParamElementBytes(param, elem_bytes);
  }
  const int out_bytes = op.has(kIndexResult) ? 8 : op.has(kBoolResult) ? 1 : elem_bytes;
  return in_bytes + static_cast<double>(NumElements(out)) * out_bytes;
}

bool InSynthDomain(const OpInfo& op, const OpArgs& args) {
  const auto rank =
      static_cast<int>(args.tensors.empty() || !args.tensors[0] ? 0 : args.tensors[0]->size());
  const std::vector<int> params = op.attr_param_indices();
  if (params.size() != args.attrs.size()) return false;
  for (size_t k = 0; k < params.size(); ++k)
    if (!op.params[static_cast<size_t>(params[k])].attr.InDomain(args.attrs[k], rank)) return false;
  return InferShape(op, args).ok();
}

}  // namespace drtriton

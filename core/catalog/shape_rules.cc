// Shape inference per shape rule.  The synthesizer posts the same rules as constraints
// (synth/; ShapeRuleConstraints below is their one-paragraph summary), so a change here is
// a change there too.  Conv and pool rules live in shape_rules_spatial.cc.
#include <algorithm>
#include <string>

#include "catalog/call.h"
#include "catalog/catalog.h"

namespace drtriton {
namespace {

using catalog_internal::Call;
using catalog_internal::ShapeText;

int64_t NormalizeDim(int64_t dim, size_t rank) {
  return dim < 0 ? dim + static_cast<int64_t>(rank) : dim;
}

Result<Shape> InferCreate(const Call& call) {
  const AttrValue* size = call.attr("size");
  if (!size) return call.Fail("missing size");
  Shape out = size->type == AttrType::kInt ? Shape{size->i} : size->ints;
  if (static_cast<int>(out.size()) > call.op().max_rank)
    return call.Fail("size " + size->ToPython() + " has too many dims");
  for (int64_t d : out)
    if (d < 1) return call.Fail("size " + size->ToPython() + " has a dim < 1");
  return out;
}

// Right-aligned broadcasting (paper, appendix B): each dim equal or 1.
Result<Shape> BroadcastShapes(const Call& call, const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes) {
    const size_t offset = rank - s.size();
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& o = out[offset + k];
      if (s[k] == o || s[k] == 1) continue;
      if (o != 1) return call.Fail("shapes do not broadcast");
      o = s[k];
    }
  }
  return out;
}

Result<Shape> InferBroadcast(const Call& call) {
  std::vector<Shape> shapes;
  for (const auto& t : call.args().tensors)
    if (t) shapes.push_back(*t);
  return BroadcastShapes(call, shapes);
}

Result<Shape> InferReduce(const Call& call) {
  Shape out = call.input();
  const auto dim = static_cast<size_t>(NormalizeDim(call.Int("dim", 0), out.size()));
  if (call.Bool("keepdim", false)) {
    out[dim] = 1;
  } else {
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(dim));
  }
  return out;
}

Result<Shape> InferReduceAll(const Call& call) {
  if (call.Bool("keepdim", false)) return Shape(call.input().size(), 1);
  return Shape{};
}

// The shape a secondary tensor of a normalization must have.
Result<Shape> AuxShapeOf(const Call& call, AuxShape aux) {
  const Shape& in = call.input();
  if (aux == AuxShape::kChannels) {
    if (in.size() < 2) return call.Fail("needs a channel dim (rank >= 2)");
    return Shape{in[1]};
  }
  const AttrValue* ns = call.attr("normalized_shape");
  if (!ns) return call.Fail("kNormalized tensor without a normalized_shape attribute");
  return ns->type == AttrType::kInt ? Shape{ns->i} : ns->ints;
}

std::optional<Error> CheckAuxTensors(const Call& call) {
  const OpInfo& op = call.op();
  for (const Param& p : op.params) {
    if (p.kind == ParamKind::kAttr || p.aux == AuxShape::kFree) continue;
    const Shape* t = call.tensor(p.name);
    if (!t) continue;
    auto want = AuxShapeOf(call, p.aux);
    if (!want) return want.error();
    if (*t != want.value())
      return call.Fail(p.name + " must have shape " + ShapeText(want.value()) + ", got " +
                       ShapeText(*t));
  }
  return std::nullopt;
}

// layer_norm: normalized_shape names the trailing dims of the input.
std::optional<Error> CheckNormalizedShape(const Call& call) {
  const AttrValue* ns = call.attr("normalized_shape");
  if (!ns) return std::nullopt;
  const Shape want = ns->type == AttrType::kInt ? Shape{ns->i} : ns->ints;
  const Shape& in = call.input();
  if (want.empty() || want.size() > in.size() ||
      !std::equal(want.begin(), want.end(), in.end() - static_cast<std::ptrdiff_t>(want.size())))
    return call.Fail("normalized_shape " + ns->ToPython() + " must equal the trailing dims");
  return std::nullopt;
}

std::optional<Error> CheckGroups(const Call& call) {
  if (!call.attr("num_groups")) return std::nullopt;
  const int64_t groups = call.Int("num_groups", 1);
  const Shape& in = call.input();
  if (groups < 1) return call.Fail("num_groups " + std::to_string(groups) + " < 1");
  if (in.size() < 2 || in[1] % groups != 0)
    return call.Fail("channels not divisible by num_groups " + std::to_string(groups));
  return std::nullopt;
}

// instance_norm: running statistics come in pairs; input statistics need more than one
// spatial element; without them the running statistics must be given.
std::optional<Error> CheckInputStats(const Call& call) {
  if (!call.attr("use_input_stats")) return std::nullopt;
  if ((call.tensor("running_mean") == nullptr) != (call.tensor("running_var") == nullptr))
    return call.Fail("running_mean and running_var must both be None or neither");
  if (!call.Bool("use_input_stats", true)) {
    if (!call.tensor("running_mean") || !call.tensor("running_var"))
      return call.Fail("use_input_stats=False needs running_mean and running_var");
    return std::nullopt;
  }
  const Shape& in = call.input();
  int64_t spatial = 1;
  for (size_t k = 2; k < in.size(); ++k) spatial *= in[k];
  if (in.size() < 3 || spatial < 2) return call.Fail("needs more than 1 spatial element");
  return std::nullopt;
}

// torch.batch_norm takes both running statistics or neither.
std::optional<Error> CheckRunningStatsPaired(const Call& call) {
  if (call.op().row != RowKind::kBatchNorm) return std::nullopt;
  if ((call.tensor("running_mean") == nullptr) != (call.tensor("running_var") == nullptr))
    return call.Fail("running_mean and running_var must both be tensors or both be None");
  return std::nullopt;
}

// Row-wise ops (dim already range-checked) and normalizations: the output is the input.
Result<Shape> InferSameAsInput(const Call& call) {
  for (auto check : {CheckAuxTensors, CheckNormalizedShape, CheckGroups, CheckInputStats,
                     CheckRunningStatsPaired, catalog_internal::CheckFlipDims})
    if (auto err = check(call)) return *err;
  return call.input();
}

// Broadcast of batch dims (all but the last two) for matmul.
Result<Shape> BatchDims(const Call& call, const Shape& a, const Shape& b) {
  return BroadcastShapes(call, {Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2)});
}

Result<Shape> InferMatmul(const Call& call) {
  const Shape& a = call.input();
  const Shape* b = call.tensor("other");
  if (!b || b->size() < 2) return call.Fail("other must have rank >= 2");
  if (a.back() != (*b)[b->size() - 2]) return call.Fail("contracted dims differ");
  auto batch = BatchDims(call, a, *b);
  if (!batch) return call.Fail("batch dims do not broadcast");
  Shape out = batch.value();
  out.push_back(a[a.size() - 2]);
  out.push_back(b->back());
  return out;
}

Result<Shape> InferBmm(const Call& call) {
  const Shape& a = call.input();
  const Shape* b = call.tensor("mat2");
  if (!b || b->size() != 3 || a.size() != 3) return call.Fail("both inputs must have rank 3");
  if (a[0] != (*b)[0]) return call.Fail("batch sizes differ");
  if (a[2] != (*b)[1]) return call.Fail("contracted dims differ");
  return Shape{a[0], a[1], (*b)[2]};
}

Result<Shape> InferLinear(const Call& call) {
  const Shape& in = call.input();
  const Shape* w = call.tensor("weight");
  if (!w || w->size() != 2) return call.Fail("weight must have rank 2 (out, in)");
  if (in.back() != (*w)[1]) return call.Fail("input's last dim must equal weight.shape[1]");
  const Shape* bias = call.tensor("bias");
  if (bias && *bias != Shape{(*w)[0]})
    return call.Fail("bias must have shape " + ShapeText({(*w)[0]}));
  Shape out(in.begin(), in.end() - 1);
  out.push_back((*w)[0]);
  return out;
}

Result<Shape> InferTranspose(const Call& call) {
  Shape out = call.input();
  const auto d0 = static_cast<size_t>(NormalizeDim(call.Int("dim0", 0), out.size()));
  const auto d1 = static_cast<size_t>(NormalizeDim(call.Int("dim1", 0), out.size()));
  std::swap(out[d0], out[d1]);
  return out;
}

// nll_loss: scores (N, C) and one class index per row, (N,); a loss per row with
// reduction='none', else one number.
Result<Shape> InferClassLoss(const Call& call) {
  const Shape& in = call.input();
  const Shape* target = call.tensor("target");
  if (!target || *target != Shape{in[0]})
    return call.Fail("target must have shape " + ShapeText({in[0]}) + " (one class a row)");
  const AttrValue* reduction = call.attr("reduction");
  if (reduction && reduction->s == "none") return Shape{in[0]};
  return Shape{};
}

// embedding: indices (...) and a (rows, D) weight; one row per index.
Result<Shape> InferEmbedding(const Call& call) {
  Shape out = call.input();
  const Shape* weight = call.tensor("weight");
  if (!weight || weight->size() != 2) return call.Fail("weight must be 2-d (rows, D)");
  out.push_back((*weight)[1]);
  return out;
}

Result<Shape> InferByRule(const Call& call) {
  switch (call.op().rule) {
    case ShapeRule::kCreate:
      return InferCreate(call);
    case ShapeRule::kBroadcast:
      return InferBroadcast(call);
    case ShapeRule::kReduce:
      return InferReduce(call);
    case ShapeRule::kReduceAll:
      return InferReduceAll(call);
    case ShapeRule::kSameAsInput:
      return InferSameAsInput(call);
    case ShapeRule::kMatmul:
      return InferMatmul(call);
    case ShapeRule::kBmm:
      return InferBmm(call);
    case ShapeRule::kLinear:
      return InferLinear(call);
    case ShapeRule::kTranspose:
      return InferTranspose(call);
    case ShapeRule::kConv:
      return catalog_internal::InferConv(call);
    case ShapeRule::kConvTranspose:
      return catalog_internal::InferConvTranspose(call);
    case ShapeRule::kPool:
      return catalog_internal::InferPool(call);
    case ShapeRule::kAdaptivePool:
      return catalog_internal::InferAdaptivePool(call);
    case ShapeRule::kReshape:
      return catalog_internal::InferReshape(call);
    case ShapeRule::kPermute:
      return catalog_internal::InferPermute(call);
    case ShapeRule::kNarrow:
      return catalog_internal::InferNarrow(call);
    case ShapeRule::kSelect:
      return catalog_internal::InferSelect(call);
    case ShapeRule::kPad:
      return catalog_internal::InferPad(call);
    case ShapeRule::kExpand:
      return catalog_internal::InferExpand(call);
    case ShapeRule::kClassLoss:
      return InferClassLoss(call);
    case ShapeRule::kEmbedding:
      return InferEmbedding(call);
  }
  return call.Fail("unknown shape rule");
}

}  // namespace

Result<Shape> InferShape(const OpInfo& op, const OpArgs& args) {
  const Call call(op, args);
  if (auto err = catalog_internal::CheckCall(call)) return *err;
  auto out = InferByRule(call);
  if (out && !catalog_internal::SizeIsSane(out.value()))
    return call.Fail("output " + ShapeText(out.value()) + " is too large");
  return out;
}

std::string_view ShapeRuleName(ShapeRule rule) {
  switch (rule) {
    case ShapeRule::kCreate:
      return "create";
    case ShapeRule::kBroadcast:
      return "broadcast";
    case ShapeRule::kReduce:
      return "reduce";
    case ShapeRule::kReduceAll:
      return "reduce_all";
    case ShapeRule::kSameAsInput:
      return "same_as_input";
    case ShapeRule::kMatmul:
      return "matmul";
    case ShapeRule::kBmm:
      return "bmm";
    case ShapeRule::kLinear:
      return "linear";
    case ShapeRule::kTranspose:
      return "transpose";
    case ShapeRule::kConv:
      return "conv";
    case ShapeRule::kConvTranspose:
      return "conv_transpose";
    case ShapeRule::kPool:
      return "pool";
    case ShapeRule::kAdaptivePool:
      return "adaptive_pool";
    case ShapeRule::kReshape:
      return "reshape";
    case ShapeRule::kPermute:
      return "permute";
    case ShapeRule::kNarrow:
      return "narrow";
    case ShapeRule::kSelect:
      return "select";
    case ShapeRule::kPad:
      return "pad";
    case ShapeRule::kExpand:
      return "expand";
    case ShapeRule::kClassLoss:
      return "class_loss";
    case ShapeRule::kEmbedding:
      return "embedding";
  }
  return "unknown";
}

// Every tensor dim is in [1, 2^30] and every input rank within the op's bounds (all
// rules); the texts below add what each rule requires.
std::string_view ShapeRuleConstraints(ShapeRule rule) {
  switch (rule) {
    case ShapeRule::kCreate:
      return "out = size; every size >= 1";
    case ShapeRule::kBroadcast:
      return "inputs right-aligned to N = max rank (missing leading dims = 1); each aligned dim "
             "equal or 1; out dim = max";
    case ShapeRule::kReduce:
      return "dim in [-rank, rank); out = input without dim, or with dim = 1 when keepdim";
    case ShapeRule::kReduceAll:
      return "out = () or all ones with keepdim";
    case ShapeRule::kSameAsInput:
      return "out = input; dim in [-rank, rank); per-channel tensors = (C,) with "
             "C = input[1]; normalized_shape = trailing dims of input (weight, bias = "
             "normalized_shape); C % num_groups == 0; instance_norm: prod(input[2:]) > 1, "
             "running_mean and running_var both None or both given; flip: dims distinct and "
             "in [-rank, rank)";
    case ShapeRule::kMatmul:
      return "rank >= 2 each; a[-1] == b[-2]; batch dims a[:-2], b[:-2] broadcast; "
             "out = batch + (a[-2], b[-1])";
    case ShapeRule::kBmm:
      return "a = (B, M, K), b = (B, K, N); out = (B, M, N)";
    case ShapeRule::kLinear:
      return "x = (..., K), weight = (N, K), bias = (N,) or None; out = (..., N)";
    case ShapeRule::kTranspose:
      return "dim0, dim1 in [-rank, rank); out = input with dim0 and dim1 swapped";
    case ShapeRule::kConv:
      return "x = ([N,] C_in, *L), w = (C_out, C_in / g, *k), bias = (C_out,) or None; "
             "C_in % g == 0; C_out % g == 0; stride, dilation >= 1; padding >= 0; "
             "out = floor((L + 2p - d(k - 1) - 1) / s) + 1 >= 1";
    case ShapeRule::kConvTranspose:
      return "x = ([N,] C_in, *L), w = (C_in, C_out / g, *k), bias = (C_out,) or None; "
             "C_in % g == 0; output_padding < stride or < dilation; "
             "out = (L - 1)s - 2p + d(k - 1) + output_padding + 1 >= 1";
    case ShapeRule::kPool:
      return "x = ([N,] C, *L); k >= 1; stride = k when None; 0 <= p <= k / 2; "
             "out = floor_or_ceil((L + 2p - d(k - 1) - 1) / s) + 1 >= 1 (ceil_mode: the "
             "last window starts inside the input or left padding); avg_pool3d: L >= k";
    case ShapeRule::kAdaptivePool:
      return "x = ([N,] C, *L); output_size: an int or one int >= 1 per spatial dim (a list "
             "names every dim); out = ([N,] C, *output_size)";
    case ShapeRule::kReshape:
      return "shape: dims >= 1 and at most one -1 (inferred); prod(shape) == prod(input); "
             "rank >= 1";
    case ShapeRule::kPermute:
      return "dims: a permutation of [0, rank) (negatives count from the end); "
             "out[k] = input[dims[k]]";
    case ShapeRule::kNarrow:
      return "dim in [-rank, rank); start in [-size, size] (negative: from the end); "
             "1 <= length; start + length <= size; out = input with dim = length";
    case ShapeRule::kSelect:
      return "rank >= 2; dim in [-rank, rank); index in [-size, size); out = input without dim";
    case ShapeRule::kPad:
      return "pad: (before, after) pairs >= 0 from the last dim backwards, at most one per dim; "
             "out dim = dim + before + after";
    case ShapeRule::kExpand:
      return "input right-aligned to size (len(size) >= rank); each input dim equals its size "
             "or is 1; -1 keeps an input dim; out = size";
    case ShapeRule::kClassLoss:
      return "input = (N, C), target = (N,) of int64 class indices in [0, C); out = () or (N,) "
             "with reduction='none'";
    case ShapeRule::kEmbedding:
      return "input = int64 indices in [0, rows); weight = (rows, D); out = input + (D,)";
  }
  return "";
}

std::vector<std::string> TraitNames(uint32_t traits) {
  static const std::pair<Trait, const char*> kNames[] = {
      {kElementwise, "elementwise"},
      {kUnary, "unary"},
      {kBinary, "binary"},
      {kActivation, "activation"},
      {kReduction, "reduction"},
      {kScan, "scan"},
      {kContraction, "contraction"},
      {kNormalization, "normalization"},
      {kPooling, "pooling"},
      {kConv, "conv"},
      {kConvTranspose, "conv_transpose"},
      {kLayout, "layout"},
      {kIndexResult, "index_result"},
      {kPositiveInput, "positive_input"},
      {kCreateTrait, "create"},
      {kRowwise, "rowwise"},
      {kFrontendOnly, "frontend_only"},
      {kBoolResult, "bool_result"},
      {kChannelwise, "channelwise"},
      {kGather, "gather"},
      {kAmplifiesError, "amplifies_error"},
      {kScalesInput, "scales_input"},
      {kShiftsInput, "shifts_input"},
      {kReordersDims, "reorders_dims"},
      {kAddsUpError, "adds_up_error"},
  };
  std::vector<std::string> names;
  for (const auto& [t, n] : kNames)
    if (traits & t) names.emplace_back(n);
  return names;
}

}  // namespace drtriton

// The operator catalog: one table entry per operator, read by every stage
// (IR, synthesizer, code generator, frontend, verifier).  Adding an operator is one
// entry in catalog.cc plus its tests; no other list of operators exists.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/attr.h"
#include "util/result.h"

namespace drtriton {

using OpId = int32_t;
inline constexpr OpId kInvalidOp = -1;

enum class OpKind { kCompute, kCreate };

// Traits group operators the way passes ask about them (tinygrad's GroupOp, MLIR traits).
enum Trait : uint32_t {
  kElementwise = 1u << 0,    // output element i depends on input elements i (after broadcast)
  kUnary = 1u << 1,
  kBinary = 1u << 2,
  kActivation = 1u << 3,
  kReduction = 1u << 4,      // removes (or keeps as size 1) one dimension
  kScan = 1u << 5,           // cumulative along one dimension, shape preserved
  kContraction = 1u << 6,    // matmul, bmm, linear
  kNormalization = 1u << 7,
  kPooling = 1u << 8,
  kConv = 1u << 9,
  kConvTranspose = 1u << 10,
  kLayout = 1u << 11,        // moves data without arithmetic (transpose)
  kIndexResult = 1u << 12,   // produces int64 indices (argmax, argmin)
  kPositiveInput = 1u << 13, // first input must be positive (log, sqrt); Param::positive says which
  kCreateTrait = 1u << 14,   // creates a tensor from a shape (program inputs)
  kRowwise = 1u << 15,       // reduces along `dim` and broadcasts back (softmax, log_softmax)
  // Reached through the frontend only: the synthesizer does not sample it (the layout
  // operators of real models: reshape, permute, narrow, select, flip, pad, triu, tril, broadcast_to).
  kFrontendOnly = 1u << 16,
  kBoolResult = 1u << 17,    // produces a bool tensor (comparisons), as PyTorch does
  // Each output element from its own input element and its channel's parameters (batch_norm
  // in inference mode, on its running statistics): inlined into kernels like an elementwise
  // operator, by its own formula (codegen/expr.cc EmitBatchNorm).
  kChannelwise = 1u << 18,
  // Reads its input at positions an int64 index tensor names (nll_loss's class targets).
  kGather = 1u << 19,
  // An absolute error of the input becomes a relative error of the output (exp, softmax,
  // log_softmax's exp), or relative errors add up along a dim (cumprod): a producer's
  // rounding is magnified where its values are large (codegen: emit_contraction.cc
  // ContractionPrecision).
  kAmplifiesError = 1u << 20,
  // Homogeneous in its first tensor operand: f(a * x, c) = a * f(x, c) for any number a
  // (mul, div, neg).  Where its other operands are constant along a dim, a sum or mean over
  // that dim may be taken before it (codegen/reassociate.h).
  kScalesInput = 1u << 21,
  // Shifts its first tensor operand: f(x + a, c) = f(x, c) + a (add, sub).  A mean (not a
  // sum) over a dim its other operands are constant along may be taken before it.
  kShiftsInput = 1u << 22,
  // PyTorch returns a view whose dims are reordered (transpose, permute): its innermost dim
  // is no longer unit-stride.  A kernel verified on a contiguous copy of it reads it another
  // way in ModelNew (search/search.py keeps such a view out of a fragment's inputs).
  kReordersDims = 1u << 23,
  // Adds its input's elements up without dividing (sum, cumsum): their rounding errors add
  // up while the result may cancel to near zero, where only atol covers it (a depthwise conv
  // rounded to bf16 before a cumsum over 7: 35 of 294 outputs past 1e-2, codegen/amplify.h).
  kAddsUpError = 1u << 24,
};

// How the output shape follows from the inputs; the synthesizer posts one constraint
// model per rule (catalog/shape_rules.cc documents each), the IR infers shapes with it.
enum class ShapeRule {
  kCreate,          // shape given by the attributes
  kBroadcast,       // n-ary elementwise: right-aligned, each dim equal or 1
  kReduce,          // drop `dim` (or keep as 1 with keepdim)
  kReduceAll,       // reduce over dim=None -> scalar (not used by the synthesizer)
  kSameAsInput,     // softmax, log_softmax, cumsum, cumprod, normalizations
  kMatmul,          // torch.matmul semantics for rank >= 2 inputs, batch dims broadcast
  kBmm,             // (B, M, K) x (B, K, N)
  kLinear,          // (..., K) x (N, K) [+ (N,)]
  kTranspose,       // swap two dims
  kConv,            // F.convNd, spatial_dims = N
  kConvTranspose,   // F.conv_transposeNd
  kPool,            // F.max_poolNd / F.avg_poolNd
  kAdaptivePool,    // F.adaptive_avg_poolNd
  kReshape,         // same elements, another shape (one -1 inferred)
  kPermute,         // dims reordered by a permutation
  kNarrow,          // a contiguous range [start, start + length) of one dim
  kSelect,          // one index of one dim, the dim removed
  kPad,             // constant padding (before, after) per dim, last dim first
  kExpand,          // broadcast_to: size-1 dims (and new leading dims) repeated
  kClassLoss,       // scores (N, C), class indices (N,): () or (N,) with reduction='none'
  kEmbedding,       // int64 indices (...) into weight (S, D): out = (..., D)
};

enum class ParamKind { kTensor, kOptionalTensor, kAttr };

// Shape of a secondary tensor parameter, fixed by the first input (normalizations):
// the rule checks it, the synthesizer derives it instead of solving for it.
enum class AuxShape {
  kFree,        // decided by the operator's shape rule (weights of conv, matmul, linear)
  kChannels,    // (C,) with C = input.shape[1]: running stats, per-channel weight and bias
  kNormalized,  // equal to the normalized_shape attribute (layer_norm weight and bias)
};

// One argument of the PyTorch call, in PyTorch's positional order.
struct Param {
  std::string name;
  ParamKind kind = ParamKind::kTensor;
  AttrSpec attr;          // for kAttr
  bool positive = false;  // tensor must hold positive values (running_var); programs use torch.rand
  bool keyword_only = false;  // printed as name=value (PyTorch declares it after `*`)
  // The tensor's dtype: "float32" (every program input of the synthesizer), "bool" (where's
  // condition: a comparison's result) or "int64" (nll_loss's target: class indices).
  std::string dtype = "float32";
  // int64 indices into this dim of tensor input `index_of` (counted among the tensor
  // parameters: nll_loss's target indexes dim 1 of its input, 0; F.embedding's input dim 0 of
  // its weight, 1); -1 for every other tensor.  A program input read here is drawn from
  // torch.randint(0, high) with high at most that dim's size (ir/program.cc checks it).
  int index_dim = -1;
  int index_of = 0;
  AuxShape aux = AuxShape::kFree;  // for tensors: shape fixed by the first input
};

// A small valid application of the operator: documentation, and the seed of tests that
// run every catalog entry under torch.
struct OpExample {
  std::vector<Shape> inputs;     // one per tensor param, in order (optional ones included)
  std::vector<AttrValue> attrs;  // one per attribute param
};

// How the code generator's row emitter (codegen/emit_rows.cc) computes an operator that reads
// whole rows (a reduction, a softmax, a scan, a normalization over its statistics): operator
// facts, read instead of the operator's name.  kNone for every other operator.
enum class RowKind {
  kNone,
  kSum,
  kMean,
  kMax,
  kMin,
  kProd,  // walked one element at a time, as cumprod (rows_emitter.h Sequential)
  kArgmax,
  kArgmin,
  kLogsumexp,
  kSoftmax,
  kLogSoftmax,
  kCumsum,
  kCumprod,
  kLayerNorm,     // over the trailing normalized_shape dims
  kGroupNorm,     // over channel groups
  kInstanceNorm,  // over each (sample, channel)'s spatial dims
  kBatchNorm,     // over each channel's samples and spatial dims (batch statistics)
  // nll_loss: each row's element at its target class, negated, then reduced over the rows
  // (a log_softmax along the classes before it is computed in the same pass: cross_entropy).
  kNllLoss,
};

// Which elements a triangle operator keeps (triu, tril: the others read as zero); the code
// generator reads it instead of the operator's name (codegen/layout.cc).  kNone elsewhere.
enum class Triangle { kNone, kUpper, kLower };

// An elementwise operator's Triton expression from its inputs' variable names and the node's
// attributes (catalog/lowering.h).
using ElementwiseLowering = std::string (*)(const std::vector<std::string>& ins,
                                            const std::vector<AttrValue>& attrs);

struct OpInfo {
  std::string name;         // catalog name, unique: "conv2d", "relu", "randn"
  OpKind kind = OpKind::kCompute;
  std::string torch;        // fully qualified callable: "torch.nn.functional.conv2d"
  std::string spelling;     // as printed in programs: "F.conv2d", "torch.relu"
  std::vector<std::string> aliases;  // other accepted spellings ("torch.sigmoid", "F.sigmoid")
  std::vector<Param> params;
  ShapeRule rule = ShapeRule::kBroadcast;
  int spatial_dims = 0;     // 1, 2 or 3 for conv/pool rules
  int min_rank = 0;         // rank bounds of the first tensor input
  int max_rank = 8;
  uint32_t traits = 0;
  // FLOPs convention (docs/flops.md): contraction and convolution count 2 per
  // multiply-add as torch's FlopCounterMode does; other operators count
  // flops_per_element per element of their reference tensor (output for elementwise,
  // input for reductions, scans and normalizations).
  double flops_per_element = 1.0;
  std::string doc;          // one line for `drtriton ops`
  OpExample example;
  // Elementwise operators: their Triton expression (catalog/lowering.h), which the code
  // generator reads; null for every other operator, which an emitter of its trait lowers.
  ElementwiseLowering lowering = nullptr;
  RowKind row = RowKind::kNone;  // operators of the row emitter (RowKind)
  Triangle triangle = Triangle::kNone;  // triu and tril (Triangle)

  bool has(Trait t) const { return (traits & t) != 0; }
  // A bool tensor parameter (where's condition): no program input is bool, so such an
  // operator has no one-operator program; it only ever reads a comparison's result.
  bool has_bool_param() const {
    for (const Param& q : params)
      if (q.kind != ParamKind::kAttr && q.dtype == "bool") return true;
    return false;
  }
  // An int64 tensor parameter (nll_loss's target): its one-operator program draws it from
  // torch.randint; the synthesizer, whose programs are float32, never samples the operator.
  bool has_index_param() const {
    for (const Param& q : params)
      if (q.kind != ParamKind::kAttr && q.index_dim >= 0) return true;
    return false;
  }
  int arity() const;        // required tensor inputs
  int max_arity() const;    // required + optional tensor inputs
  int num_attrs() const;
  // Index into params of the k-th tensor / attribute parameter.
  std::vector<int> tensor_param_indices() const;
  std::vector<int> attr_param_indices() const;
  // Attribute position (among attribute params) by name, or -1.
  int attr_index(std::string_view attr_name) const;
};

// Arguments of one application, aligned to an OpInfo's parameters.
struct OpArgs {
  std::vector<std::optional<Shape>> tensors;  // one per tensor param; nullopt = None
  std::vector<AttrValue> attrs;               // one per attribute param
};

const std::vector<OpInfo>& Catalog();
const OpInfo& GetOp(OpId id);
// Looks up a catalog name, spelling, alias or fully qualified callable.
OpId FindOp(std::string_view name_or_spelling);

// Checks the arguments as PyTorch would (counts, attribute types, dims, strict choices,
// the shape rule; every dim in [1, 2^30]) and returns the output shape, or an error that
// names the operator and the tensor shapes.  Sampling domains are InSynthDomain's business.
Result<Shape> InferShape(const OpInfo& op, const OpArgs& args);
// FLOPs of one application (args already shape-checked); the convention is docs/flops.md
// (contractions and convolutions as torch's FlopCounterMode).
double CountFlops(const OpInfo& op, const OpArgs& args, const Shape& out);
// Bytes read and written by one application at `elem_bytes` per element (int64 results of
// kIndexResult operators count 8, bool results of kBoolResult operators 1).
double CountBytes(const OpInfo& op, const OpArgs& args, const Shape& out, int elem_bytes = 4);

// The same for the attribute domains and shapes of one application: true when the
// synthesizer could have produced it (InferShape is more permissive, see AttrSpec::InDomain).
bool InSynthDomain(const OpInfo& op, const OpArgs& args);

// Short human-readable description of the shape rule's constraints.
std::string_view ShapeRuleName(ShapeRule rule);
std::string_view ShapeRuleConstraints(ShapeRule rule);
std::vector<std::string> TraitNames(uint32_t traits);

int64_t NumElements(const Shape& shape);

}  // namespace drtriton

// What the per-family shape rules (op_rules_*.cc) share: the context one AppendOp call
// fills in (Ctx), the wiring probabilities, and the steps several families take (attribute
// values from catalog domains, broadcast alignment, an optional bias, closing the node with
// its output and FLOPs).  Internal to synth/: only op_rules*.cc include it.
//
// The helpers draw from the Rng and create solver variables in a fixed order: the
// synthesizer's output for a seed depends on that order, so reordering a step here changes
// every sampled program (and needs a reason).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "synth/dag.h"

namespace drtriton::synth::rules {

// Wiring probabilities.  Reuse makes DAGs (skip connections, shared operands) rather than
// chains; the rest of the time a missing input is created, as in the paper.
constexpr double kReuseExisting = 0.25;
constexpr double kOmitOptional = 0.3;       // bias=None, weight=None
constexpr double kBroadcastFull = 0.75;     // a secondary's aligned dim equals the output's
constexpr double kPrintNegativeDim = 0.5;   // dim=-1 as often as dim=2
constexpr double kPoolStrideDefault = 0.5;  // stride=None (= kernel_size)

// Everything one AppendOp call needs.
struct Ctx {
  const OpInfo& op;
  OpId id;
  bool last;
  const SynthBounds& bounds;
  Rng& rng;
  ShapeModel& model;
  Dag& dag;
  DagNode node;
  std::vector<bool> attr_set;
  std::vector<int> tensor_params;  // indices into op.params
  int flops_ref = -1;              // tensor whose elements the FLOPs count, unless explicit
  std::vector<VarId> flops_dims;   // explicit FLOPs dims (contractions, conv, pool)
  bool flops_explicit = false;

  const DagTensor& T(int t) const { return dag.tensors[static_cast<size_t>(t)]; }
  const Param& TensorParam(size_t k) const {
    return op.params[static_cast<size_t>(tensor_params[k])];
  }
  bool Optional(size_t k) const { return TensorParam(k).kind == ParamKind::kOptionalTensor; }
  int AttrPos(const char* name) const { return op.attr_index(name); }
  const AttrSpec& Spec(int pos) const {
    return op.params[static_cast<size_t>(op.attr_param_indices()[static_cast<size_t>(pos)])].attr;
  }

  std::vector<VarId> NewDims(int rank);
  // A program input (created by torch.randn, or torch.rand when `positive`).
  int AddInput(std::vector<VarId> dims, bool positive);
  int AddInputFor(size_t k, std::vector<VarId> dims) {
    return AddInput(std::move(dims), TensorParam(k).positive);
  }
  // A tensor from the candidate list with rank in [lo, hi], or -1 (then the caller creates
  // one).  index_dtype results never feed other operators.
  int PickExisting(int lo, int hi);
  void SetAttr(int pos, DagAttr attr);
  void SetAttr(const char* name, AttrValue value);
  void SetVarAttr(const char* name, std::vector<VarId> vars, bool always_list = false);
  // The value attribute `name` has been given, when it is a bool.
  std::optional<bool> BoolAttr(const char* name) const;
  int Output(std::vector<VarId> dims);
};

// --- Attribute values from the catalog's domains (op_rules_context.cc). ---

AttrValue SampleFromDomain(const AttrSpec& spec, int rank, Rng& rng);
// Every attribute no rule step has set, in attribute order, from its domain.  With
// `reject_unmodeled` a shape-derived attribute (free, no default, not nullable) ends the
// walk with kUnsupported where it stands, so that the Rng draws before it still happen.
Reject SampleUnsetAttrs(Ctx& c, int rank, bool reject_unmodeled);
// An int-or-list attribute fixed structurally (stride, dilation): one value >= 1 per
// spatial dim, set on the node; all ones when the operator has no such attribute.
std::vector<int64_t> FixedPerDim(Ctx& c, const char* name, int n);
// Signed dim index as printed: dim 2 of a rank-4 tensor is 2 or -2.
int64_t PrintedDim(int64_t dim, int rank, Rng& rng);
// A solver variable over the values attribute `name` may take within [lo, hi] (its
// catalog range or choices); -1 when there are none.
VarId DomainVar(Ctx& c, const char* name, int64_t lo, int64_t hi);

// --- Steps several families share (op_rules_context.cc). ---

// Right-aligns an operand of rank `rank` against `out` (PyTorch broadcasting): each
// aligned dim equals out's or is 1.  An existing operand's dims are constrained; a new
// operand's dims are returned.  A slot of `out` that is still -1 (a leading dim only this
// operand has) is filled by the operand.
std::vector<VarId> AlignBroadcastOperand(Ctx& c, std::vector<VarId>& out, int rank,
                                         const std::vector<VarId>* existing);
// Tensor param 2, when the operator has one, is a bias of shape (channels,): None with
// probability kOmitOptional (linear, conv).
void AddOptionalBias(Ctx& c, VarId channels);

// The node's output; its FLOPs count the elements of `flops_tensor` (a rule whose work
// is per input element: reductions, normalizations).
void FinishFlopsPerElementOf(Ctx& c, int flops_tensor, std::vector<VarId> out);
// The node's output; its FLOPs count the output's elements (broadcast, transpose).
void FinishFlopsPerOutputElement(Ctx& c, std::vector<VarId> out);
// The node's output; its FLOPs count prod(flops_dims) (contractions, windows).
void FinishExplicitFlops(Ctx& c, std::vector<VarId> out, std::vector<VarId> flops_dims);

// --- One entry point per rule family (op_rules_<family>.cc). ---

Reject PostBroadcast(Ctx& c, int primary);              // op_rules_broadcast.cc
Reject PostReduce(Ctx& c, int primary);                 // op_rules_dims.cc
Reject PostTranspose(Ctx& c, int primary);              // op_rules_dims.cc
Reject PostSameAsInput(Ctx& c, int primary);            // op_rules_normalize.cc
Reject PostMatmul(Ctx& c, int primary);                 // op_rules_contraction.cc
Reject PostBmm(Ctx& c, int primary);                    // op_rules_contraction.cc
Reject PostLinear(Ctx& c, int primary);                 // op_rules_contraction.cc
Reject PostConv(Ctx& c, int primary, bool transposed);  // op_rules_conv.cc
Reject PostPool(Ctx& c, int primary);                   // op_rules_pool.cc
Reject PostAdaptivePool(Ctx& c, int primary);           // op_rules_pool.cc

}  // namespace drtriton::synth::rules

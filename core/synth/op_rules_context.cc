#include "synth/op_rules_context.h"

#ifdef DRTRITON_HAVE_GECODE

#include <algorithm>
#include <utility>

namespace drtriton::synth::rules {
namespace {

OpId CreateOp(bool positive) {
  static const OpId randn = FindOp("randn");
  static const OpId rand = FindOp("rand");
  return positive ? rand : randn;
}

// One value per spatial dim, the same for all dims half of the time (None choices
// skipped: the dims are fixed here, not left to the operator's default).
std::vector<int64_t> SamplePerDim(const AttrSpec& spec, int n, Rng& rng) {
  AttrSpec non_null = spec;
  non_null.choices.erase(std::remove_if(non_null.choices.begin(), non_null.choices.end(),
                                        [](const AttrValue& v) { return v.is_none(); }),
                         non_null.choices.end());
  auto one = [&]() -> int64_t {
    const AttrValue v = SampleFromDomain(non_null, 0, rng);
    if (v.type == AttrType::kInt) return v.i;
    if (v.type == AttrType::kIntList && !v.ints.empty()) return v.ints[0];
    return spec.default_value.type == AttrType::kInt ? spec.default_value.i : 1;
  };
  std::vector<int64_t> values(static_cast<size_t>(n));
  const bool same = rng.Bernoulli(0.5);
  for (auto& v : values) v = same && &v != values.data() ? values[0] : one();
  return values;
}

// Prints as an int when all dims agree (PyTorch's int-or-tuple arguments).
AttrValue PerDimValue(const std::vector<int64_t>& values) {
  const bool same =
      std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == values[0]; });
  return same ? AttrValue::Int(values[0]) : AttrValue::IntList(values);
}

// The integer values attribute `name` may take within [lo, hi]: its catalog range or
// choices (None skipped), or all of [lo, hi] when the catalog leaves it free.
std::vector<int64_t> IntDomain(const Ctx& c, const char* name, int64_t lo, int64_t hi) {
  std::vector<int64_t> values;
  const int pos = c.AttrPos(name);
  const AttrSpec* spec = pos >= 0 ? &c.Spec(pos) : nullptr;
  if (spec && spec->domain == AttrDomain::kChoices) {
    for (const AttrValue& v : spec->choices)
      if (v.type == AttrType::kInt && v.i >= lo && v.i <= hi) values.push_back(v.i);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
  }
  if (spec && spec->domain == AttrDomain::kIntRange) {
    lo = std::max(lo, spec->min);
    hi = std::min(hi, spec->max);
  }
  for (int64_t v = lo; v <= hi && values.size() < 4096; ++v) values.push_back(v);
  return values;
}

// A shape-derived attribute (free, no default, not nullable) that no rule step models:
// sampling it would print None where PyTorch needs a value.
bool Unmodeled(const AttrSpec& spec) {
  return spec.domain == AttrDomain::kFree && spec.default_value.is_none() && !spec.nullable;
}

}  // namespace

// --- Ctx. ---

std::vector<VarId> Ctx::NewDims(int rank) {
  std::vector<VarId> dims;
  for (int k = 0; k < rank; ++k) dims.push_back(model.Dim());
  return dims;
}

int Ctx::AddInput(std::vector<VarId> dims, bool positive) {
  model.Elements(dims, 1, bounds.elem_max);
  DagTensor t;
  t.dims = std::move(dims);
  t.create_op = CreateOp(positive);
  t.positive = positive;
  dag.tensors.push_back(std::move(t));
  return static_cast<int>(dag.tensors.size()) - 1;
}

int Ctx::PickExisting(int lo, int hi) {
  if (!rng.Bernoulli(kReuseExisting)) return -1;
  std::vector<int> fits;
  for (size_t t = 0; t < dag.tensors.size(); ++t) {
    const DagTensor& candidate = dag.tensors[t];
    if (!candidate.index_dtype && candidate.rank() >= lo && candidate.rank() <= hi)
      fits.push_back(static_cast<int>(t));
  }
  return fits.empty() ? -1 : rng.Pick(fits);
}

void Ctx::SetAttr(int pos, DagAttr attr) {
  if (pos < 0) return;
  node.attrs[static_cast<size_t>(pos)] = std::move(attr);
  attr_set[static_cast<size_t>(pos)] = true;
}

void Ctx::SetAttr(const char* name, AttrValue value) {
  DagAttr a;
  a.value = std::move(value);
  SetAttr(AttrPos(name), std::move(a));
}

void Ctx::SetVarAttr(const char* name, std::vector<VarId> vars, bool always_list) {
  DagAttr a;
  a.vars = std::move(vars);
  a.always_list = always_list;
  SetAttr(AttrPos(name), std::move(a));
}

std::optional<bool> Ctx::BoolAttr(const char* name) const {
  const int pos = AttrPos(name);
  if (pos < 0) return std::nullopt;
  const AttrValue& v = node.attrs[static_cast<size_t>(pos)].value;
  if (v.type != AttrType::kBool) return std::nullopt;
  return v.b;
}

int Ctx::Output(std::vector<VarId> dims) {
  DagTensor t;
  t.dims = std::move(dims);
  t.producer = static_cast<int>(dag.nodes.size());
  t.index_dtype = op.has(kIndexResult);
  dag.tensors.push_back(std::move(t));
  node.output = static_cast<int>(dag.tensors.size()) - 1;
  return node.output;
}

// --- Attribute values. ---

AttrValue SampleFromDomain(const AttrSpec& spec, int rank, Rng& rng) {
  switch (spec.domain) {
    case AttrDomain::kChoices:
      return spec.choices.empty() ? spec.default_value : rng.Pick(spec.choices);
    case AttrDomain::kIntRange:
      return AttrValue::Int(rng.Int(spec.min, spec.max));
    case AttrDomain::kDim:
      return AttrValue::Int(rng.Int(-rank, rank - 1));
    case AttrDomain::kFree:
      return spec.default_value;
  }
  return spec.default_value;
}

Reject SampleUnsetAttrs(Ctx& c, int rank, bool reject_unmodeled) {
  for (int pos = 0; pos < static_cast<int>(c.attr_set.size()); ++pos) {
    if (c.attr_set[static_cast<size_t>(pos)]) continue;
    const AttrSpec& spec = c.Spec(pos);
    if (reject_unmodeled && Unmodeled(spec)) return Reject::kUnsupported;
    DagAttr a;
    a.value = SampleFromDomain(spec, rank, c.rng);
    c.SetAttr(pos, std::move(a));
  }
  return Reject::kNone;
}

std::vector<int64_t> FixedPerDim(Ctx& c, const char* name, int n) {
  const int pos = c.AttrPos(name);
  if (pos < 0) return std::vector<int64_t>(static_cast<size_t>(n), 1);
  std::vector<int64_t> values = SamplePerDim(c.Spec(pos), n, c.rng);
  for (auto& v : values) v = std::max<int64_t>(v, 1);
  c.SetAttr(name, PerDimValue(values));
  return values;
}

int64_t PrintedDim(int64_t dim, int rank, Rng& rng) {
  return rng.Bernoulli(kPrintNegativeDim) ? dim - rank : dim;
}

VarId DomainVar(Ctx& c, const char* name, int64_t lo, int64_t hi) {
  const std::vector<int64_t> values = IntDomain(c, name, lo, hi);
  if (values.empty()) return -1;
  if (values.back() - values.front() + 1 == static_cast<int64_t>(values.size()))
    return c.model.Int(values.front(), values.back());  // a range: cheaper to propagate
  return c.model.IntIn(values);
}

// --- Shared steps. ---

std::vector<VarId> AlignBroadcastOperand(Ctx& c, std::vector<VarId>& out, int rank,
                                         const std::vector<VarId>* existing) {
  const int out_rank = static_cast<int>(out.size());
  std::vector<VarId> created;
  for (int k = 0; k < rank; ++k) {
    VarId& o = out[static_cast<size_t>(out_rank - rank + k)];
    // Drawn for every dim, even where it is not used, so that the Rng sequence does not
    // depend on which dims are already fixed.
    const bool full = c.rng.Bernoulli(kBroadcastFull);
    if (existing) {
      const VarId d = (*existing)[static_cast<size_t>(k)];
      if (o < 0)
        o = d;
      else if (full)
        c.model.Equal(d, o);
      else
        c.model.EqualConst(d, 1);
    } else if (o < 0) {  // a new leading dim: this operand defines it
      o = c.model.Dim();
      created.push_back(o);
    } else {
      created.push_back(full ? o : c.model.One());
    }
  }
  return created;
}

void AddOptionalBias(Ctx& c, VarId channels) {
  if (c.tensor_params.size() <= 2) return;
  c.node.tensors.push_back(c.rng.Bernoulli(kOmitOptional) ? -1 : c.AddInputFor(2, {channels}));
}

void FinishFlopsPerElementOf(Ctx& c, int flops_tensor, std::vector<VarId> out) {
  c.flops_ref = flops_tensor;
  c.Output(std::move(out));
}

void FinishFlopsPerOutputElement(Ctx& c, std::vector<VarId> out) {
  c.flops_ref = c.Output(std::move(out));
}

void FinishExplicitFlops(Ctx& c, std::vector<VarId> out, std::vector<VarId> flops_dims) {
  c.flops_explicit = true;
  c.flops_dims = std::move(flops_dims);
  c.Output(std::move(out));
}

}  // namespace drtriton::synth::rules

#endif  // DRTRITON_HAVE_GECODE

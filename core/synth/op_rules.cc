#include "synth/op_rules.h"

#ifdef DRTRITON_HAVE_GECODE

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace drtriton::synth {
namespace {

// Wiring probabilities.  Reuse makes DAGs (skip connections, shared operands) rather than
// chains; the rest of the time a missing input is created, as in the paper.
constexpr double kReuseExisting = 0.25;
constexpr double kOmitOptional = 0.3;    // bias=None, weight=None
constexpr double kBroadcastFull = 0.75;  // a secondary's aligned dim equals the output's
constexpr double kPrintNegativeDim = 0.5;  // dim=-1 as often as dim=2
constexpr double kPoolStrideDefault = 0.5;  // stride=None (= kernel_size)

OpId CreateOp(bool positive) {
  static const OpId randn = FindOp("randn");
  static const OpId rand = FindOp("rand");
  return positive ? rand : randn;
}

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

  std::vector<VarId> NewDims(int rank) {
    std::vector<VarId> dims;
    for (int k = 0; k < rank; ++k) dims.push_back(model.Dim());
    return dims;
  }
  int AddInput(std::vector<VarId> dims, bool positive) {
    model.Elements(dims, 1, bounds.elem_max);
    DagTensor t;
    t.dims = std::move(dims);
    t.create_op = CreateOp(positive);
    t.positive = positive;
    dag.tensors.push_back(std::move(t));
    return static_cast<int>(dag.tensors.size()) - 1;
  }
  int AddInputFor(size_t k, std::vector<VarId> dims) {
    return AddInput(std::move(dims), TensorParam(k).positive);
  }
  // A tensor from the candidate list with rank in [lo, hi], or -1 (then the caller creates
  // one).  index_dtype results never feed other operators.
  int PickExisting(int lo, int hi) {
    if (!rng.Bernoulli(kReuseExisting)) return -1;
    std::vector<int> fits;
    for (size_t t = 0; t < dag.tensors.size(); ++t) {
      const DagTensor& c = dag.tensors[t];
      if (!c.index_dtype && c.rank() >= lo && c.rank() <= hi) fits.push_back(static_cast<int>(t));
    }
    return fits.empty() ? -1 : rng.Pick(fits);
  }
  int AttrPos(const char* name) const { return op.attr_index(name); }
  const AttrSpec& Spec(int pos) const {
    return op.params[static_cast<size_t>(op.attr_param_indices()[static_cast<size_t>(pos)])].attr;
  }
  void SetAttr(int pos, DagAttr attr) {
    if (pos < 0) return;
    node.attrs[static_cast<size_t>(pos)] = std::move(attr);
    attr_set[static_cast<size_t>(pos)] = true;
  }
  void SetAttr(const char* name, AttrValue value) {
    DagAttr a;
    a.value = std::move(value);
    SetAttr(AttrPos(name), std::move(a));
  }
  void SetVarAttr(const char* name, std::vector<VarId> vars, bool always_list = false) {
    DagAttr a;
    a.vars = std::move(vars);
    a.always_list = always_list;
    SetAttr(AttrPos(name), std::move(a));
  }
  int Output(std::vector<VarId> dims) {
    DagTensor t;
    t.dims = std::move(dims);
    t.producer = static_cast<int>(dag.nodes.size());
    t.index_dtype = op.has(kIndexResult);
    dag.tensors.push_back(std::move(t));
    node.output = static_cast<int>(dag.tensors.size()) - 1;
    return node.output;
  }
};

AttrValue SampleFromDomain(const AttrSpec& spec, int rank, Rng& rng) {
  switch (spec.domain) {
    case AttrDomain::kChoices:
      return spec.choices.empty() ? spec.default_value : rng.Pick(spec.choices);
    case AttrDomain::kIntRange: return AttrValue::Int(rng.Int(spec.min, spec.max));
    case AttrDomain::kDim: return AttrValue::Int(rng.Int(-rank, rank - 1));
    case AttrDomain::kFree: return spec.default_value;
  }
  return spec.default_value;
}

// An int-or-list attribute fixed structurally (stride, dilation): one value per spatial dim,
// the same for all dims half of the time; prints as an int when they agree.
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

AttrValue PerDimValue(const std::vector<int64_t>& values) {
  const bool same = std::all_of(values.begin(), values.end(),
                                [&](int64_t v) { return v == values[0]; });
  return same ? AttrValue::Int(values[0]) : AttrValue::IntList(values);
}

// Signed dim index as printed: dim 2 of a rank-4 tensor is 2 or -2.
int64_t PrintedDim(int64_t dim, int rank, Rng& rng) {
  return rng.Bernoulli(kPrintNegativeDim) ? dim - rank : dim;
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

// A solver variable over IntDomain(name, lo, hi); -1 when the domain is empty.
VarId DomainVar(Ctx& c, const char* name, int64_t lo, int64_t hi) {
  const std::vector<int64_t> values = IntDomain(c, name, lo, hi);
  if (values.empty()) return -1;
  if (values.back() - values.front() + 1 == static_cast<int64_t>(values.size()))
    return c.model.Int(values.front(), values.back());
  return c.model.IntIn(values);
}

// --- Broadcast: n-ary elementwise.  Right-aligned; every secondary dim equals the output
// dim or is 1.  The first input always spans its dims fully (the output keeps its shape
// there), secondaries may add leading dims. --------------------------------------------
Reject PostBroadcast(Ctx& c, int primary) {
  const int rank = c.T(primary).rank();
  struct Operand { int existing = -1; int rank = 0; bool omitted = false; };
  std::vector<Operand> others(c.tensor_params.size() - 1);
  int out_rank = rank;
  for (size_t j = 0; j < others.size(); ++j) {
    if (c.Optional(j + 1) && c.rng.Bernoulli(kOmitOptional)) {
      others[j].omitted = true;
      continue;
    }
    others[j].existing = c.PickExisting(1, static_cast<int>(c.bounds.max_rank));
    others[j].rank = others[j].existing >= 0
                         ? c.T(others[j].existing).rank()
                         : static_cast<int>(c.rng.Int(1, std::min<int64_t>(c.bounds.max_rank,
                                                                             rank + 1)));
    out_rank = std::max(out_rank, others[j].rank);
  }
  std::vector<VarId> out(static_cast<size_t>(out_rank), -1);
  const std::vector<VarId> primary_dims = c.T(primary).dims;
  for (int k = 0; k < rank; ++k) out[static_cast<size_t>(out_rank - rank + k)] = primary_dims[static_cast<size_t>(k)];
  c.node.tensors = {primary};
  for (size_t j = 0; j < others.size(); ++j) {
    if (others[j].omitted) {
      c.node.tensors.push_back(-1);
      continue;
    }
    const int r = others[j].rank;
    std::vector<VarId> dims;
    const std::vector<VarId> existing_dims =
        others[j].existing >= 0 ? c.T(others[j].existing).dims : std::vector<VarId>{};
    for (int k = 0; k < r; ++k) {
      VarId& o = out[static_cast<size_t>(out_rank - r + k)];
      const bool full = c.rng.Bernoulli(kBroadcastFull);
      if (others[j].existing >= 0) {
        const VarId d = existing_dims[static_cast<size_t>(k)];
        if (o < 0) o = d;
        else if (full) c.model.Equal(d, o);
        else c.model.EqualConst(d, 1);
      } else if (o < 0) {  // a new leading dim: this operand defines it
        o = c.model.Dim();
        dims.push_back(o);
      } else {
        dims.push_back(full ? o : c.model.One());
      }
    }
    c.node.tensors.push_back(others[j].existing >= 0 ? others[j].existing
                                                     : c.AddInputFor(j + 1, std::move(dims)));
  }
  c.flops_ref = c.Output(out);
  return Reject::kNone;
}

// --- Reduce: drop `dim`, or keep it as 1 with keepdim.  A rank-1 input keeps its dim
// (a 0-d result would end the program). ------------------------------------------------
Reject PostReduce(Ctx& c, int primary) {
  const std::vector<VarId> in = c.T(primary).dims;
  const int rank = static_cast<int>(in.size());
  const int dim = static_cast<int>(c.rng.Int(0, rank - 1));
  c.SetAttr("dim", AttrValue::Int(PrintedDim(dim, rank, c.rng)));
  bool keepdim = rank == 1;
  const int keep_pos = c.AttrPos("keepdim");
  if (keep_pos >= 0 && !keepdim) {
    const AttrValue v = SampleFromDomain(c.Spec(keep_pos), rank, c.rng);
    keepdim = v.type == AttrType::kBool && v.b;
  }
  if (keep_pos < 0 && rank == 1) return Reject::kRank;
  if (keep_pos >= 0) c.SetAttr("keepdim", AttrValue::Bool(keepdim));
  std::vector<VarId> out = in;
  if (keepdim) out[static_cast<size_t>(dim)] = c.model.One();
  else out.erase(out.begin() + dim);
  c.node.tensors = {primary};
  c.flops_ref = primary;
  c.Output(out);
  return Reject::kNone;
}

// --- Same shape as the input: softmax, scans, normalizations.  Secondary tensors have the
// shapes the catalog's AuxShape names: (C,) or normalized_shape. -----------------------
Reject PostSameAsInput(Ctx& c, int primary) {
  const std::vector<VarId> in = c.T(primary).dims;
  const int rank = static_cast<int>(in.size());
  std::vector<VarId> normalized;
  if (c.AttrPos("normalized_shape") >= 0) {
    const int m = static_cast<int>(c.rng.Int(1, std::min(rank, 3)));
    normalized.assign(in.end() - m, in.end());
    c.SetVarAttr("normalized_shape", normalized, /*always_list=*/true);
  }
  const int groups_pos = c.AttrPos("num_groups");
  if (groups_pos >= 0) {
    if (rank < 2) return Reject::kRank;
    const VarId groups = DomainVar(c, "num_groups", 1, c.bounds.dim_max);
    if (groups < 0) return Reject::kUnsupported;
    const VarId per_group = c.model.Dim();
    c.model.Product(groups, per_group, in[1]);
    c.SetVarAttr("num_groups", {groups});
    // F.group_norm: more than one value per (sample, group) is required.
    std::vector<VarId> per_stat = {in[0], per_group};
    per_stat.insert(per_stat.end(), in.begin() + 2, in.end());
    c.model.Elements(per_stat, 2, 1e300);
  }
  // Remaining attributes (training, use_input_stats, eps, momentum, dim) from their domains.
  for (int pos = 0; pos < static_cast<int>(c.attr_set.size()); ++pos) {
    if (c.attr_set[static_cast<size_t>(pos)]) continue;
    DagAttr a;
    a.value = SampleFromDomain(c.Spec(pos), rank, c.rng);
    c.SetAttr(pos, std::move(a));
  }
  auto attr_true = [&](const char* name) {
    const int pos = c.AttrPos(name);
    if (pos < 0) return false;
    const AttrValue& v = c.node.attrs[static_cast<size_t>(pos)].value;
    return v.type == AttrType::kBool && v.b;
  };
  auto attr_false = [&](const char* name) {
    const int pos = c.AttrPos(name);
    if (pos < 0) return false;
    const AttrValue& v = c.node.attrs[static_cast<size_t>(pos)].value;
    return v.type == AttrType::kBool && !v.b;
  };
  if (attr_true("training")) {  // batch statistics: > 1 value per channel
    std::vector<VarId> per_channel = in;
    if (rank >= 2) per_channel.erase(per_channel.begin() + 1);
    c.model.Elements(per_channel, 2, 1e300);
  }
  if (attr_true("use_input_stats")) {  // instance statistics: > 1 spatial element
    c.model.Elements(std::vector<VarId>(in.begin() + std::min(rank, 2), in.end()), 2, 1e300);
  }
  // Running statistics come as a pair (PyTorch wants both or neither), required when the
  // operator does not compute its own statistics.
  const bool need_running_stats = attr_false("use_input_stats") || attr_false("training");
  const bool omit_running_stats = !need_running_stats && c.rng.Bernoulli(kOmitOptional);
  c.node.tensors = {primary};
  for (size_t j = 1; j < c.tensor_params.size(); ++j) {
    const Param& p = c.TensorParam(j);
    const bool running = p.name.rfind("running_", 0) == 0;
    const bool omit = running ? omit_running_stats : c.rng.Bernoulli(kOmitOptional);
    if (c.Optional(j) && omit) {
      c.node.tensors.push_back(-1);
      continue;
    }
    std::vector<VarId> dims;
    switch (p.aux) {
      case AuxShape::kChannels:
        if (rank < 2) return Reject::kRank;
        dims = {in[1]};
        break;
      case AuxShape::kNormalized:
        if (normalized.empty()) return Reject::kUnsupported;
        dims = normalized;
        break;
      case AuxShape::kFree: return Reject::kUnsupported;
    }
    c.node.tensors.push_back(c.AddInputFor(j, std::move(dims)));
  }
  c.flops_ref = primary;
  c.Output(in);
  return Reject::kNone;
}

// Broadcast batch dims of a contraction: `out` holds the first operand's batch dims
// right-aligned; `dims` are the second operand's (existing, or created when empty).
std::vector<VarId> BroadcastBatch(Ctx& c, std::vector<VarId> out, int other_batch_rank,
                                  const std::vector<VarId>* existing) {
  const int out_rank = std::max(static_cast<int>(out.size()), other_batch_rank);
  out.insert(out.begin(), static_cast<size_t>(out_rank) - out.size(), -1);
  std::vector<VarId> created;
  for (int k = 0; k < other_batch_rank; ++k) {
    VarId& o = out[static_cast<size_t>(out_rank - other_batch_rank + k)];
    const bool full = c.rng.Bernoulli(kBroadcastFull);
    if (existing) {
      const VarId d = (*existing)[static_cast<size_t>(k)];
      if (o < 0) o = d;
      else if (full) c.model.Equal(d, o);
      else c.model.EqualConst(d, 1);
    } else if (o < 0) {  // a new leading batch dim: this operand defines it
      o = c.model.Dim();
      created.push_back(o);
    } else {
      created.push_back(full ? o : c.model.One());
    }
  }
  out.insert(out.end(), created.begin(), created.end());  // created batch dims ride along
  return out;
}

// --- torch.matmul for rank >= 2: (..., M, K) @ (..., K, N) -> (broadcast ..., M, N). ----
Reject PostMatmul(Ctx& c, int primary) {
  const std::vector<VarId> a = c.T(primary).dims;
  const int ra = static_cast<int>(a.size());
  const VarId m = a[static_cast<size_t>(ra - 2)];
  const VarId k = a[static_cast<size_t>(ra - 1)];
  const std::vector<VarId> batch_a(a.begin(), a.end() - 2);
  const int existing = c.PickExisting(2, static_cast<int>(c.bounds.max_rank));
  const int rb = existing >= 0 ? c.T(existing).rank()
                               : static_cast<int>(c.rng.Int(2, std::min<int64_t>(
                                                                   c.bounds.max_rank, ra + 1)));
  std::vector<VarId> out_batch;
  int other = existing;
  VarId n;
  if (existing >= 0) {
    const std::vector<VarId> b = c.T(existing).dims;
    const std::vector<VarId> batch_b(b.begin(), b.end() - 2);
    c.model.Equal(b[static_cast<size_t>(rb - 2)], k);
    n = b[static_cast<size_t>(rb - 1)];
    out_batch = BroadcastBatch(c, batch_a, rb - 2, &batch_b);
  } else {
    const size_t before = batch_a.size();
    std::vector<VarId> merged = BroadcastBatch(c, batch_a, rb - 2, nullptr);
    const size_t out_rank = std::max(before, static_cast<size_t>(rb - 2));
    std::vector<VarId> b(merged.begin() + static_cast<long>(out_rank), merged.end());
    out_batch.assign(merged.begin(), merged.begin() + static_cast<long>(out_rank));
    n = c.model.Dim();
    b.push_back(k);
    b.push_back(n);
    other = c.AddInputFor(1, std::move(b));
  }
  c.node.tensors = {primary, other};
  std::vector<VarId> out = out_batch;
  out.push_back(m);
  out.push_back(n);
  c.flops_explicit = true;
  c.flops_dims = out;
  c.flops_dims.push_back(k);
  c.Output(out);
  return Reject::kNone;
}

// --- torch.bmm: (B, M, K) @ (B, K, N). --------------------------------------------------
Reject PostBmm(Ctx& c, int primary) {
  const std::vector<VarId> a = c.T(primary).dims;
  int other = c.PickExisting(3, 3);
  VarId n;
  if (other >= 0) {
    const std::vector<VarId> b = c.T(other).dims;
    c.model.Equal(b[0], a[0]);
    c.model.Equal(b[1], a[2]);
    n = b[2];
  } else {
    n = c.model.Dim();
    other = c.AddInputFor(1, {a[0], a[2], n});
  }
  c.node.tensors = {primary, other};
  c.flops_explicit = true;
  c.flops_dims = {a[0], a[1], n, a[2]};
  c.Output({a[0], a[1], n});
  return Reject::kNone;
}

// --- F.linear: (..., K), weight (N, K), bias (N,). ----------------------------------------
Reject PostLinear(Ctx& c, int primary) {
  const std::vector<VarId> in = c.T(primary).dims;
  const VarId k = in.back();
  int weight = c.PickExisting(2, 2);
  VarId n;
  if (weight >= 0) {
    const std::vector<VarId> w = c.T(weight).dims;
    c.model.Equal(w[1], k);
    n = w[0];
  } else {
    n = c.model.Dim();
    weight = c.AddInputFor(1, {n, k});
  }
  c.node.tensors = {primary, weight};
  if (c.tensor_params.size() > 2) {
    c.node.tensors.push_back(c.rng.Bernoulli(kOmitOptional) ? -1 : c.AddInputFor(2, {n}));
  }
  std::vector<VarId> out(in.begin(), in.end() - 1);
  out.push_back(n);
  c.flops_explicit = true;
  c.flops_dims = out;
  c.flops_dims.push_back(k);
  c.Output(out);
  return Reject::kNone;
}

// --- transpose(dim0, dim1): two distinct dims swap. ---------------------------------------
Reject PostTranspose(Ctx& c, int primary) {
  std::vector<VarId> out = c.T(primary).dims;
  const int rank = static_cast<int>(out.size());
  const int d0 = static_cast<int>(c.rng.Int(0, rank - 1));
  int d1 = static_cast<int>(c.rng.Int(0, rank - 2));
  if (d1 >= d0) ++d1;
  c.SetAttr("dim0", AttrValue::Int(PrintedDim(d0, rank, c.rng)));
  c.SetAttr("dim1", AttrValue::Int(PrintedDim(d1, rank, c.rng)));
  std::swap(out[static_cast<size_t>(d0)], out[static_cast<size_t>(d1)]);
  c.node.tensors = {primary};
  c.flops_ref = c.Output(out);
  return Reject::kNone;
}

// Window attributes of conv and pool: a kernel-size variable per spatial dim and a padding
// variable with 2 * padding <= dilation * (kernel - 1) + 1 (PyTorch's pooling limit; also
// used for conv so that padding never only adds zeros).
struct Window {
  std::vector<VarId> kernel, padding;
  std::vector<int64_t> stride, dilation;  // fixed; stride 0 = kernel_size (pool's None)
};

std::vector<int64_t> FixedPerDim(Ctx& c, const char* name, int n) {
  const int pos = c.AttrPos(name);
  if (pos < 0) return std::vector<int64_t>(static_cast<size_t>(n), 1);
  std::vector<int64_t> values = SamplePerDim(c.Spec(pos), n, c.rng);
  for (auto& v : values) v = std::max<int64_t>(v, 1);
  c.SetAttr(name, PerDimValue(values));
  return values;
}

// nullopt when the catalog's choices leave no kernel or padding within the bounds.
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

// out = floor((in + 2p - dil * (k - 1) - 1) / s) + 1, as two linear inequalities:
//   s * (out - 1) <= in + 2p - dil * (k - 1) - 1 <= s * (out - 1) + s - 1.
void PostWindowOutput(Ctx& c, VarId in, VarId out, VarId kernel, VarId pad, int64_t stride,
                      int64_t dil) {
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

VarId GroupsVar(Ctx& c) {
  if (c.AttrPos("groups") < 0) return c.model.One();
  const VarId groups = DomainVar(c, "groups", 1, c.bounds.dim_max);
  if (groups < 0) return c.model.One();
  c.SetVarAttr("groups", {groups});
  return groups;
}

// --- F.convNd: input (N, C_in, *S) or (C_in, *S); weight (C_out, C_in / groups, *k);
// bias (C_out,).  C_in and C_out are multiples of groups. ------------------------------------
Reject PostConv(Ctx& c, int primary, bool transposed) {
  const std::vector<VarId> in = c.T(primary).dims;
  const int n = c.op.spatial_dims;
  const int off = static_cast<int>(in.size()) - n - 1;  // 1 when batched
  const VarId c_in = in[static_cast<size_t>(off)];
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
  std::vector<VarId> out(in.begin(), in.begin() + off);
  out.push_back(c_out);
  std::vector<VarId> output_padding;
  for (int k = 0; k < n; ++k) {
    const size_t s = static_cast<size_t>(k);
    const VarId x = in[static_cast<size_t>(off + 1 + k)];
    const VarId y = c.model.Dim();
    if (!transposed) {
      PostWindowOutput(c, x, y, w.kernel[s], w.padding[s], stride[s], w.dilation[s]);
    } else {
      // out = (in - 1) * s - 2p + dil * (k - 1) + output_padding + 1, output_padding <
      // max(stride, dilation).
      const VarId op =
          DomainVar(c, "output_padding", 0, std::max(stride[s], w.dilation[s]) - 1);
      if (op < 0) return Reject::kUnsupported;
      output_padding.push_back(op);
      c.model.LinearEq({{1, y}, {-stride[s], x}, {2, w.padding[s]}, {-w.dilation[s], w.kernel[s]},
                        {-1, op}},
                       1 - stride[s] - w.dilation[s]);
    }
    out.push_back(y);
  }
  if (transposed) c.SetVarAttr("output_padding", output_padding);
  std::vector<VarId> weight = transposed ? std::vector<VarId>{c_in, out_per_group}
                                         : std::vector<VarId>{c_out, in_per_group};
  weight.insert(weight.end(), w.kernel.begin(), w.kernel.end());
  c.node.tensors = {primary, c.AddInputFor(1, weight)};
  if (c.tensor_params.size() > 2) {
    c.node.tensors.push_back(c.rng.Bernoulli(kOmitOptional) ? -1 : c.AddInputFor(2, {c_out}));
  }
  // 2 * (output positions) * (C_in / groups) * prod(k); transposed: input positions and
  // C_out / groups (torch.utils.flop_counter's convention).
  c.flops_explicit = true;
  c.flops_dims = transposed ? in : out;
  c.flops_dims.push_back(transposed ? out_per_group : in_per_group);
  c.flops_dims.insert(c.flops_dims.end(), w.kernel.begin(), w.kernel.end());
  c.Output(out);
  return Reject::kNone;
}

// --- F.max_poolNd / F.avg_poolNd: window over the trailing spatial dims. --------------------
Reject PostPool(Ctx& c, int primary) {
  const std::vector<VarId> in = c.T(primary).dims;
  const int n = c.op.spatial_dims;
  const int first_spatial = static_cast<int>(in.size()) - n;
  const std::optional<Window> window = MakeWindow(c, n, /*pool=*/true);
  if (!window) return Reject::kUnsupported;
  const Window& w = *window;
  c.SetVarAttr("kernel_size", w.kernel);
  std::vector<int64_t> stride(static_cast<size_t>(n), 0);
  const int stride_pos = c.AttrPos("stride");
  if (stride_pos >= 0) {
    const AttrSpec& spec = c.Spec(stride_pos);
    if ((spec.nullable || spec.default_value.is_none()) && c.rng.Bernoulli(kPoolStrideDefault)) {
      c.SetAttr("stride", AttrValue::None());
    } else {
      stride = FixedPerDim(c, "stride", n);
    }
  }
  // ceil_mode changes the formula and return_indices the result type: keep both off.
  c.SetAttr("ceil_mode", AttrValue::Bool(false));
  c.SetAttr("return_indices", AttrValue::Bool(false));
  c.SetAttr("divisor_override", AttrValue::None());
  std::vector<VarId> out(in.begin(), in.begin() + first_spatial);
  for (int k = 0; k < n; ++k) {
    const size_t s = static_cast<size_t>(k);
    const VarId y = c.model.Dim();
    const VarId x = in[static_cast<size_t>(first_spatial + k)];
    PostWindowOutput(c, x, y, w.kernel[s], w.padding[s], stride[s], w.dilation[s]);
    // The window fits the unpadded input (avg_pool3d's kernel checks ignore padding).
    c.model.LinearLe({{w.dilation[s], w.kernel[s]}, {-1, x}}, w.dilation[s] - 1);
    out.push_back(y);
  }
  c.node.tensors = {primary};
  c.flops_explicit = true;
  c.flops_dims = out;
  c.flops_dims.insert(c.flops_dims.end(), w.kernel.begin(), w.kernel.end());
  c.Output(out);
  return Reject::kNone;
}

// --- F.adaptive_avg_poolNd(output_size): any output size up to the input's. -----------------
Reject PostAdaptivePool(Ctx& c, int primary) {
  const std::vector<VarId> in = c.T(primary).dims;
  const int n = c.op.spatial_dims;
  const int first_spatial = static_cast<int>(in.size()) - n;
  std::vector<VarId> out(in.begin(), in.begin() + first_spatial);
  std::vector<VarId> sizes;
  for (int k = 0; k < n; ++k) {
    const VarId y = DomainVar(c, "output_size", 1, c.bounds.dim_max);
    if (y < 0) return Reject::kUnsupported;
    c.model.LinearLe({{1, y}, {-1, in[static_cast<size_t>(first_spatial + k)]}}, 0);
    sizes.push_back(y);
    out.push_back(y);
  }
  c.SetVarAttr("output_size", sizes);
  c.node.tensors = {primary};
  c.flops_ref = primary;
  c.Output(out);
  return Reject::kNone;
}

Reject PostRule(Ctx& c, int primary) {
  switch (c.op.rule) {
    case ShapeRule::kBroadcast: return PostBroadcast(c, primary);
    case ShapeRule::kReduce: return PostReduce(c, primary);
    case ShapeRule::kSameAsInput: return PostSameAsInput(c, primary);
    case ShapeRule::kMatmul: return PostMatmul(c, primary);
    case ShapeRule::kBmm: return PostBmm(c, primary);
    case ShapeRule::kLinear: return PostLinear(c, primary);
    case ShapeRule::kTranspose: return PostTranspose(c, primary);
    case ShapeRule::kConv: return PostConv(c, primary, /*transposed=*/false);
    case ShapeRule::kConvTranspose: return PostConv(c, primary, /*transposed=*/true);
    case ShapeRule::kPool: return PostPool(c, primary);
    case ShapeRule::kAdaptivePool: return PostAdaptivePool(c, primary);
    case ShapeRule::kCreate:
    case ShapeRule::kReduceAll: break;
  }
  return Reject::kUnsupported;
}

bool NeedsPositiveInput(const OpInfo& op) {
  const auto tensors = op.tensor_param_indices();
  return op.has(kPositiveInput) ||
         (!tensors.empty() && op.params[static_cast<size_t>(tensors[0])].positive);
}

}  // namespace

std::vector<int> PrimaryRanks(const OpInfo& op, const SynthBounds& bounds) {
  int lo = std::max(op.min_rank, 1);
  int hi = std::min<int>(op.max_rank, static_cast<int>(bounds.max_rank));
  switch (op.rule) {
    case ShapeRule::kMatmul:
    case ShapeRule::kTranspose: lo = std::max(lo, 2); break;
    case ShapeRule::kBmm: lo = std::max(lo, 3); hi = std::min(hi, 3); break;
    case ShapeRule::kConv:
    case ShapeRule::kConvTranspose:
    case ShapeRule::kPool:
    case ShapeRule::kAdaptivePool:
      lo = std::max(lo, op.spatial_dims + 1);
      hi = std::min(hi, op.spatial_dims + 2);
      break;
    case ShapeRule::kSameAsInput:
      for (const Param& p : op.params)
        if (p.kind != ParamKind::kAttr && p.aux == AuxShape::kChannels) lo = std::max(lo, 2);
      if (op.attr_index("num_groups") >= 0) lo = std::max(lo, 2);
      break;
    case ShapeRule::kCreate:
    case ShapeRule::kReduceAll: return {};
    default: break;
  }
  std::vector<int> ranks;
  for (int r = lo; r <= hi; ++r) ranks.push_back(r);
  return ranks;
}

Reject Precheck(const OpInfo& op, bool last, const Dag& dag, const SynthBounds& bounds) {
  if (op.kind != OpKind::kCompute || op.tensor_param_indices().empty()) return Reject::kUnsupported;
  const std::vector<int> ranks = PrimaryRanks(op, bounds);
  if (ranks.empty()) return Reject::kRank;
  if (op.has(kIndexResult) && !last) return Reject::kIndexDtype;
  const int frontier = dag.frontier();
  if (frontier < 0) return Reject::kNone;
  const DagTensor& t = dag.tensors[static_cast<size_t>(frontier)];
  if (std::find(ranks.begin(), ranks.end(), t.rank()) == ranks.end()) return Reject::kRank;
  if (NeedsPositiveInput(op) && !t.positive) return Reject::kPositive;
  return Reject::kNone;
}

Reject AppendOp(OpId id, bool last, const SynthBounds& bounds, Rng& rng, ShapeModel& model,
                Dag& dag) {
  const OpInfo& op = GetOp(id);
  Ctx c{op, id, last, bounds, rng, model, dag, {}, {}, op.tensor_param_indices(), -1, {}, false};
  c.node.op = id;
  c.node.attrs.resize(static_cast<size_t>(op.num_attrs()));
  c.attr_set.assign(static_cast<size_t>(op.num_attrs()), false);

  int primary = dag.frontier();
  if (primary < 0) {
    const std::vector<int> ranks = PrimaryRanks(op, bounds);
    std::vector<VarId> dims = c.NewDims(rng.Pick(ranks));
    model.Elements(dims, bounds.elem_min, bounds.elem_max);
    primary = c.AddInput(std::move(dims), NeedsPositiveInput(op));
  }
  const int rank = c.T(primary).rank();
  if (const Reject r = PostRule(c, primary); r != Reject::kNone) return r;

  // Attributes the rule left alone come from their catalog domains.
  for (int pos = 0; pos < op.num_attrs(); ++pos) {
    if (c.attr_set[static_cast<size_t>(pos)]) continue;
    const AttrSpec& spec = c.Spec(pos);
    if (spec.domain == AttrDomain::kFree && spec.default_value.is_none() && !spec.nullable)
      return Reject::kUnsupported;  // a shape-derived attribute this rule does not model
    DagAttr a;
    a.value = SampleFromDomain(spec, rank, rng);
    c.SetAttr(pos, std::move(a));
  }

  const DagTensor& out = c.T(c.node.output);
  model.Elements(out.dims, bounds.elem_min, bounds.elem_max);
  const std::vector<VarId> flops_dims = c.flops_explicit ? c.flops_dims : c.T(c.flops_ref).dims;
  model.AddFlops(op.flops_per_element, flops_dims, last);
  dag.nodes.push_back(std::move(c.node));
  return Reject::kNone;
}

}  // namespace drtriton::synth

#endif  // DRTRITON_HAVE_GECODE

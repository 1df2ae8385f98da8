#include "synth/shape_model.h"

#ifdef DRTRITON_HAVE_GECODE

#include <gecode/float.hh>
#include <gecode/int.hh>
#include <gecode/search.hh>

#include <algorithm>
#include <cassert>
#include <limits>

namespace drtriton::synth {

using Gecode::FloatVar;
using Gecode::IntVar;

class ShapeSpace : public Gecode::Space {
 public:
  explicit ShapeSpace(Rng* rng) : rng_(rng) {}
  ShapeSpace(ShapeSpace& other)
      : Gecode::Space(other),
        ints(other.ints.size()),
        floats(other.floats.size()),
        float_of(other.float_of),
        products(other.products),
        one(other.one),
        total(other.total),
        rng_(other.rng_) {
    for (size_t k = 0; k < ints.size(); ++k) ints[k].update(*this, other.ints[k]);
    for (size_t k = 0; k < floats.size(); ++k) floats[k].update(*this, other.floats[k]);
  }
  Gecode::Space* copy() override { return new ShapeSpace(*this); }

  Rng& rng() const { return *rng_; }

  std::vector<IntVar> ints;
  std::vector<FloatVar> floats;
  std::vector<int> float_of;  // per IntVar: its channelled FloatVar, or -1
  // prod(IntVars) -> FloatVar, keyed by the sorted VarIds; shared by tensors of one shape.
  std::vector<std::pair<std::vector<VarId>, int>> products;
  VarId one = -1;
  int total = -1;  // the running FLOPs total

 private:
  Rng* rng_;  // owned by the sample; shared by clones so search draws fresh numbers
};

namespace {

constexpr double kFloatHuge = 1e60;

int ToInt(int64_t v) {
  assert(v >= std::numeric_limits<int>::min() / 2 && v <= std::numeric_limits<int>::max() / 2 &&
         "shape model constant out of Gecode's int range");
  return static_cast<int>(v);
}

// The float twin of an IntVar (created on first use).
int FloatOf(ShapeSpace& s, VarId v) {
  auto& f = s.float_of[static_cast<size_t>(v)];
  if (f >= 0) return f;
  const IntVar& x = s.ints[static_cast<size_t>(v)];
  s.floats.emplace_back(s, x.min(), x.max());
  Gecode::channel(s, s.floats.back(), x);
  f = static_cast<int>(s.floats.size()) - 1;
  return f;
}

int FloatConst(ShapeSpace& s, double value) {
  s.floats.emplace_back(s, value, value);
  return static_cast<int>(s.floats.size()) - 1;
}

// A FloatVar equal to prod(dims), built as a chain of binary products; prefixes are shared.
int ProductOf(ShapeSpace& s, std::vector<VarId> dims) {
  dims.erase(std::remove(dims.begin(), dims.end(), s.one), dims.end());
  std::sort(dims.begin(), dims.end());
  if (dims.empty()) return FloatConst(s, 1.0);
  int acc = FloatOf(s, dims[0]);
  std::vector<VarId> key = {dims[0]};
  for (size_t k = 1; k < dims.size(); ++k) {
    key.push_back(dims[k]);
    auto it = std::find_if(s.products.begin(), s.products.end(),
                           [&](const auto& entry) { return entry.first == key; });
    if (it != s.products.end()) {
      acc = it->second;
      continue;
    }
    const int factor = FloatOf(s, dims[k]);
    s.floats.emplace_back(s, 0.0, kFloatHuge);
    const int product = static_cast<int>(s.floats.size()) - 1;
    Gecode::mult(s, s.floats[static_cast<size_t>(acc)], s.floats[static_cast<size_t>(factor)],
                 s.floats[static_cast<size_t>(product)]);
    s.products.emplace_back(key, product);
    acc = product;
  }
  return acc;
}

// Value choice: log-uniform between the variable's current bounds, snapped to the
// nearest value still in its domain.  Uniform choice would put almost every dim near
// 2^15 and then fail the element bounds; splitting at the bounds piles values at 1.
int PickValue(const Gecode::Space& home, IntVar x, int /*index*/) {
  const auto& s = static_cast<const ShapeSpace&>(home);
  const int lo = x.min();
  const int hi = x.max();
  const int64_t want = lo >= 0 ? s.rng().LogUniform(lo, hi) : s.rng().Int(lo, hi);
  if (x.in(static_cast<int>(want))) return static_cast<int>(want);
  int64_t best = lo;
  int64_t best_distance = std::numeric_limits<int64_t>::max();
  for (Gecode::IntVarRanges r(x); r(); ++r) {
    const int64_t candidate = std::clamp<int64_t>(want, r.min(), r.max());
    const int64_t distance = candidate > want ? candidate - want : want - candidate;
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return static_cast<int>(best);
}

}  // namespace

ShapeModel::ShapeModel(const SynthBounds& bounds, Rng* rng)
    : bounds_(bounds), rng_(rng), space_(std::make_unique<ShapeSpace>(rng)) {}

ShapeModel::~ShapeModel() = default;

VarId ShapeModel::Int(int64_t lo, int64_t hi) {
  ShapeSpace& s = *space_;
  s.ints.emplace_back(s, ToInt(lo), ToInt(hi));
  s.float_of.push_back(-1);
  return static_cast<VarId>(s.ints.size()) - 1;
}

VarId ShapeModel::IntIn(const std::vector<int64_t>& values) {
  assert(!values.empty() && "IntIn with an empty domain");
  std::vector<int> ints;
  for (int64_t v : values) ints.push_back(ToInt(v));
  ShapeSpace& s = *space_;
  s.ints.emplace_back(s, Gecode::IntSet(Gecode::IntArgs(ints)));
  s.float_of.push_back(-1);
  return static_cast<VarId>(s.ints.size()) - 1;
}

VarId ShapeModel::Dim() { return Int(bounds_.dim_min, bounds_.dim_max); }

VarId ShapeModel::One() {
  if (space_->one < 0) space_->one = Int(1, 1);
  return space_->one;
}

void ShapeModel::Equal(VarId a, VarId b) {
  if (a == b) return;
  Gecode::rel(*space_, space_->ints[static_cast<size_t>(a)], Gecode::IRT_EQ,
              space_->ints[static_cast<size_t>(b)]);
}

void ShapeModel::EqualConst(VarId a, int64_t value) {
  Gecode::rel(*space_, space_->ints[static_cast<size_t>(a)], Gecode::IRT_EQ, ToInt(value));
}

namespace {
void PostLinear(ShapeSpace& s, const std::vector<std::pair<int64_t, VarId>>& terms,
                Gecode::IntRelType relation, int64_t rhs) {
  Gecode::IntArgs coeffs;
  Gecode::IntVarArgs vars;
  for (const auto& [c, v] : terms) {
    coeffs << ToInt(c);
    vars << s.ints[static_cast<size_t>(v)];
  }
  Gecode::linear(s, coeffs, vars, relation, ToInt(rhs));
}
}  // namespace

void ShapeModel::LinearLe(const std::vector<std::pair<int64_t, VarId>>& terms, int64_t rhs) {
  PostLinear(*space_, terms, Gecode::IRT_LQ, rhs);
}

void ShapeModel::LinearEq(const std::vector<std::pair<int64_t, VarId>>& terms, int64_t rhs) {
  PostLinear(*space_, terms, Gecode::IRT_EQ, rhs);
}

void ShapeModel::Product(VarId a, VarId b, VarId product) {
  ShapeSpace& s = *space_;
  Gecode::mult(s, s.ints[static_cast<size_t>(a)], s.ints[static_cast<size_t>(b)],
               s.ints[static_cast<size_t>(product)]);
}

void ShapeModel::Elements(const std::vector<VarId>& dims, double elem_lo, double elem_hi) {
  ShapeSpace& s = *space_;
  FloatVar& count = s.floats[static_cast<size_t>(ProductOf(s, dims))];
  if (elem_lo > 1) Gecode::rel(s, count, Gecode::FRT_GQ, elem_lo);
  Gecode::rel(s, count, Gecode::FRT_LQ, elem_hi);
}

void ShapeModel::AddFlops(double factor, const std::vector<VarId>& dims, bool close_window) {
  ShapeSpace& s = *space_;
  const int product = ProductOf(s, dims);
  s.floats.emplace_back(s, 0.0, bounds_.flops_max);
  const int total = static_cast<int>(s.floats.size()) - 1;
  Gecode::FloatValArgs coeffs;
  Gecode::FloatVarArgs vars;
  coeffs << factor << -1.0;
  vars << s.floats[static_cast<size_t>(product)] << s.floats[static_cast<size_t>(total)];
  if (s.total >= 0) {
    coeffs << 1.0;
    vars << s.floats[static_cast<size_t>(s.total)];
  }
  Gecode::linear(s, coeffs, vars, Gecode::FRT_EQ, 0.0);
  s.total = total;
  if (close_window) Gecode::rel(s, s.floats[static_cast<size_t>(total)], Gecode::FRT_GQ,
                                bounds_.flops_min);
}

void ShapeModel::Checkpoint() {
  space_->status();  // a space must be stable before it is cloned
  saved_.reset(static_cast<ShapeSpace*>(space_->clone()));
}

void ShapeModel::Rollback() {
  assert(saved_ && "Rollback without Checkpoint");
  space_ = std::move(saved_);
}

bool ShapeModel::Propagate() { return space_->status() != Gecode::SS_FAILED; }

int ShapeModel::num_vars() const { return static_cast<int>(space_->ints.size()); }

std::optional<std::vector<int64_t>> ShapeModel::Solve() {
  ShapeSpace& s = *space_;
  if (s.status() == Gecode::SS_FAILED) return std::nullopt;
  // A fresh random variable order per sample (shuffled here rather than with Gecode's
  // INT_VAR_RND, whose shared generator outlives failed spaces); values log-uniform.
  std::vector<size_t> order(s.ints.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  rng_->Shuffle(order);
  Gecode::IntVarArgs all;
  for (size_t k : order) all << s.ints[k];
  Gecode::branch(s, all, Gecode::INT_VAR_NONE(), Gecode::INT_VAL(&PickValue));

  Gecode::Search::FailStop stop(static_cast<unsigned long long>(bounds_.fail_limit));
  Gecode::Search::Options options;
  options.stop = &stop;
  options.clone = false;  // the engine takes the space over
  Gecode::DFS<ShapeSpace> engine(space_.release(), options);
  std::unique_ptr<ShapeSpace> solution(engine.next());
  if (!solution) return std::nullopt;
  std::vector<int64_t> values(solution->ints.size());
  for (size_t k = 0; k < values.size(); ++k) values[k] = solution->ints[k].val();
  return values;
}

}  // namespace drtriton::synth

#endif  // DRTRITON_HAVE_GECODE

#include "synth/shape_model.h"

#ifdef DRTRITON_HAVE_GECODE

#include <gecode/int.hh>
#include <gecode/search.hh>

#include <algorithm>
#include <cassert>
#include <iterator>
#include <limits>

#include "synth/product_sum.h"

namespace drtriton::synth {

using Gecode::IntVar;

class ShapeSpace : public Gecode::Space {
 public:
  explicit ShapeSpace(Rng* rng) : rng_(rng) {}
  ShapeSpace(ShapeSpace& other)
      : Gecode::Space(other),
        ints(other.ints.size()),
        bounded(other.bounded),
        flops(other.flops),
        one(other.one),
        rng_(other.rng_) {
    for (size_t k = 0; k < ints.size(); ++k) ints[k].update(*this, other.ints[k]);
  }
  Gecode::Space* copy() override { return new ShapeSpace(*this); }

  Rng& rng() const { return *rng_; }

  std::vector<IntVar> ints;
  // Element bounds already posted, by sorted dims: tensors of one shape share them.
  std::vector<std::vector<VarId>> bounded;
  std::vector<ProductTerm> flops;  // one term per operator, over VarIds
  VarId one = -1;

 private:
  Rng* rng_;  // owned by the sample; shared by clones so search draws fresh numbers
};

namespace {

// Restarts of the random search before the DAG itself is resampled: resampling the DAG
// on every fail-limit hit would under-represent operators whose shapes are hard to find.
constexpr int kSolveRestarts = 4;

// Posts lo <= sum(terms) <= hi; terms index VarIds, remapped to a compact IntVarArgs.
void PostTerms(ShapeSpace& s, std::vector<ProductTerm> terms, double lo, double hi) {
  Gecode::IntVarArgs vars;
  std::vector<VarId> used;
  for (ProductTerm& t : terms) {
    for (int& v : t.vars) {
      auto it = std::find(used.begin(), used.end(), v);
      if (it == used.end()) {
        used.push_back(v);
        vars << s.ints[static_cast<size_t>(v)];
        it = used.end() - 1;
      }
      v = static_cast<int>(it - used.begin());
    }
  }
  PostProductSum(s, vars, terms, lo, hi);
}

std::vector<VarId> Canonical(const ShapeSpace& s, std::vector<VarId> dims) {
  dims.erase(std::remove(dims.begin(), dims.end(), s.one), dims.end());
  std::sort(dims.begin(), dims.end());
  return dims;
}

int ToInt(int64_t v) {
  assert(v >= std::numeric_limits<int>::min() / 2 && v <= std::numeric_limits<int>::max() / 2 &&
         "shape model constant out of Gecode's int range");
  return static_cast<int>(v);
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
  return static_cast<VarId>(s.ints.size()) - 1;
}

VarId ShapeModel::IntIn(const std::vector<int64_t>& values) {
  assert(!values.empty() && "IntIn with an empty domain");
  std::vector<int> ints;
  for (int64_t v : values) ints.push_back(ToInt(v));
  ShapeSpace& s = *space_;
  s.ints.emplace_back(s, Gecode::IntSet(Gecode::IntArgs(ints)));
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
  std::vector<VarId> key = Canonical(s, dims);
  const bool known = std::find(s.bounded.begin(), s.bounded.end(), key) != s.bounded.end();
  if (elem_lo <= 1 && elem_hi == bounds_.elem_max && known) return;  // already posted
  ProductTerm term;
  term.vars = key;
  PostTerms(s, {term}, elem_lo, elem_hi);
  if (elem_hi == bounds_.elem_max && !known) s.bounded.push_back(std::move(key));
}

void ShapeModel::AddFlops(double factor, const std::vector<VarId>& dims, bool close_window) {
  ShapeSpace& s = *space_;
  ProductTerm term;
  term.coeff = factor;
  term.vars = Canonical(s, dims);
  // Put the largest element-bounded tensor inside these dims first, capped by elem_max.
  const std::vector<VarId>* best = nullptr;
  for (const auto& group : s.bounded) {
    if (group.empty() || (best && group.size() <= best->size())) continue;
    if (std::includes(term.vars.begin(), term.vars.end(), group.begin(), group.end())) best = &group;
  }
  if (best) {
    std::vector<VarId> rest;
    std::set_difference(term.vars.begin(), term.vars.end(), best->begin(), best->end(),
                        std::back_inserter(rest));
    term.vars = *best;
    term.vars.insert(term.vars.end(), rest.begin(), rest.end());
    term.capped = static_cast<int>(best->size());
    term.cap = bounds_.elem_max;
  }
  if (factor > 0) PostTerms(s, {term}, 0, bounds_.flops_max);
  s.flops.push_back(std::move(term));
  if (close_window) PostTerms(s, s.flops, bounds_.flops_min, bounds_.flops_max);
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
  if (space_->status() == Gecode::SS_FAILED) return std::nullopt;
  for (int restart = 0; restart < kSolveRestarts; ++restart) {
    // Each restart: a copy of the root, a fresh random variable order (shuffled here
    // rather than with Gecode's INT_VAR_RND, whose shared generator outlives failed
    // spaces), log-uniform values, a fail limit.
    auto* root = static_cast<ShapeSpace*>(space_->clone());
    std::vector<size_t> order(root->ints.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    rng_->Shuffle(order);
    Gecode::IntVarArgs all;
    for (size_t k : order) all << root->ints[k];
    Gecode::branch(*root, all, Gecode::INT_VAR_NONE(), Gecode::INT_VAL(&PickValue));

    Gecode::Search::FailStop stop(static_cast<unsigned long long>(bounds_.fail_limit));
    Gecode::Search::Options options;
    options.stop = &stop;
    options.clone = false;  // the engine takes `root` over
    Gecode::DFS<ShapeSpace> engine(root, options);
    std::unique_ptr<ShapeSpace> solution(engine.next());
    if (!solution) {
      if (!engine.stopped()) return std::nullopt;  // proved infeasible: no point retrying
      continue;
    }
    std::vector<int64_t> values(solution->ints.size());
    for (size_t k = 0; k < values.size(); ++k) values[k] = solution->ints[k].val();
    return values;
  }
  return std::nullopt;
}

}  // namespace drtriton::synth

#endif  // DRTRITON_HAVE_GECODE

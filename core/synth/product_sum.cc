#include "synth/product_sum.h"

#ifdef DRTRITON_HAVE_GECODE

#include <algorithm>
#include <cmath>
#include <cstring>

namespace drtriton::synth {
namespace {

using Gecode::ExecStatus;
using Gecode::Int::IntView;

constexpr double kSlack = 1e-12;
constexpr double kHuge = 1e300;
constexpr double kDamping = 8;   // see Worth()

class ProductSum : public Gecode::Propagator {
 public:
  ProductSum(Gecode::Home home, Gecode::ViewArray<IntView>& x, int num_terms,
             const double* coeff, const int* start, const int* index, const int* capped,
             const double* cap, double lo, double hi)
      : Gecode::Propagator(home), x_(x), num_terms_(num_terms), lo_(lo), hi_(hi) {
    CopyArrays(home, coeff, start, index, capped, cap);
    x_.subscribe(home, *this, Gecode::Int::PC_INT_BND);
  }

  ProductSum(Gecode::Space& home, ProductSum& p)
      : Gecode::Propagator(home, p), num_terms_(p.num_terms_), lo_(p.lo_), hi_(p.hi_) {
    x_.update(home, p.x_);
    CopyArrays(home, p.coeff_, p.start_, p.index_, p.capped_, p.cap_);
  }

  Gecode::Propagator* copy(Gecode::Space& home) override { return new (home) ProductSum(home, *this); }

  Gecode::PropCost cost(const Gecode::Space&, const Gecode::ModEventDelta&) const override {
    return Gecode::PropCost::linear(Gecode::PropCost::LO, x_.size());
  }

  void reschedule(Gecode::Space& home) override {
    x_.reschedule(home, *this, Gecode::Int::PC_INT_BND);
  }

  size_t dispose(Gecode::Space& home) override {
    x_.cancel(home, *this, Gecode::Int::PC_INT_BND);
    (void)Gecode::Propagator::dispose(home);
    return sizeof(*this);
  }

  ExecStatus propagate(Gecode::Space& home, const Gecode::ModEventDelta&) override {
    // Bounds of each term: the capped group's product (at most cap) times the rest's.
    double* lo_term = home.alloc<double>(4 * num_terms_);
    double* hi_term = lo_term + num_terms_;
    double* group_max = hi_term + num_terms_;  // uncapped product of the group's maxima
    double* rest_max = group_max + num_terms_;
    double total_lo = 0, total_hi = 0;
    for (int k = 0; k < num_terms_; ++k) {
      double gmin = 1, gmax = 1, rmin = 1, rmax = 1;
      for (int j = start_[k]; j < start_[k + 1]; ++j) {
        const IntView v = x_[index_[j]];
        if (j - start_[k] < capped_[k]) {
          gmin *= v.min();
          gmax = std::min(kHuge, gmax * v.max());
        } else {
          rmin *= v.min();
          rmax = std::min(kHuge, rmax * v.max());
        }
      }
      group_max[k] = gmax;
      rest_max[k] = rmax;
      lo_term[k] = coeff_[k] * gmin * rmin;
      hi_term[k] = std::min(kHuge, coeff_[k] * std::min(gmax, cap_[k]) * rmax);
      total_lo += lo_term[k];
      total_hi = std::min(kHuge, total_hi + hi_term[k]);
    }
    ExecStatus status = Gecode::ES_FIX;
    if (total_lo > hi_ * (1 + kSlack) || total_hi < lo_ * (1 - kSlack)) status = Gecode::ES_FAILED;
    bool changed = false;
    for (int k = 0; k < num_terms_ && status != Gecode::ES_FAILED; ++k) {
      if (coeff_[k] <= 0) continue;
      const double allow = hi_ - (total_lo - lo_term[k]);  // this term's room below hi
      const double need = lo_ - (total_hi - hi_term[k]);   // what it must supply for lo
      for (int j = start_[k]; j < start_[k + 1]; ++j) {
        IntView v = x_[index_[j]];
        if (Repeated(k, j)) continue;  // x * x: the simple bounds below do not apply
        const double rest_lo = lo_term[k] / v.min();
        const double upper = std::floor(allow / rest_lo * (1 + kSlack));
        if (upper < v.max() && Worth(v, v.max() - upper)) {
          if (Gecode::me_failed(v.lq(home, static_cast<int>(std::max(upper, -1.0))))) {
            status = Gecode::ES_FAILED;
            break;
          }
          changed = true;
        }
        if (need <= 0) continue;
        // The largest the other factors can be: within the group, also cap / v.min().
        const bool in_group = j - start_[k] < capped_[k];
        const double others =
            in_group ? std::min(group_max[k] / v.max(), cap_[k] / v.min()) * rest_max[k]
                     : std::min(group_max[k], cap_[k]) * (rest_max[k] / v.max());
        if (others >= kHuge) continue;
        const double lower = std::ceil(need / (coeff_[k] * others) * (1 - kSlack));
        if (lower > v.min() && Worth(v, lower - v.min())) {
          if (Gecode::me_failed(v.gq(home, static_cast<int>(std::min(lower, 2.0e9))))) {
            status = Gecode::ES_FAILED;
            break;
          }
          changed = true;
        }
      }
    }
    home.free<double>(lo_term, 4 * num_terms_);
    if (status == Gecode::ES_FAILED) return status;
    if (x_.assigned()) return home.ES_SUBSUMED(*this);
    return changed ? Gecode::ES_NOFIX : Gecode::ES_FIX;
  }

 private:
  void CopyArrays(Gecode::Space& home, const double* coeff, const int* start, const int* index,
                  const int* capped, const double* cap) {
    const int n = start[num_terms_];
    coeff_ = home.alloc<double>(num_terms_);
    cap_ = home.alloc<double>(num_terms_);
    capped_ = home.alloc<int>(num_terms_);
    start_ = home.alloc<int>(num_terms_ + 1);
    index_ = n > 0 ? home.alloc<int>(n) : nullptr;
    const auto terms = static_cast<size_t>(num_terms_);
    std::memcpy(coeff_, coeff, sizeof(double) * terms);
    std::memcpy(cap_, cap, sizeof(double) * terms);
    std::memcpy(capped_, capped, sizeof(int) * terms);
    std::memcpy(start_, start, sizeof(int) * (terms + 1));
    if (n > 0) std::memcpy(index_, index, sizeof(int) * static_cast<size_t>(n));
  }
  // Product bounds converge slowly when two product constraints squeeze the same vars
  // (elements <= 2^32 against FLOPs >= 2^34: each pass moves a bound by a hair, thousands
  // of passes).  Prunings smaller than 1/8 of the domain's width are skipped; the totals
  // are still checked exactly above, so this weakens propagation, never correctness.
  static bool Worth(const IntView& v, double shrink) {
    return shrink * kDamping >= static_cast<double>(v.max() - v.min());
  }
  bool Repeated(int k, int j) const {
    for (int i = start_[k]; i < start_[k + 1]; ++i)
      if (i != j && index_[i] == index_[j]) return true;
    return false;
  }

  Gecode::ViewArray<IntView> x_;
  int num_terms_;
  double lo_, hi_;
  double* coeff_ = nullptr;
  double* cap_ = nullptr;
  int* capped_ = nullptr;
  int* start_ = nullptr;  // term k uses index_[start_[k] .. start_[k + 1])
  int* index_ = nullptr;
};

}  // namespace

void PostProductSum(Gecode::Home home, const Gecode::IntVarArgs& vars,
                    const std::vector<ProductTerm>& terms, double lo, double hi) {
  GECODE_POST;
  Gecode::ViewArray<IntView> x(home, vars);
  std::vector<double> coeff, cap;
  std::vector<int> start = {0};
  std::vector<int> index, capped;
  for (const ProductTerm& t : terms) {
    coeff.push_back(t.coeff);
    cap.push_back(t.cap);
    capped.push_back(t.capped);
    index.insert(index.end(), t.vars.begin(), t.vars.end());
    start.push_back(static_cast<int>(index.size()));
  }
  if (index.empty()) {  // constant terms only: nothing to subscribe to, decide now
    double total = 0;
    for (double c : coeff) total += c;
    if (total < lo * (1 - kSlack) || total > hi * (1 + kSlack)) home.fail();
    return;
  }
  (void)new (home) ProductSum(home, x, static_cast<int>(terms.size()), coeff.data(), start.data(),
                              index.data(), capped.data(), cap.data(), lo, hi);
}

}  // namespace drtriton::synth

#endif  // DRTRITON_HAVE_GECODE

// A Gecode propagator for lo <= sum_k c_k * prod(x in term k) <= hi over positive IntVars.
//
// Element counts (up to 2^32) and FLOPs (up to 2^35) overflow Gecode's 32-bit IntVars, and
// chains of FloatVar products converge slowly (each pass narrows a little); this
// propagator bounds every variable in one pass from the others' bounds, in double
// precision with a relative slack of 1e-12 so that rounding never removes a solution.
// The synthesizer checks the final shapes exactly in 64-bit, so the slack can only cost
// a rejected sample.
#pragma once

#ifdef DRTRITON_HAVE_GECODE

#include <gecode/int.hh>

#include <vector>

namespace drtriton::synth {

struct ProductTerm {
  double coeff = 1.0;
  std::vector<int> vars;  // indices into the IntVarArgs passed to PostProductSum
  // The first `capped` vars are a tensor's dims whose product is itself bounded by `cap`
  // (its element bound): an elementwise operator's FLOPs are at most coeff * elem_max,
  // which plain bounds reasoning over the dims alone would not see.
  int capped = 0;
  double cap = 1e300;
};

// Posts lo <= sum(terms) <= hi; every variable must have a domain within [1, +inf).
void PostProductSum(Gecode::Home home, const Gecode::IntVarArgs& vars,
                    const std::vector<ProductTerm>& terms, double lo, double hi);

}  // namespace drtriton::synth

#endif  // DRTRITON_HAVE_GECODE

// The shape model: one Gecode space per sample, grown operator by operator.
//
// Data      every tensor dimension and every shape-dependent attribute (kernel size,
//           padding, groups, ...) is an integer variable, named by an index (VarId).
// Variables IntVars for dims and attributes.
// Constraints equalities, linear (in)equalities, small integer products (channels =
//           groups * per_group), and bounds on products and sums of products: element
//           counts per tensor and the program's FLOPs (synth/product_sum.h: counts up to
//           2^32 and FLOPs up to 2^35 overflow Gecode's 32-bit IntVars, so that propagator
//           reasons in doubles).
// Solve     DFS with a random variable order and log-uniform value choice, under a fail
//           limit; each sample gets a fresh space and a fresh seed.
// Read back one int64 per VarId.  The caller re-checks the result exactly in 64-bit through
//           the IR, so rounding in the model can only cost a rejection, never a bad program.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "synth/bounds.h"
#include "synth/rng.h"

namespace drtriton::synth {

using VarId = int;

class ShapeSpace;  // the Gecode space, private to shape_model.cc

class ShapeModel {
 public:
  ShapeModel(const SynthBounds& bounds, Rng* rng);
  ~ShapeModel();
  ShapeModel(const ShapeModel&) = delete;
  ShapeModel& operator=(const ShapeModel&) = delete;

  // --- Variables. ---
  VarId Dim();                        // a tensor dimension in [dim_min, dim_max]
  VarId Int(int64_t lo, int64_t hi);  // an attribute (kernel size, padding, groups)
  VarId IntIn(const std::vector<int64_t>& values);  // one of `values` (non-empty)
  VarId One();                        // the constant 1 (a broadcast or keepdim dimension)

  // --- Constraints. ---
  void Equal(VarId a, VarId b);
  void EqualConst(VarId a, int64_t value);
  // sum(coeff * var) <= rhs, or == rhs.
  void LinearLe(const std::vector<std::pair<int64_t, VarId>>& terms, int64_t rhs);
  void LinearEq(const std::vector<std::pair<int64_t, VarId>>& terms, int64_t rhs);
  void Product(VarId a, VarId b, VarId product);  // a * b == product
  // elem_lo <= prod(dims) <= elem_hi.
  void Elements(const std::vector<VarId>& dims, double elem_lo, double elem_hi);
  // This operator's FLOPs, factor * prod(dims), stay <= flops_max; with `close_window` the
  // sum over all operators so far must lie in [flops_min, flops_max].
  void AddFlops(double factor, const std::vector<VarId>& dims, bool close_window);

  // --- Trial posting: Checkpoint, post an operator, Propagate; Rollback if it failed. ---
  void Checkpoint();
  void Rollback();
  bool Propagate();  // false when propagation proves the model infeasible

  // Solves with random search; one value per VarId, or nullopt (fail limit or infeasible).
  std::optional<std::vector<int64_t>> Solve();

  int num_vars() const;

 private:
  const SynthBounds& bounds_;
  Rng* rng_;
  std::unique_ptr<ShapeSpace> space_;
  std::unique_ptr<ShapeSpace> saved_;
};

}  // namespace drtriton::synth

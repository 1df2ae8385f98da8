// Structural DAG sampling (paper §3): a program is grown one compute operator at a time.
// Each step picks an operator uniformly among those that can still be applied (tried in a
// random order; the first that fits is taken), wires its first input to the current result
// (the frontier), fills every other tensor input from the candidate-tensor list or with a
// fresh `create` operator (torch.randn / torch.rand), and posts its shape rule into the
// ShapeModel.  Ranks and wiring are chosen here; dimension values are left to the solver.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "synth/bounds.h"
#include "synth/rng.h"
#include "synth/shape_model.h"

namespace drtriton::synth {

struct DagTensor {
  std::vector<VarId> dims;    // one solver variable per dimension
  int producer = -1;          // node index, or -1 for a program input
  OpId create_op = kInvalidOp;  // randn / rand for program inputs
  bool positive = false;      // values known to be > 0 (created by torch.rand)
  bool index_dtype = false;   // int64 result of argmax/argmin: not fed to other operators
  int rank() const { return static_cast<int>(dims.size()); }
};

// An attribute: a fixed value, or solver variables read back after solving (kernel size,
// padding, groups, ...).  With several variables it prints as an int when they agree and
// as a list otherwise (PyTorch's int-or-tuple arguments) unless `always_list`.
struct DagAttr {
  AttrValue value;
  std::vector<VarId> vars;
  bool always_list = false;
};

struct DagNode {
  OpId op = kInvalidOp;
  std::vector<int> tensors;  // one per tensor param: a DagTensor index, or -1 for None
  std::vector<DagAttr> attrs;  // one per attribute param
  int output = -1;
};

struct Dag {
  std::vector<DagTensor> tensors;
  std::vector<DagNode> nodes;
  int frontier() const { return nodes.empty() ? -1 : nodes.back().output; }
};

// Why an operator could not be appended (for --stats).
enum class Reject {
  kNone = 0,
  kRank,          // the frontier's rank is outside what the operator accepts
  kPositive,      // needs positive input, the frontier may hold negatives
  kIndexDtype,    // argmax/argmin only as the last operator
  kUnsupported,   // a shape rule or attribute the synthesizer cannot model
  kInfeasible,    // constraint propagation proved the shapes impossible
  kUnsolved,      // in a DAG whose shapes the search did not find (DAG resampled)
  kRefused,       // in a DAG whose solved shapes the IR or the exact bound check refused
  kCount,
};
const char* RejectName(Reject r);

// Posts one operator's structure and constraints (synth/op_rules.cc).  `last` closes the
// program's FLOPs window.
Reject AppendOp(OpId op, bool last, const SynthBounds& bounds, Rng& rng, ShapeModel& model,
                Dag& dag);

// Per-operator sampling statistics, summed in sample order (deterministic).
struct OpCounters {
  int64_t tried = 0;
  int64_t rejected[static_cast<int>(Reject::kCount)] = {};
  int64_t emitted = 0;  // appearances in kept programs
  int64_t total_rejected() const {
    int64_t n = 0;
    for (int64_t r : rejected) n += r;
    return n;
  }
};

// Grows a DAG of `level` compute operators into `model`; false on a dead end (no
// operator fits at some step).
bool SampleDag(int level, const SynthBounds& bounds, Rng& rng, ShapeModel& model, Dag& dag,
               std::vector<OpCounters>& counters);

// The compute operators the synthesizer draws from (every catalog compute operator whose
// shape rule it models).
const std::vector<OpId>& SynthOps();

}  // namespace drtriton::synth

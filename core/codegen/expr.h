// Private to codegen/: emits the value of any program tensor at given coordinates inside
// a kernel.  Stored (materialized) values are loaded with their strides; inlinable values
// (fusion.h) are recomputed from their inputs, recursively, so prologues fuse for free.
// Within one scope (one loop body) each (value, coordinates, mask) is emitted once.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "catalog/lowering.h"
#include "codegen/kernel.h"
#include "codegen/layout.h"
#include "codegen/python_writer.h"
#include "ir/program.h"

namespace drtriton::codegen {

class ExprEmitter {
 public:
  // `mask` guards every load; `zero` is an int tensor of the tile's shape (see
  // KernelParams::Address); `counter` numbers the variables of the whole kernel.
  ExprEmitter(const Program& program, const std::vector<bool>& materialized, KernelParams& params,
              PythonWriter& w, std::string mask, std::string zero, int& counter)
      : program_(program),
        materialized_(materialized),
        params_(params),
        w_(w),
        mask_(std::move(mask)),
        zero_(std::move(zero)),
        counter_(counter) {}

  // `v` is already in registers as `var` (an anchor's result feeding its epilogue).
  void Bind(ValueId v, const std::string& var) { bound_[v.index] = var; }
  // Values of one element (every dim broadcast) load once per program as a scalar,
  // `tl.load(ptr)`, instead of a tile of lanes all reading one address (`ptr + zero`): a
  // KernelBench matrix-times-scalar kernel built that way ran at half of eager's bandwidth on
  // the H200 (whether this load was the cause is not measured yet).  For kernels whose
  // arithmetic broadcasts a scalar freely: pointwise, contraction epilogues, and rows, whose
  // reads all meet their block's mask in a tl.where.
  void LoadOneElementValuesAsScalars() { scalar_loads_ = true; }
  // Values read at coordinates that are all "0" or among `coords` (a contraction epilogue's
  // offs_n: a per-channel bias or scale of shape (C, 1, 1); a rows kernel's outer coordinates:
  // an embedding's index) load as that one row of the tile under `mask`, with `zero` its int
  // row, and broadcast in the arithmetic: a full tile of lanes reading BLOCK_M copies of each
  // element costs its registers (the bias row of a 128 x 256 linear: 255 registers and 4
  // spills as a tile, 170 as a row; emit_contraction.cc), and a rows kernel's load of one
  // index per lane costs BLOCK_R load instructions a row (emit_rows.cc).
  void LoadRowsAlong(std::vector<std::string> coords, std::string mask, std::string zero) {
    row_coords_ = std::move(coords);
    row_mask_ = std::move(mask);
    row_zero_ = std::move(zero);
  }
  // Loads of the reads registered with KernelParams::AddContiguousRead become
  // `if FLAG:` (flat address) / `else:` (strided address) pairs: one kernel body serves
  // contiguous inputs without per-element index arithmetic and strided ones as before.
  void SetContiguousFlag(std::string flag) { contiguous_flag_ = std::move(flag); }
  // Emits `v` at `coords` (one expression per dim of v) and returns its variable.
  std::string Emit(ValueId v, const std::vector<std::string>& coords);
  // The same under another mask (loads of padded convolution windows).
  // Computes `v` from its producer even when it is stored: the value a kernel is about to
  // store (a pointwise output, an epilogue's end).  Inputs are loaded.
  std::string Compute(ValueId v, const std::vector<std::string>& coords);
  std::string EmitMasked(ValueId v, const std::vector<std::string>& coords,
                         const std::string& mask);
  std::string NewVar(const std::string& stem);
  // Tile loads emitted so far (scalar loads not counted): in a tl.dot kernel's K loop each is
  // staged through shared memory by Triton's software pipeliner (heuristics.h, DotSharedBytes).
  int tile_loads() const { return tile_loads_; }

 private:
  std::string EmitNode(const Node& node, const std::vector<std::string>& coords);
  std::string EmitLayout(const Node& node, const std::vector<std::string>& coords);
  std::string EmitBatchNorm(const Node& node, const std::vector<std::string>& coords);
  std::string EmitEmbedding(const Node& node, const std::vector<std::string>& coords);
  std::string EmitInRange(ValueId v, const LayoutRead& read, const std::string& op);
  void EmitLoad(const std::string& var, ValueId v, const std::vector<std::string>& coords);
  bool IsRowRead(const std::vector<std::string>& coords) const;

  const Program& program_;
  const std::vector<bool>& materialized_;
  KernelParams& params_;
  PythonWriter& w_;
  std::string mask_;
  std::string zero_;
  int& counter_;
  int tile_loads_ = 0;
  bool scalar_loads_ = false;
  std::vector<std::string> row_coords_;  // LoadRowsAlong; empty = off
  std::string row_mask_, row_zero_;
  std::string contiguous_flag_;
  std::map<int, std::string> bound_;
  std::map<std::string, std::string> memo_;
};

// NaN-propagating max/min (catalog/lowering.h), which the reductions use too.
using lowering::NanMax;
using lowering::NanMin;

// `reduced` (a tl.max/tl.min of `acc` over axis 1) made NaN where a lane of `acc` is NaN:
// tl.max/tl.min's own combine drops NaN on the GPU. Adds the sum of the NaN lanes (0.0 when
// there is none, which leaves +-inf as it is).
std::string NanOfLanes(const std::string& acc);

// The Triton expression of an elementwise operator applied to the variables `ins`: its
// catalog lowering.  "" for an operator that has none (not elementwise) or another arity.
std::string ElementwiseFormula(const OpInfo& op, const std::vector<std::string>& ins,
                               const std::vector<AttrValue>& attrs);

}  // namespace drtriton::codegen

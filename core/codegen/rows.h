// Private to codegen/: how a rows kernel (emit_rows.cc) sees its anchor's input.  A rows
// operator (a reduction over one dim, softmax, a scan, layer/group/instance norm) splits
// the input's coordinates into rows (kept) and a reduced extent R (combined); the layout
// maps (row coordinates, reduced coordinates) back to input, parameter and output
// coordinates (rows_layout.cc).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/python_writer.h"

namespace drtriton::codegen {

using Coords = std::vector<std::string>;

// The row emitter's operations are the catalog's row kinds (catalog.h RowKind).
using RowOp = RowKind;

// The row emitter's operation of a catalog operator (never kNone for one it emits).
inline RowOp RowOpOf(const OpInfo& op) { return op.row; }
// Operators whose result has one element per row.
inline bool IsReduction(RowOp op) { return op >= RowOp::kSum && op <= RowOp::kLogsumexp; }
// The normalizations: statistics per row, then every element normalized.
inline bool IsNorm(RowOp op) {
  return op == RowOp::kLayerNorm || op == RowOp::kGroupNorm || op == RowOp::kInstanceNorm ||
         op == RowOp::kBatchNorm;
}

// Where a norm's weight and bias vary: per row (instance_norm, batch_norm: one channel per row),
// along
// R (layer_norm: the normalized shape), or per element (group_norm: the channel of a group's
// element, the same for a whole block when channels are whole blocks long).
enum class ParamsVary { kNone, kPerRow, kAlongR, kPerElement };

// The shapes are the program's; the dims the same as text (sizes.h: literals, or runtime
// sizes).  Coordinates are expressions ("rc1", "r // 126"), not variables.
struct RowLayout {
  Shape row_shape;
  Shape r_shape;
  Dims row_dims;
  Dims r_dims;
  std::function<Coords(const Coords& row, const Coords& r)> in_coords;
  // Norms: coordinates of weight and bias.
  std::function<Coords(const Coords& row, const Coords& r, const Coords& in)> param_coords;
  ParamsVary params = ParamsVary::kNone;
  // Reductions: coordinates of the (smaller) result.
  std::function<Coords(const Coords& row)> out_coords;
  // The reduced dims are the input's innermost (only unit dims after them): a contiguous
  // tensor of the input's shape holds element (row, r) at offset row * R + r.
  bool trailing = false;
  // Rows are the channels of an (N, C, spatial...) input (batch norm): a contiguous tensor
  // holds element (c, r) at (r // S) * C * S + c * S + r % S, S the spatial size.
  bool channel_rows = false;
};

RowLayout LayoutOf(const GroupContext& ctx, const Node& node, RowOp op);

// The layout reduces the input's last dim (`trailing`), but a stored value the input is read
// from (through transposes, permutes and elementwise nodes computed inline) holds a kept dim
// innermost: consecutive r are a stride apart in memory, consecutive rows adjacent.  L2 14's
// row sum taken before the product (reassociate.h) sums the weight's transpose: a program
// per row of 8192 lanes each 32 KB apart read every 4-byte element from its own sector.
// Literal sizes only (generic mode's layouts are not traced).
bool ReducedDimStrided(const GroupContext& ctx, ValueId input, const RowLayout& l);

// The coordinates of the row-major flat index `flat` over `dims` as expressions, writing no
// line: "r // 126", "r % 126" ("0" for unit dims).  Used inside addresses, the expressions
// vanish with the strided path that needs them (the contiguous path reads `ptr + r`).
Coords InlineCoords(const std::string& flat, const Dims& dims);

// --- Running statistics (rows_stats.cc): the lines of the online softmax and of Welford,
// shared by the one-kernel schedule and the split one (emit_rows.cc). ---------------------

// Online softmax per lane: `m_acc`, the running max, and `s_acc`, the sum of exp(x - m_acc).
void MaxSumInit(PythonWriter& w);
void MaxSumUpdate(PythonWriter& w, const std::string& x);
// How a combine reduces its lanes: over the tile's row (a [BLOCK_O, 1] result), or a vector of
// one row's chunks to a scalar (the split output kernel's partials, rows_split.cc).
inline constexpr const char* kAcrossLanes = "axis=1, keep_dims=True";
inline constexpr const char* kToScalar = "axis=0";

// `row_max` and `row_sum` (of exp(x - row_max)) from per-lane or per-chunk maxima `m` and
// sums `s`.
void MaxSumCombine(PythonWriter& w, const std::string& m, const std::string& s,
                   const char* reduce = kAcrossLanes);

// Welford per lane: `mean_acc` and `m2_acc` (the sum of squared deviations from it).
// WelfordFirst starts them from the first block; the update of a later block `r0` weighs it
// 1 / (r0 // BLOCK_R + 1).
void WelfordInit(PythonWriter& w);
void WelfordFirst(PythonWriter& w, const std::string& x);
void WelfordUpdate(PythonWriter& w, const std::string& x);
// `mean` and `m2` of the `n` elements summarized by per-lane or per-chunk counts `cnt`, means
// `mean_of` and sums of squared deviations `m2_of` (the parallel combination, exact).
void WelfordCombine(PythonWriter& w, const std::string& cnt, const std::string& mean_of,
                    const std::string& m2_of, const std::string& n,
                    const char* reduce = kAcrossLanes);

}  // namespace drtriton::codegen

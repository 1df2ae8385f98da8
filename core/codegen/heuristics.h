// Block sizes, warps and stages.  Each function documents its numbers; `variant` > 0
// returns an alternative configuration (a different point of the same trade-off) so that
// --variants gives the search and RL distinct, valid kernels to choose from.
#pragma once

#include <cstdint>

#include "codegen/kernel.h"

namespace drtriton::codegen {

struct PointwiseConfig {
  int64_t block = 1024;
  LaunchConfig launch;
};
PointwiseConfig ChoosePointwise(int64_t numel, int variant);

// Rows kernels (reductions, softmax, norms, scans, pooling windows): BLOCK_O rows of
// BLOCK_R lanes each; the reduced extent R is looped over when it exceeds BLOCK_R.
struct RowsConfig {
  int64_t block_o = 1;
  int64_t block_r = 1024;
  // Few long rows (ChooseReduceRows): each row is split into `split` chunks of `chunk`
  // elements (a multiple of block_r), one program per (row, chunk); 1 = not split.
  int64_t split = 1;
  int64_t chunk = 0;
  LaunchConfig launch;
};
// `r_inner`: the reduced coordinates are the input's innermost (unit-stride for contiguous
// inputs); otherwise consecutive rows are adjacent in memory and tiles widen along rows.
RowsConfig ChooseRows(int64_t rows, int64_t reduced, int variant, bool r_inner = true);
// Reductions, softmax, norms and cumsum (emit_rows.cc).  A row of up to OnePassLimit(variant)
// elements is one block of BLOCK_R = next_power_of_2(R) lanes: the kernel reads it once,
// keeps it in registers for the write, and never loops.  Longer rows loop over blocks of
// OnePassLimit(variant) with running (online) statistics, two reads at most; when there are
// too few rows to fill the GPU, each row is split across programs (RowsConfig::split).
RowsConfig ChooseReduceRows(int64_t rows, int64_t reduced, int variant, bool r_inner);
int64_t OnePassLimit(int variant);

// Scans that must combine in torch's sequential order (cumprod): one element of R per step
// (BLOCK_R = 1) over BLOCK_O rows at once.
RowsConfig ChooseSequentialRows(int64_t rows, int variant);

struct ContractionConfig {
  int64_t block_m = 64, block_n = 64, block_k = 32;
  int64_t group_m = 8;
  // K elements summed into a partial accumulator before it joins the total (0: one running
  // sum over all of K).  See ChooseContraction for why long reductions are split.
  int64_t chunk_k = 0;
  LaunchConfig launch;
};
ContractionConfig ChooseContraction(int64_t m, int64_t n, int64_t k, int64_t batch, int variant);
// Contractions with a longer K sum it in chunks (ContractionConfig::chunk_k).
inline constexpr int64_t kChunkedAbove = 1024;

// The size the heuristics assume for a dim known only at run time (generic-shape
// candidates): a large problem, so that tiles take their full size and masks or loops
// cover whatever smaller size comes.  2^24 keeps products of two such sizes in int64.
inline constexpr int64_t kUnknownSize = int64_t{1} << 24;

// Number of distinct variants the heuristics offer (variant = 0 .. kNumVariants - 1).
inline constexpr int kNumVariants = 4;

}  // namespace drtriton::codegen

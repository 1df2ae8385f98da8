// The launch heuristics (heuristics.h).  Target: an H200 (132 SMs, 50 MB L2, 64K 32-bit
// registers and 228 KB shared memory per SM); the same sizes run in the CPU interpreter,
// where fewer, larger programs are faster.
#include "codegen/heuristics.h"

#include <algorithm>
#include <cmath>

namespace drtriton::codegen {
namespace {

// 2 waves of the H200's 132 SMs: below this many programs a memory-bound kernel leaves
// bandwidth unused, so large problems shrink their tiles until they reach it.
constexpr int64_t kMinPrograms = 264;
// Problems under 1M elements are launch-bound (a few microseconds either way): they keep
// the large tiles, which also keeps the CPU interpreter fast on tiny programs.
constexpr int64_t kLaunchBoundElems = int64_t{1} << 20;
// Programs that stream a long memory-bound range (a GEMV's slices; a long row's chunks do
// not, see SplitFewLongRows) are cut to about 16 per SM: with two waves' worth (264) the SMs
// that get one program more than the others set the time.  H200, KernelBench L1 4 (GEMV):
// 320 programs of 27 MB, 2.4 per SM, ran 4.23-4.29 ms (2.0 TB/s; eager 2.31); 2,048
// programs of 4 MB ran 2.17 ms (1.06x eager).
constexpr int64_t kStreamMinPrograms = 132 * 16;

int WarpsForTile(int64_t elems) {
  // About 16 fp32 values per thread of live data: 4096 elements -> 8 warps, 1024 -> 2.
  return static_cast<int>(std::clamp<int64_t>(elems / 512, 1, 8));
}

// Reducing an outer dim (sum over dim 0 of a row-major (N, C)): lanes along r are a stride
// apart, rows are adjacent.  64 rows x 64 lanes keeps 256-byte coalesced segments along rows
// while the loop walks r; the small tile also bounds registers.
RowsConfig StridedTile(int64_t rows, int64_t reduced, int variant) {
  static constexpr int64_t kRows[kNumVariants] = {64, 32, 128, 16};
  RowsConfig c;
  c.block_o = std::min(NextPow2(rows), kRows[variant % kNumVariants]);
  c.block_r = std::min(NextPow2(reduced), int64_t{64});
  c.launch.num_warps = WarpsForTile(c.block_o * c.block_r);
  return c;
}

}  // namespace

PointwiseConfig ChoosePointwise(int64_t numel, int variant) {
  // 1024 elements per program with 4 warps = 8 per thread: enough loads in flight to
  // cover HBM latency without spilling; variants trade tile size for more programs.
  static constexpr int64_t kBlocks[kNumVariants] = {1024, 512, 2048, 256};
  PointwiseConfig c;
  c.block = std::min(kBlocks[variant % kNumVariants], NextPow2(numel));
  c.block = std::max<int64_t>(c.block, 16);
  c.launch.num_warps = std::clamp(static_cast<int>(c.block / 256), 1, 8);
  return c;
}

RowsConfig ChooseRows(int64_t rows, int64_t reduced, int variant, bool r_inner) {
  if (!r_inner && rows > 1) {
    RowsConfig c = StridedTile(rows, reduced, variant);
    if (rows * reduced >= kLaunchBoundElems)
      while (c.block_o > 16 && CeilDiv(rows, c.block_o) < kMinPrograms) c.block_o /= 2;
    c.launch.num_warps = WarpsForTile(c.block_o * c.block_r);
    return c;
  }
  // One tile of about 4096 fp32 (16 KB of registers at 8 warps) covers a whole row up to
  // 4096 elements, so softmax and norms read their input once; longer rows loop.
  static constexpr int64_t kTile[kNumVariants] = {4096, 2048, 8192, 1024};
  const int64_t tile = kTile[variant % kNumVariants];
  RowsConfig c;
  c.block_r = std::min(NextPow2(reduced), tile);
  c.block_o = std::min(NextPow2(rows), std::max<int64_t>(1, tile / c.block_r));
  // Large problems: keep at least two waves of programs.
  if (rows * reduced >= kLaunchBoundElems)
    while (c.block_o > 1 && CeilDiv(rows, c.block_o) < kMinPrograms) c.block_o /= 2;
  c.launch.num_warps = WarpsForTile(c.block_o * c.block_r);
  return c;
}

// Fewer rows than two waves of programs (264 on 132 SMs), each longer than one block, in a
// problem of at least 1M elements: one program per row would leave most SMs idle (16 rows of
// 4M elements, KernelBench L1 40's layer norm, use 16 of 132).  Each row is cut into chunks of
// whole blocks so that rows x chunks comes to about two waves (kMinPrograms); the statistics
// of each chunk are combined by a second kernel (emit_rows.cc), so the traffic stays two reads
// and one write.  Not 16 programs per SM as for the GEMV (kStreamMinPrograms): on the H200
// L1 40 split to 16 x 17 = 272 programs ran 0.718 ms, to 16 x 128 = 2,048 ran 1.352 and 1.364
// (h200-2026-12-03-c), although a hand-written kernel pair of the same schedules ran
// 0.23-0.28 ms at 17 to 128 chunks a row and 16 warps (benchmarks/split_rows_probe.py): each
// of the teacher's output programs paid a fixed cost before it streamed (in its sm_90 build,
// 2,200 PTX lines and 39 barriers combining the row's partials across 16 warps, against 5 in
// the probe's), so fewer programs cost less.  torch.compile: 0.322 ms.  That combine is now
// scalar (rows_split.cc: 0 barriers, 40-58 registers in the sm_90 build); predicted ~0.25 ms
// as in the probe, not measured, and whether more programs then pay is open.
namespace {
void SplitFewLongRows(int64_t rows, int64_t reduced, RowsConfig& c) {
  const int64_t blocks = CeilDiv(reduced, c.block_r);
  if (rows >= kMinPrograms || blocks < 2 || rows * reduced < kLaunchBoundElems) return;
  // Rounded down: 16 rows x 17 chunks = 272 programs of 2 per SM is one round and 8 programs
  // (the occupancy audit's thin last round); 16 x 16 = 256 is 0.97 of one.
  const int64_t wanted = std::min(std::max<int64_t>(1, kMinPrograms / rows), blocks);
  const int64_t blocks_per_chunk = CeilDiv(blocks, wanted);
  c.chunk = blocks_per_chunk * c.block_r;
  c.split = CeilDiv(reduced, c.chunk);
  c.block_o = 1;
}
}  // namespace

// The longest row one program holds in registers.  8192 fp32 over 16 warps are 16 values per
// thread for each live copy of the row; softmax and the norms keep about four (the row, its
// exponentials or deviations, the offsets, the mask): ~64 of a thread's 255 registers, so two
// 512-thread programs fit an SM's 64K registers.  Twice that (32 per copy, ~128 registers)
// leaves one program per SM.  For comparison, Inductor makes a reduction persistent up to
// 1024 elements along the inner dim (16x that when multi-kernel benchmarking may fall back
// to the looped kernel).  Variants: 4096 and 2048 loop earlier, 16384 holds longer rows.
int64_t OnePassLimit(int variant) {
  static constexpr int64_t kLimit[kNumVariants] = {8192, 4096, 16384, 2048};
  return kLimit[variant % kNumVariants];
}

// A row longer than the one-pass limit is walked in blocks, and the block then sets only how
// much of the row a program has in flight and how many programs share an SM.  With many such
// rows, 4096 elements over 8 warps beat 8192 over 16 on all five level-1 problems timed on the
// H200 (benchmarks/variant_probe.py, h200-2026-12-03-e; torch.compile in brackets): L1 34
// instance norm 7.15 -> 5.71 ms (6.00), L1 91 reversed cumsum 7.08 -> 4.73 (6.71), L1 98 KL
// divergence 0.639 -> 0.619 (0.580), L1 100 hinge loss 0.997 -> 0.986 (1.094), L1 23 softmax
// 4.837 -> 4.835 (4.724).  Instance norm's 8192-element loop took 80 registers a thread in
// its sm_90 build: one 16-warp program per SM, whose loads stall together; at 4096, several
// programs interleave theirs.  Variant 1 takes 8192, so the four variants stay distinct.  Few
// long rows (split across programs, SplitFewLongRows) keep the one-pass tile: L1 40's split
// was measured at 8192 over 16 warps (0.236 ms against torch.compile's 0.325).
int64_t LoopBlock(int variant) {
  static constexpr int64_t kBlock[kNumVariants] = {4096, 8192, 16384, 2048};
  return kBlock[variant % kNumVariants];
}

// Softmax and the norms move a long row three times on the other schedules: two reads (the
// statistics, then the write) and a write, because a row longer than a program's registers
// is gone from the SM before its statistics are known, and from the 50 MB L2 too when
// thousands of rows stream past (H200, h200-2026-12-03-f: KernelBench L1 23's softmax over
// 4096 rows of 393,216 floats ran 4.84 ms, 94% of what three transfers of its 6.4 GB take at
// the 4.3 TB/s copy rate; L1 34's instance norm, rows of 1 MB, 5.67 ms at 62% of the
// two-transfer bound).  The cooperative schedule holds the row in the registers of several
// programs instead: each loads one block-sized chunk, publishes the chunk's statistics, waits
// until the row's other chunks have published theirs, combines them and writes its chunk from
// registers: one read and one write, 2/3 of the bytes.  Chunks are OnePassLimit blocks (16
// fp32 a thread, at most 8192 over 16 warps) at 64 registers a thread, so that 32 / warps
// programs fit an SM (2 of 16 warps: 1,024 threads, all 64K registers).  Shorter rows keep
// the loop, whose second read may still come from L2 (a 4096-element block per 8-warp
// program, 4 per SM, re-reading rows of at most 256 KB; kCooperativeMinRow is that guess).
// At most 32 chunks a row.  With one row a round (264 resident programs: 132 SMs x 2) every
// program waits for the slowest, every round; at 48 chunks (KernelBench L1 23's softmax,
// 4096 rows of 393,216) the H200 ran the cooperative kernel 1.13x slower than the loop
// (5.455 against 4.835 ms, h200-2026-12-05d), where at 8, 16 and 32 it was 1.06x, 1.08x and
// (instance norm, L1 34) 1.33x faster.  H100 (2026-12-05, results
// h100-2026-12-05-coop, `cooperative_rows_speed.py`, cooperative against the loop in the same
// verification): 16 chunks a row 1.14-1.19x faster, 32 chunks 1.17-1.24x (L1 34's instance
// norm 6.35 ms, torch.compile 7.71), 48 (L1 23's softmax) 1.03x (6.32 ms, torch.compile 9.16),
// and 256 (L1 35's group norm, one row a round) 8.17 ms against torch.compile's 7.47.  The
// wrapper falls back to the split kernels where the GPU holds fewer programs than a row has
// chunks.  Variant 1 keeps the loop: the search and the benchmark have the three-transfer
// schedule beside it, for rows where it wins.
bool CooperativeRows(int64_t reduced, int variant, RowsConfig& c) {
  if (variant % kNumVariants == 1) return false;
  const int64_t block = std::min<int64_t>(OnePassLimit(variant), 8192);
  const int64_t split = CeilDiv(reduced, block);
  if (reduced < kCooperativeMinRow || reduced >= kUnknownSize || split < 2 ||
      split > kCooperativeMaxSplit)
    return false;
  c.block_o = 1;
  c.block_r = block;
  c.chunk = block;
  c.split = split;
  c.cooperative = true;
  c.launch.num_warps = static_cast<int>(std::clamp<int64_t>(block / 512, 1, 16));
  c.programs_per_sm = 32 / c.launch.num_warps;
  c.coop_max_registers = 64;
  return true;
}

// The loop's second read comes from L2 only while the rows the resident programs walk fit
// there, and in one pass it is not needed at all.  H200 (2026-12-05, results
// h200-2026-12-05d, cooperative_rows_speed.py, each against torch.compile in the same
// verification): softmax over 32,768 rows of 16,384 took 1.203 ms in variant 0's 4096-element
// loop, 1.071 in 8192 blocks and 1.033 in one 16,384-element pass (torch.compile 1.182);
// over 16,384 rows of 32,768, 1.475, 1.380 and 1.364 (16,384 blocks; torch.compile 2.171);
// instance norm over 16,384 rows of 32,768, 1.639, 1.352 and 1.086 (torch.compile 1.623).
bool WidenRereadRows(int64_t rows, int64_t reduced, int variant, RowsConfig& c) {
  if (variant != 0 || rows < kMinPrograms || c.split > 1 || c.cooperative ||
      reduced <= OnePassLimit(0) || reduced >= kCooperativeMinRow)
    return false;
  c.block_o = 1;
  c.block_r = std::min(NextPow2(reduced), kWideRereadBlock);
  c.launch.num_warps = 16;
  return true;
}

// Reducing an outer dim of few rows: ChooseRows narrows the tile to 16 rows to reach two waves
// of programs, each walking all of R.  KernelBench L2 14's sum over the columns of its 8192 x
// 8192 bf16 weight (moved before the GEMM by reassociate.h) became 512 programs of 16 rows
// (32-byte segments) x 64 lanes in 2 warps, a few KB in flight per SM; with its GEMV it took
// 0.216 ms on the H100 (h100-2026-12-06), against torch.compile's whole GEMM at 0.185, where
// 134 MB read at the copy bandwidth is ~0.045 ms.  Here the tile keeps StridedTile's
// adjacent rows and R is cut into chunks (RowsConfig::split, combined by a second kernel) so
// that row blocks x chunks come to kStreamMinPrograms, as a GEMV's long slices (whose
// measurement set that count).  Not for unknown sizes, nor rows that fill the GPU already.
namespace {
void SplitFewStridedRows(int64_t rows, int64_t reduced, int variant, RowsConfig& c) {
  RowsConfig t = StridedTile(rows, reduced, variant);
  const int64_t row_blocks = CeilDiv(rows, t.block_o);
  const int64_t blocks = CeilDiv(reduced, t.block_r);
  if (row_blocks >= kMinPrograms || blocks < 2 || reduced >= kUnknownSize ||
      rows * reduced < kLaunchBoundElems)
    return;
  // The output kernel loads a row block's partials as one [block_o, chunks] tile in one warp
  // (emit_rows.cc): at most 2048 of them, 64 a thread.
  const int64_t most = std::max<int64_t>(1, int64_t{2048} / t.block_o);
  const int64_t wanted =
      std::min({std::max<int64_t>(1, kStreamMinPrograms / row_blocks), blocks, most});
  t.chunk = CeilDiv(blocks, wanted) * t.block_r;
  t.split = CeilDiv(reduced, t.chunk);
  c = t;
}
}  // namespace

RowsConfig ChooseReduceRows(int64_t rows, int64_t reduced, int variant, bool r_inner) {
  if (!r_inner && rows > 1) {
    RowsConfig c = ChooseRows(rows, reduced, variant, r_inner);
    SplitFewStridedRows(rows, reduced, variant, c);
    return c;
  }
  // One tile of OnePassLimit elements: a whole row up to that length, or several short rows.
  const int64_t tile = OnePassLimit(variant);
  // Unknown sizes (generic mode, whose rows are short more often than not) keep the tile.
  const bool many_long_rows = reduced > tile && reduced < kUnknownSize && rows >= kMinPrograms;
  RowsConfig c;
  c.block_r = many_long_rows ? LoopBlock(variant) : std::min(NextPow2(reduced), tile);
  c.block_o = many_long_rows ? 1 : std::min(NextPow2(rows), std::max<int64_t>(1, tile / c.block_r));
  // Large problems: keep at least two waves of programs.
  if (rows * reduced >= kLaunchBoundElems)
    while (c.block_o > 1 && CeilDiv(rows, c.block_o) < kMinPrograms) c.block_o /= 2;
  // 16 fp32 per thread and tile (see above): 8192 elements -> 16 warps, 1024 -> 2.
  c.launch.num_warps = static_cast<int>(std::clamp<int64_t>(c.block_o * c.block_r / 512, 1, 16));
  SplitFewLongRows(rows, reduced, c);
  return c;
}

StripConfig ChooseStrips(int64_t rows, int64_t strips, int64_t vec, int variant) {
  // One strip per thread: 128 strips are 4 warps and, at 4 fp32 a strip, 512 outputs; 2 KB of
  // output a program keeps the per-program index arithmetic (a few scalar divisions) below
  // 1% of its work.  Variants: 128, 256, 64, 512 strips (512: 8 warps, two strips a thread).
  static constexpr int64_t kStrips[kNumVariants] = {128, 256, 64, 512};
  int64_t per_program = kStrips[variant % kNumVariants];
  auto plan = [&](int64_t share) {
    StripConfig c;
    c.block_g = std::min(NextPow2(strips), share);
    c.block_r = std::min(NextPow2(rows), std::max<int64_t>(1, share / c.block_g));
    c.row_blocks = c.block_r == 1 ? CeilDiv(strips, c.block_g) : 1;
    c.programs = c.block_r == 1 ? rows * c.row_blocks : CeilDiv(rows, c.block_r);
    // A warp per 32 strips of the tile (a small problem's tile is its whole size).
    c.launch.num_warps =
        static_cast<int>(std::clamp<int64_t>(c.block_r * c.block_g / 32, 1, 8));
    return c;
  };
  StripConfig c = plan(per_program);
  // Large problems: keep at least two waves of programs.
  if (rows * strips * vec >= kLaunchBoundElems)
    while (per_program > 32 && c.programs < kMinPrograms) c = plan(per_program /= 2);
  return c;
}

StripConfig InterpreterStrips(const StripConfig& gpu, int64_t rows, int64_t strips) {
  // L1 46 shrunk to 16x16x16x16x16 (benchmarks/memory_bound_speed.py --device cpu): 256
  // programs of 128 strips took 76 s a call, about 400 interpreted operations a program (27
  // chunk loads, their splits and sums), while numpy's work per operation is tiny.
  constexpr int64_t kInterpreterStrips = 8192;
  StripConfig c = gpu;
  if (gpu.block_r == 1) {
    c.block_g = std::min(NextPow2(strips), kInterpreterStrips);
    c.row_blocks = CeilDiv(strips, c.block_g);
    c.programs = rows * c.row_blocks;
  } else {
    c.block_r = std::min(NextPow2(rows), std::max(gpu.block_r, kInterpreterStrips / c.block_g));
    c.programs = CeilDiv(rows, c.block_r);
  }
  return c;
}

RowsConfig ChooseSequentialRows(int64_t rows, int variant) {
  // A product's order matters where it leaves float32's range: sequentially, a prefix that
  // underflowed to 0 stays 0, but a tree-order scan (tl.cumprod over a tile) can overflow a
  // partial product of later elements to inf first, and inf * 0 is NaN.  So R is walked one
  // element per step, and the parallelism is across rows: up to 256 rows per program (256
  // lanes fill 2 warps), halved for large problems down to 32 to keep the SMs busy.
  // Variants: 256, 128, 512, 64 rows.
  static constexpr int64_t kRows[kNumVariants] = {256, 128, 512, 64};
  RowsConfig c;
  c.block_r = 1;
  c.block_o = std::min(NextPow2(rows), kRows[variant % kNumVariants]);
  while (c.block_o > 32 && CeilDiv(rows, c.block_o) < kMinPrograms) c.block_o /= 2;
  c.launch.num_warps = WarpsForTile(c.block_o);
  return c;
}

const char* DotPrecisionName(DotPrecision precision) {
  switch (precision) {
    case DotPrecision::kIeee:
      return "ieee";
    case DotPrecision::kBf16x3:
      return "bf16x3";
    case DotPrecision::kBf16x6:
      return "bf16x6";
    case DotPrecision::kFp16x3:
      return "fp16x3";
  }
  return "ieee";
}

bool DotPrecisionFromName(const std::string& name, DotPrecision* precision) {
  for (DotPrecision p :
       {DotPrecision::kIeee, DotPrecision::kBf16x3, DotPrecision::kBf16x6, DotPrecision::kFp16x3}) {
    if (name == DotPrecisionName(p)) {
      *precision = p;
      return true;
    }
  }
  return false;
}

namespace {

// A workspace of split-K partial tiles holds split x the output: at most 64M floats (256 MB).
constexpr int64_t kMaxWorkspaceFloats = int64_t{1} << 26;

// The narrow path's tiles (ContractionConfig::narrow): with 4 warps, a product tile
// BLOCK_M x BLOCK_K x BLOCK_N of 4096 elements is 32 registers per thread.  Matrix times
// vector (N small): BLOCK_K = 128 floats of a row-major A row are one 512-byte run per row.
// Vector times matrix (M small): BLOCK_K = 64 and BLOCK_N up to 64, 256-byte runs whether
// the second operand is (K, N) row-major (matmul) or (N, K) (linear's weight).
void ChooseNarrowTiles(int64_t m, int64_t n, int64_t k, ContractionConfig* c) {
  constexpr int64_t kProductTile = 4096;
  if (n <= kNarrowAtMost) {
    c->block_n = NextPow2(n);
    c->block_k = std::clamp<int64_t>(NextPow2(k), 16, 128);
    c->block_m = std::clamp<int64_t>(kProductTile / (c->block_k * c->block_n), 1, NextPow2(m));
  } else {
    c->block_m = NextPow2(m);
    c->block_k = std::clamp<int64_t>(NextPow2(k), 16, 64);
    c->block_n = std::clamp<int64_t>(kProductTile / (c->block_m * c->block_k), 1, NextPow2(n));
  }
  c->launch.num_warps = 4;
}

// Tensor-core (or FMA tl.dot) tiles: 128x128 for large outputs, halved for parallelism.
void ChooseDotTiles(int64_t m, int64_t n, int64_t k, int64_t batch, int variant,
                    int64_t max_block_k, ContractionConfig* c) {
  // fp32 operand tiles of 128x128 with BLOCK_K 32 and 3 stages use
  // (128*32 + 32*128) * 4 B * 3 = 96 KB of shared memory, under the H200's 228 KB; tl.dot
  // needs every block dim >= 16.  Variants: 64x64, 128x64, 64x128.
  static constexpr int64_t kM[kNumVariants] = {128, 64, 128, 64};
  static constexpr int64_t kN[kNumVariants] = {128, 64, 64, 128};
  const int v = variant % kNumVariants;
  c->block_m = std::clamp<int64_t>(NextPow2(m), 16, kM[v]);
  c->block_n = std::clamp<int64_t>(NextPow2(n), 16, kN[v]);
  c->block_k = std::clamp<int64_t>(NextPow2(k), 16, max_block_k);
  // Too few tiles for the 132 SMs: halve the larger tile dim for parallelism, down to 32; a
  // long K (a split-K candidate, ChooseSplitK) stops at 64, where a tile still feeds the
  // tensor cores, and gets its parallelism from the K slices instead.
  const bool long_k = k != kUnknownSize && CeilDiv(k, c->block_k) > kSplitAboveSteps;
  const int64_t smallest = long_k ? 64 : 32;
  while (CeilDiv(m, c->block_m) * CeilDiv(n, c->block_n) * batch < 132 &&
         std::max(c->block_m, c->block_n) > smallest && m * n * batch >= kLaunchBoundElems / 4) {
    if (c->block_m >= c->block_n)
      c->block_m /= 2;
    else
      c->block_n /= 2;
  }
  c->launch.num_warps = DotWarps(c->block_m, c->block_n);
}

// Split-K (ContractionConfig::split_k) for outputs with too few tiles to occupy the SMs and a
// long K: slices bring the programs to about kMinPrograms (two waves).  Not measured on the
// GPU yet.  A 256 x 256 x 524,288 matmul is 4 tiles of 128x128 of 16,384 steps each, on 4 of
// 132 SMs; 64 slices of 8,192 (whole chunks, ChooseContraction) make 256 programs (up to 32x
// from the SMs alone) for a workspace of 64 x 256 KB = 16 MB, written and read once (a few
// microseconds at 4 TB/s).
//
// The narrow path (a GEMV) is memory-bound and wants many programs instead: KernelBench L1 4
// (2048 x 1 x 1,048,576, 8.6 GB of A) split to two waves was 320 programs of 27 MB, 2.4 per
// SM, so the SMs holding three ran 1.5x longer than those holding two; measured 4.23-4.29 ms
// on the H200 (2.0 TB/s, against 4.3 TB/s copy; eager 2.31 ms).  kStreamMinPrograms (16 per
// SM) leaves at most one program in 16 of imbalance: 2,048 programs of 4 MB there (64 row
// tiles x 32 slices of 32,768, whole chunks), a 512 KB workspace: 2.17 ms on the H200 (1.06x
// eager).

void ChooseSplitK(int64_t m, int64_t n, int64_t k, int64_t batch, ContractionConfig* c) {
  const int64_t programs = CeilDiv(m, c->block_m) * CeilDiv(n, c->block_n) * batch;
  const int64_t steps = CeilDiv(k, c->block_k);
  const int64_t wanted = c->narrow ? kStreamMinPrograms : kMinPrograms;
  const int64_t below = c->narrow ? kStreamMinPrograms : kSplitBelowPrograms;
  if (programs >= below || steps <= kSplitAboveSteps) return;
  int64_t split = std::min(CeilDiv(wanted, programs), steps / kMinSliceSteps);
  split = std::min(split, std::max<int64_t>(1, kMaxWorkspaceFloats / (m * n * batch)));
  if (split < 2) return;
  c->k_slice = CeilDiv(steps, split) * c->block_k;
  c->split_k = CeilDiv(k, c->k_slice);
}

}  // namespace

ContractionConfig ChooseContraction(int64_t m, int64_t n, int64_t k, int64_t batch, int variant,
                                    DotPrecision precision) {
  ContractionConfig c;
  // Generic-shape candidates know no size (kUnknownSize): one kernel with full tiles.
  const bool known = m != kUnknownSize && n != kUnknownSize && k != kUnknownSize;
  c.narrow = known && std::min(m, n) <= kNarrowAtMost;
  // A matrix-vector product (the narrow path, no tl.dot) sums on the FMA units: on the H200
  // (2026-12-01) the bf16x6 split put 4 of 2048 elements of KernelBench L1 4's 2048 x 1 x
  // 1,048,576 GEMV past 1e-4 (0.05454 against 0.05408).  Every tl.dot takes the split: an
  // FMA tl.dot pads its tile to 16 as the tensor cores' does, so it computes the same padded
  // products more slowly (paper-preset programs 98 and 48, conv_transpose3d with 8 output
  // channels per group on FMA tl.dot tiles: 0.06x and 0.09x eager, h200-2026-12-05).
  c.precision = c.narrow ? DotPrecision::kIeee : precision;
  if (c.narrow)
    ChooseNarrowTiles(m, n, k, &c);
  else
    ChooseDotTiles(
        m, n, k, batch, variant,
        c.precision == DotPrecision::kFp16x3 && k >= 4 * kSplitBlockK ? kSplitBlockK : 32, &c);
  c.launch.num_stages = 3;
  if (known) ChooseSplitK(m, n, k, batch, &c);
  // Accuracy of long reductions.  With ieee, `acc += tl.dot(...)` is one running fp32 FMA sum
  // over all of K, whose rounding error grows with K; the H200 teacher run of 2026-11-30 lost 8
  // of 51 paper-preset programs, all with transposed convolutions (one with K = 10,725), by a
  // few elements 3e-3 off where cuDNN was 1e-4 off.  Summing chunks of about sqrt(K) elements
  // into a partial accumulator first makes the error grow with ~2 sqrt(K) instead of K, for one
  // more register tile and one add per chunk.  A chunk spans at least 8 BLOCK_K steps: the
  // software pipeline (num_stages) works on the inner loop, and a few steps per chunk would
  // spend them filling and draining it.
  // A tensor-core split already sums each BLOCK_K step into a fresh tile (Triton's lowering
  // adds the step's partial products from zero, then adds them to the accumulator once), so
  // its running sum has K / BLOCK_K terms; so has the narrow path's (a tl.sum per step).  In
  // the CPU emulation of bf16x6 (benchmarks/dot_split_accuracy.py, 64 x K x 64) the single
  // sum's relative error against float64, over that of torch's fp32 matmul, is on torch.randn
  // inputs (where cancellation puts elements near zero and verdicts are decided) 0.80 at
  // K = 4096 (128 steps of 32), 1.06 at 8192 and 1.21 at 12288; chunked, 0.40-0.50.  On
  // torch.rand inputs it is 1.85 at 4096, but that is 1.5e-7, 600x inside rtol and 5.7x below
  // one running FMA sum (how ieee and cuBLAS SGEMM add; the H200's SGEMM: 1.1e-6 on 4096^3).
  // So a split chunks above 128 steps, and a 4096^3 matmul keeps its one accumulator tile, as
  // in the 65.6 TFLOP/s measurement (heuristics.h, kDefaultDotPrecision); chunked, it would
  // hold a third accumulator-sized tile beside `acc` and the split's fresh one (its cost is
  // not measured on the GPU yet).  Short reductions keep the single sum.  With split-K each
  // slice is its own sum (the slices are added in order afterwards), so the slice is the K
  // that counts.
  const int64_t summed = c.split_k > 1 ? c.k_slice : k;
  const bool fma_chain = c.precision == DotPrecision::kIeee && !c.narrow;
  const int64_t terms = fma_chain ? summed : CeilDiv(summed, c.block_k);
  const int64_t limit = fma_chain ? kChunkedAbove : kSplitChunkedAbove;
  if (terms > limit && k != kUnknownSize) {
    const auto root = static_cast<int64_t>(std::sqrt(static_cast<double>(summed)));
    c.chunk_k = c.block_k * std::max<int64_t>(8, NextPow2(CeilDiv(root, c.block_k)));
    if (c.split_k > 1) {  // whole chunks per slice
      c.k_slice = CeilDiv(c.k_slice, c.chunk_k) * c.chunk_k;
      c.split_k = CeilDiv(k, c.k_slice);
    }
  }
  return c;
}

bool ChooseTmaContraction(int64_t m, int64_t n, int64_t batch, int variant,
                          ContractionConfig* c) {
  if (variant != 0) return false;
  const auto programs = [&](int64_t bm, int64_t bn) {
    return CeilDiv(m, bm) * CeilDiv(n, bn) * batch;
  };
  const int64_t block_m = m <= 64 ? 64 : 128;
  // 128 x 256 wherever its tiles fill kTmaMinPersistent SMs: 128 x 128 would leave as many idle
  // (twice the tiles, persistent over the same divisor) at half the work a loaded byte.  H200
  // (h200-2026-12-03-c, gemm_variants.py): L2 55's 128 x 32768 x 32768 (128 wide tiles) ran
  // at 0.978 of cuBLAS in 128 x 256, where the teacher's 128 x 128 took 0.946 of eager.
  // One tile of 65-128 rows (M) streams each weight element once: 128 FLOP a bf16 byte, below
  // the H100's ridge (~295), memory-bound.  There BLOCK_K 128 moves twice the bytes a stage.
  // H100 (2026-12-06, results/h100-2026-12-06c, gemm_variants.py, 128 x 32768 x 32768 in bf16,
  // KernelBench L2 55, 56, 59): 128 x 128 x 128 in 3 stages 0.734 ms, 1.05x cuBLAS's 0.772;
  // 128 x 256 x 64 (below) 0.796; 128 x 128 x 64 in 4 stages 0.768, in 5 0.744.
  const bool streams = m > 64 && m <= 128 && n >= 256;
  const bool wide = !streams && n >= 256 && programs(block_m, 256) >= kTmaMinPersistent;
  const int64_t block_n = wide ? 256 : n <= 64 ? 64 : 128;
  const int64_t tiles = programs(block_m, block_n);
  if (tiles < kTmaMinPrograms) return false;
  ContractionConfig t;
  t.block_m = block_m;
  t.block_n = block_n;
  t.block_k = streams ? 128 : 64;
  t.group_m = 8;
  t.precision = DotPrecision::kIeee;  // unused: the kernel multiplies half tiles as they come
  t.launch.num_warps = DotWarps(block_m, block_n);
  t.launch.num_stages = 3;
  for (int64_t d = std::min(tiles, kTmaMaxPrograms); d >= kTmaMinPersistent && tiles > d; --d)
    if (tiles % d == 0) {
      t.programs = d;
      break;
    }
  *c = t;
  return true;
}

bool ChooseShiftedRowsTma(int64_t samples, int64_t reach, int64_t n, int64_t channels,
                          int variant, ContractionConfig* c) {
  if (variant != 0) return false;
  ContractionConfig t;
  t.block_m = 128;
  t.block_n = std::clamp<int64_t>(NextPow2(n), 16, 128);
  t.block_k = channels % 64 == 0 ? 64 : channels % 32 == 0 ? 32 : 16;
  if (samples * CeilDiv(reach, t.block_m) * CeilDiv(n, t.block_n) < kTmaMinPrograms) return false;
  if (channels < kShiftedRowsMinChannels) return false;
  t.group_m = 1;
  t.precision = DotPrecision::kIeee;  // unused: the kernel multiplies half tiles as they come
  t.launch.num_warps = DotWarps(t.block_m, t.block_n);
  t.launch.num_stages = 3;
  *c = t;
  return true;
}

std::vector<TileChoice> TunedTiles(const ContractionConfig& c, int64_t m, int64_t n) {
  if (c.split_k > 1 || c.narrow || c.precision == DotPrecision::kIeee) return {};
  const TileChoice own{c.block_m, c.block_n, c.group_m, c.launch.num_warps, c.launch.num_stages};
  const TileChoice wide{128, 256, 8, 8, 3}, tall{256, 128, 8, 8, 3};
  TileChoice deeper = own, wider_warps = own;
  deeper.num_stages = own.num_stages + 1;
  // The own tile over 8 warps where it has 4 and holds at least 128x64 (kEightWarpTile): each
  // thread keeps half the accumulators (acc, a chunk's part, the split's fresh tile).  sm_90
  // builds on the CPU: paper-preset program 12's conv_transpose1d (128x64, an inlined
  // batch_norm and hardsigmoid) spills 136 instructions, 68 in its K loop, at 4 warps and 26,
  // 1 at 8; program 57's linear (64x64 there) 31 and 0.  Not timed: the autotuner decides.
  if (own.num_warps == 4 && own.block_m * own.block_n >= kEightWarpTile) wider_warps.num_warps = 8;
  std::vector<TileChoice> tiles = {own};
  for (const TileChoice& t : {wide, tall, deeper, wider_warps}) {
    const bool fits = t.block_m <= std::max<int64_t>(16, NextPow2(m)) &&
                      t.block_n <= std::max<int64_t>(16, NextPow2(n));
    if (fits && std::find(tiles.begin(), tiles.end(), t) == tiles.end()) tiles.push_back(t);
  }
  return tiles.size() > 1 ? tiles : std::vector<TileChoice>{};
}

int64_t DotSharedBytes(int64_t block_m, int64_t block_n, int64_t block_k, int num_stages,
                       OperandLoads loads) {
  const int64_t a = block_m * block_k, b = block_k * block_n;
  const int64_t staged = std::max(num_stages - 1, 0) * (loads.a * a + loads.b * b);
  return (staged + a + b) * 4;
}

void FitSharedMemory(OperandLoads loads, ContractionConfig* c) {
  if (c->narrow) return;
  const auto fits = [&](int64_t bm, int64_t bn, int stages) {
    return DotSharedBytes(bm, bn, c->block_k, stages, loads) <= kSharedMemoryBudget;
  };
  int& stages = c->launch.num_stages;
  while (!fits(c->block_m, c->block_n, stages)) {
    if (stages > 2) {
      --stages;
    } else if (c->block_k > 16) {
      c->block_k /= 2;
    } else {
      const bool can_m = c->block_m > 16;
      const bool can_n = c->block_n > 16 && c->block_n / 2 >= c->min_block_n;
      // 16x16x16 in 2 stages: 10 KB a load, so only a program with ~20 would miss
      if (!can_m && !can_n) break;
      const bool halve_m = can_m && (c->block_m >= c->block_n || !can_n);
      (halve_m ? c->block_m : c->block_n) /= 2;
      c->launch.num_warps = DotWarps(c->block_m, c->block_n);
    }
  }
  if (c->tuned.empty()) return;
  // The own tile first, as it now is; the others stay whether or not they fit float32
  // operands: they are there for 16-bit ones (TunedTiles), and the autotuner skips a
  // configuration that is out of resources as long as one fits.
  std::vector<TileChoice> tuned = {
      {c->block_m, c->block_n, c->group_m, c->launch.num_warps, stages}};
  for (const TileChoice& t : c->tuned)
    if (std::find(tuned.begin(), tuned.end(), t) == tuned.end()) tuned.push_back(t);
  c->tuned = tuned.size() > 1 ? tuned : std::vector<TileChoice>{};
}

// A window-sum kernel (ContractionConfig::narrow, for a depthwise convolution) takes one kernel
// offset a step (BLOCK_K = 1): its operand tile is BLOCK_M output positions of one channel, in a
// layout whose threads run along the positions, so each step's loads are coalesced rows of the
// input, and no lane is padding.  With BLOCK_K the window's next power of two (16 lanes for 3x3),
// the H200 (2026-12-02, results/h200-2026-12-02) ran KernelBench's 3x3 depthwise convolutions at
// 1.1 TFLOP/s, 4.3 ms for L1 82's 266M outputs against eager's 2.5 (a 3x1 window, 4 lanes, ran
// at 3.2x eager); that tile spent 7 of 16 lanes on padding and spread a warp's loads over the
// window.  Predicted, not measured: L1 82 near its memory bound (1.07 GB read, 1.07 GB written,
// ~0.6 ms at 3.5 TB/s; the 9 overlapping reads of each element hit L1/L2).  4096 products a
// program are 32 per thread at 4 warps; variants trade positions per program for programs.
ContractionConfig ChooseWindowSum(int64_t m, int64_t n, int variant) {
  static constexpr int64_t kProduct[kNumVariants] = {4096, 2048, 8192, 1024};
  ContractionConfig c;
  c.block_n = std::min<int64_t>(NextPow2(n), 16);
  c.block_k = 1;
  c.block_m = std::clamp<int64_t>(kProduct[variant % kNumVariants] / c.block_n, 16,
                                  std::max<int64_t>(16, NextPow2(m)));
  c.group_m = 8;
  c.precision = DotPrecision::kIeee;  // no tl.dot
  c.narrow = true;
  c.launch.num_warps = 4;
  c.launch.num_stages = 1;
  return c;
}

// The narrow path (no tl.dot; M or N at most kNarrowAtMost) is memory-bound: a copy would add
// a read and a write of the operand to the one read of it that the product needs.  A single row
// has no row stride to align, and rows of at most kRowAlignment elements would grow by up to 16x
// for little vector width.  Rows of a known multiple of kRowAlignment are aligned in a
// contiguous input (every input the verifier and KernelBench pass); only a view into a wider
// tensor would not be, so such shapes emit no check and their candidates stay as they were.
// Runtime sizes (kUnknownSize) are checked.  An operand under kRepackMinElements (4 MB) is
// read as it is when its contraction is small too: its copy is one more launch (~5 us on the
// H200) for a GEMM that takes tens of microseconds at most (a KernelBench level-2 linear of
// 128 x 1024 x 512); L1 8's operands are 24M and 17M elements.  But a small operand may be
// read by a large contraction: paper-preset program 106 broadcasts a 134 x 5683 matrix over
// 466 batch entries (8.9G multiply-adds), and its unaligned rows made every element of A a
// 4-byte load, 0.17x eager on the H200 (h200-2026-12-05).  From kRepackMinProducts (1G, at
// least ~7 us of tensor-core work) the copy is made whatever the operand's size.  The limits
// are predictions, not measured.
bool RepacksUnalignedRows(const ContractionConfig& c, int64_t rows, int64_t cols,
                          int64_t products) {
  const bool aligned = cols != kUnknownSize && cols % kRowAlignment == 0;
  const bool known = rows != kUnknownSize && cols != kUnknownSize;
  const bool large_product = products == kUnknownSize || products >= kRepackMinProducts;
  const bool small = known && rows * cols < kRepackMinElements && !large_product;
  return !c.narrow && rows > 1 && cols > kRowAlignment && !aligned && !small;
}

bool PresplitsOperand(const ContractionConfig& c, int64_t products, int64_t tiles) {
  return c.precision == DotPrecision::kFp16x3 && !c.narrow && products != kUnknownSize &&
         products >= kPresplitMinProducts && tiles >= kPresplitMinTiles;
}

// 4096 elements a program, 32 per thread at 4 warps; 128-element row segments are 512 B of
// fp32, whole cache lines per warp.  Smaller matrices shrink the tile to their own size.
RepackConfig ChooseRepack(int64_t rows, int64_t cols) {
  RepackConfig c;
  c.block_c = std::min<int64_t>(128, NextPow2(cols));
  c.block_r = std::min<int64_t>(4096 / c.block_c, NextPow2(rows));
  c.launch.num_warps = 4;
  return c;
}

int64_t ConvChannelsLast(int64_t channels_per_group, int64_t window, bool window_sum,
                         bool paddable, int variant) {
  if (window_sum || variant == 1) return 0;
  const int64_t c = channels_per_group;
  const int64_t padded = CeilDiv(c, kChannelsLastMultiple) * kChannelsLastMultiple;
  if (padded == c) return c;
  const bool one_step = window * c <= kChannelsLastPadMinK;
  return paddable && !one_step && 3 * padded <= 4 * c ? padded : 0;  // a third more at most
}

// A program transposes BLOCK_R positions x BLOCK_C channels (4096 elements, 32 per thread at 4
// warps): loads run along positions (unit stride in NCHW) and stores along channels, each a
// row of at least 16 bytes; Triton converts the tile's layout between them in shared memory.
RepackConfig ChooseChannelsLast(int64_t positions, int64_t channels) {
  RepackConfig c;
  c.block_c = std::clamp<int64_t>(NextPow2(channels), 4, 64);
  c.block_r = std::min<int64_t>(4096 / c.block_c, std::max<int64_t>(16, NextPow2(positions)));
  c.launch.num_warps = 4;
  return c;
}

}  // namespace drtriton::codegen

// Block sizes, warps and stages.  Each function documents its numbers; `variant` > 0
// returns an alternative configuration (a different point of the same trade-off) so that
// --variants gives the search and RL distinct, valid kernels to choose from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  // Softmax and norms over long rows (CooperativeRows): the chunks are single blocks, and on a
  // GPU one persistent kernel of `programs_per_sm` programs an SM computes each chunk's
  // statistics, waits for the row's other chunks' and writes its chunk from registers; the
  // split pair of kernels (statistics, then output) runs elsewhere.
  // The cooperative kernel's launch: programs an SM the grid counts on, and the registers a
  // thread is capped at (maxnreg) so that they fit.
  bool cooperative = false;
  int programs_per_sm = 0;
  int coop_max_registers = 0;
  LaunchConfig launch;
};
// `r_inner`: the reduced coordinates are the input's innermost (unit-stride for contiguous
// inputs); otherwise consecutive rows are adjacent in memory and tiles widen along rows.
RowsConfig ChooseRows(int64_t rows, int64_t reduced, int variant, bool r_inner = true);
// Reductions, softmax, norms and cumsum (emit_rows.cc).  A row of up to OnePassLimit(variant)
// elements is one block of BLOCK_R = next_power_of_2(R) lanes: the kernel reads it once,
// keeps it in registers for the write, and never loops.  Longer rows loop over blocks of
// LoopBlock(variant) with running (online) statistics, two reads at most; when there are
// too few rows to fill the GPU, each row is split across programs (RowsConfig::split) in
// blocks of OnePassLimit(variant).
RowsConfig ChooseReduceRows(int64_t rows, int64_t reduced, int variant, bool r_inner);
int64_t OnePassLimit(int variant);
// Softmax, log_softmax and the norms over rows of at least kCooperativeMinRow elements, in at
// most kCooperativeMaxSplit chunks of one block: `c` becomes the cooperative schedule
// (RowsConfig::cooperative) and true is returned; otherwise (and always for variant 1) `c` is
// left as it is.
inline constexpr int64_t kCooperativeMinRow = int64_t{1} << 16;
inline constexpr int64_t kCooperativeMaxSplit = 32;
bool CooperativeRows(int64_t reduced, int variant, RowsConfig& c);
// Softmax and the norms over many contiguous rows longer than OnePassLimit(0) and shorter than
// kCooperativeMinRow: rows of up to kWideRereadBlock in one pass, longer ones looped in blocks
// of it (16 warps, 32 floats a thread), where `c` loops in blocks of 4096.  Variant 0 only,
// and with rows enough for two waves of programs (the measured case): fewer rows split.
// Returns whether `c` changed.
inline constexpr int64_t kWideRereadBlock = 16384;
bool WidenRereadRows(int64_t rows, int64_t reduced, int variant, RowsConfig& c);
int64_t LoopBlock(int variant);

// Pooling strips (emit_pool_strips.cc): a program owns BLOCK_R output rows of BLOCK_G strips,
// each strip `vec` consecutive outputs of the last dim that one thread computes from 16-byte
// loads.  `strips` per row, `rows` rows of them.  block_r > 1 only when a row has fewer strips
// than a program's share (BLOCK_G = the whole row, rounded up to a power of two).
struct StripConfig {
  int64_t block_g = 128;
  int64_t block_r = 1;
  int64_t row_blocks = 1;  // programs per row: ceil(strips / block_g) when block_r == 1
  int64_t programs = 1;
  LaunchConfig launch;
};
StripConfig ChooseStrips(int64_t rows, int64_t strips, int64_t vec, int variant);
// The same kernel's tile in Triton's CPU interpreter, which pays per operation and program,
// not per element: `gpu`'s layout (one row a program or several) with up to 8192 strips.
StripConfig InterpreterStrips(const StripConfig& gpu, int64_t rows, int64_t strips);

// Scans that must combine in torch's sequential order (cumprod): one element of R per step
// (BLOCK_R = 1) over BLOCK_O rows at once.
RowsConfig ChooseSequentialRows(int64_t rows, int variant);

// How tl.dot multiplies fp32 tiles on the GPU.  ieee is fp32 FMA on the CUDA cores.  The bf16
// splits are Triton's `input_precision`: each fp32 operand written as bf16 parts,
// hi = bf16(x), mid = bf16(x - hi), lo = bf16(x - hi - mid), and partial products made on the
// tensor cores in fp32 (Triton's F32DotTC pass): bf16x3 is hi*hi + hi*mid + mid*hi, bf16x6 adds
// mid*mid + hi*lo + lo*hi.  fp16x3 is the teacher's own split (emit_contraction.cc writes it):
// each operand scaled by 2^-8 (exact; operands up to 65504 * 2^8 = 1.7e7 stay finite), then
// hi = fp16(x), lo = fp16((x - hi) * 2^11), 22 significant bits in two fp16 parts, and a step
// is hi*hi + 2^-11 (hi*lo + lo*hi): three tensor-core products where bf16x6 has six.  Each
// BLOCK_K step starts its products from zero and joins the accumulator by an fp32 FMA on the
// CUDA cores: chained through the tensor cores (acc = tl.dot(hi, hi, acc)) the accumulator is
// added with truncation, and on the H200 the error grew with K (4.9e-6 at 4096^3, 9.7e-6 at
// K = 8192, against cuBLAS SGEMM's 1.1e-6 and 1.6e-6).  The CPU interpreter has no bf16 tl.dot
// and runs "ieee" (its fp16 tl.dot works: tests run the fp16x3 arithmetic there too); the
// wrapper chooses at launch time (wrapper.cc).
enum class DotPrecision { kIeee, kBf16x3, kBf16x6, kFp16x3 };
// "ieee", "bf16x3", "bf16x6", "fp16x3"; and back (false for any other name).
const char* DotPrecisionName(DotPrecision precision);
bool DotPrecisionFromName(const std::string& name, DotPrecision* precision);

// The GPU precision of the teacher's contractions.  An H200 (torch 2.11, Triton 3.6), plain
// Triton matmuls of 4096^3, 2048x4096x8192 and 8192x8192x1024 on torch.randn inputs
// (benchmarks/dot_split_speed.py, 2026-12-01; results/h200-2026-12-01-f):
//   fp16x3  147-151 TFLOP/s with 128x128x64 tiles, 8 warps, 3 stages (2.9x cuBLAS strict-fp32
//           SGEMM's 51), relative L2 error against float64 2.0e-7 - 2.4e-7 (SGEMM: 1.1e-6 -
//           1.6e-6); 125-128 with BLOCK_K 32.  Chained through the tensor cores instead:
//           133-142 TFLOP/s and 4.9e-6 - 9.7e-6.  The teacher's own kernels on KernelBench
//           level-1 GEMMs: 124 TFLOP/s, 2.4x eager (contraction_speed.py).  The CPU emulation
//           (benchmarks/dot_split_accuracy.py): 1.5e-7 - 4.2e-7, accepted by the verifier on
//           all its input distributions.
//   bf16x6  65-67 TFLOP/s (128x128x32), 72-73 (128x128x64); error 1.2e-7 - 2.9e-7.
//   bf16x3  98-121 TFLOP/s, but 4.4e-6: the verifier rejects it (outside 1e-4 on torch.randn
//           inputs even with the float64 envelope, benchmarks/dot_split_accuracy.py).
//   tf32x3  35 TFLOP/s, below SGEMM; tf32 8e-4 (fails the 1e-4 tolerance).
//   ieee    FMA units at about a third of SGEMM (KernelBench L1 4096^2 matmul: 7.78 ms
//           against eager's 2.69).
inline constexpr DotPrecision kDefaultDotPrecision = DotPrecision::kFp16x3;
// BLOCK_K of fp16x3 tiles when K allows: 64 ran 15% faster than 32 on 4096^3 (0.938 against
// 1.102 ms), bf16x6 10% (1.902 against 2.104); fp32 operand tiles of 128x64 and 64x128 in 3
// stages take 192 KB of the H200's 228 KB of shared memory (4 stages do not fit).
inline constexpr int64_t kSplitBlockK = 64;

// One tile the GPU's autotuner may choose for a contraction kernel (ContractionConfig::tuned);
// BLOCK_K stays the configuration's (its K chunks are whole BLOCK_K steps).
struct TileChoice {
  int64_t block_m = 64, block_n = 64, group_m = 8;
  int num_warps = 4, num_stages = 3;
  bool operator==(const TileChoice& o) const {
    return block_m == o.block_m && block_n == o.block_n && group_m == o.group_m &&
           num_warps == o.num_warps && num_stages == o.num_stages;
  }
};

struct ContractionConfig {
  int64_t block_m = 64, block_n = 64, block_k = 32;
  // FitSharedMemory keeps block_n at least this: a tile that computes a row operator across
  // its columns must hold every output channel (fusion.h Group::row_tail).
  int64_t min_block_n = 16;
  int64_t group_m = 8;
  // K elements summed into a partial accumulator before it joins the total (0: one running
  // sum over all of K).  See ChooseContraction for why long reductions are split.
  int64_t chunk_k = 0;
  // Split-K: K is cut into `split_k` slices of `k_slice` elements (a multiple of block_k and
  // of chunk_k), one program per (slice, tile) writing its partial tile to a float32
  // workspace; a second kernel adds the slices in order (deterministic) and runs the
  // epilogue.  1 = one kernel.  See ChooseContraction.
  int64_t split_k = 1;
  int64_t k_slice = 0;
  // A matrix-vector product (M or N at most kNarrowAtMost) or a depthwise convolution's window
  // sum (ChooseWindowSum): the tile's products are an elementwise multiply and a tl.sum over
  // BLOCK_K, no tl.dot (which pads dims to 16).
  bool narrow = false;
  DotPrecision precision = kDefaultDotPrecision;  // on the GPU; "ieee" in the interpreter
  // A persistent kernel's programs, each walking tiles / programs output tiles in turn
  // (ChooseTmaContraction); 0 = one program a tile.
  int64_t programs = 0;
  LaunchConfig launch;
  // Tiles Triton's autotuner times on the GPU at the kernel's first call, this configuration's
  // own first (TunedTiles); empty: this configuration alone.  The interpreter takes the first.
  std::vector<TileChoice> tuned;
};
// Warps for a tl.dot tile of block_m x block_n: 8 from 128 x 128 elements up, 4 below.
inline int DotWarps(int64_t block_m, int64_t block_n) {
  return block_m * block_n >= 128 * 128 ? 8 : 4;
}
// The tiles autotuned for a one-kernel tensor-core contraction of M x N (`c`: its chosen
// configuration, first in the list), or none: split-K, narrow and FMA (ieee) kernels keep
// theirs.  Why: one tile cannot serve every precision mode.  One candidate runs in each
// (wrapper.cc), and on the H200 (2026-12-02, results/h200-2026-12-02-c) the tiles chosen for
// strict fp32's fp16x3 split (128x128x64, 8 warps, 3 stages) ran bf16 operands at half of
// cuBLAS (KernelBench L2 14, 1024x8192x8192: 0.360 ms, 381 TFLOP/s, against 0.181) and
// convolutions at 0.33-0.82x torch.compile, where fp32's tiles beat cuBLAS SGEMM 3x.  The
// alternatives are the Triton tutorial's Hopper tiles for 16-bit operands (128x256 and 256x128,
// 8 warps, 3 stages: 147 KB of bf16 operand stages at BLOCK_K 64; as fp32 tiles 295 KB, over
// the H200's 228 KB, so Triton reports them out of resources and the autotuner skips them) and
// the chosen tile one stage deeper.  Tiles larger than the (power-of-two) problem are left out.
// And the own tile over 8 warps where it has 4 and at least kEightWarpTile elements (fewer
// registers a thread: heuristics.cc).  At most these five: each is compiled (outside the
// GPU's lock, verify/compile_pass.py) and timed by Triton's do_bench (~125 ms, under the
// lock) once per process, and cached on disk (autotune cache_results) for the next.
std::vector<TileChoice> TunedTiles(const ContractionConfig& c, int64_t m, int64_t n);
inline constexpr int64_t kEightWarpTile = 128 * 64;
// `precision`: the GPU's tl.dot precision the configuration is for (its K chunking follows it).
ContractionConfig ChooseContraction(int64_t m, int64_t n, int64_t k, int64_t batch, int variant,
                                    DotPrecision precision = kDefaultDotPrecision);
// Half-precision operand tiles by TMA (emit_contraction.cc, TmaPlanOf): a matmul's, bmm's or
// linear's operands that are stored, unit-stride bf16 or fp16 tensors arrive in shared memory
// by the TMA engine through host tensor descriptors (no address arithmetic, masks or async
// copies in the threads; the edges are zero-filled).  H200 (2026-12-03, results
// h200-2026-12-03-c, benchmarks/gemm_variants.py, bf16, each variant autotuned over six
// tiles): the pointer-loaded tile kernel the teacher uses reached 0.757-0.881 of cuBLAS on
// KernelBench level 2's four linear shapes, with TMA (device descriptors, persistent)
// 0.918-0.978; persistence alone 0.772-0.983 (0.81 at 2048 x 8192 x 8192, below the tile).
// Its best tile on every shape was 128 x 256 x 64 over 8 warps in 3 stages (147 KB of
// stages); 128 x 128 where N is under 256 or fewer than kTmaMinPersistent wide tiles.
// Variant 0 only: the other variants keep the pointer loads (the search times both).
// Returns false (c untouched) where the tiles would leave most SMs idle (fewer than
// kTmaMinPrograms programs): small products keep split-K and the autotuned tiles.
// Persistent where the tiles outnumber the SMs: `programs` programs (the largest divisor of
// the tile count up to kTmaMaxPrograms, at least kTmaMinPersistent; one a tile otherwise) each
// walk their tiles in turn.  H200 (2026-12-05, h200-2026-12-05d, gemm_variants.py, host
// descriptors): persistent 0.926 and 1.001 of cuBLAS bf16 at 1024x8192x8192 and
// 16384x4096x4096, one program a tile 0.871 and 0.890.  That kernel's loop was flattened
// (Triton pipelines the next tile's loads across this one's epilogue); the teacher's is not:
// flattened, KernelBench L2 40's (16384x4096x4096, bias epilogue) took 278,552 bytes of shared
// memory in its sm_90 build, past the 232,448 a block may hold, against 147,480 unflattened
// (benchmarks/occupancy_audit.py --precision bf16).  A divisor keeps every program's rounds
// whole, with no test of the tile against the count in the loop.
inline constexpr int64_t kTmaMinPrograms = 66;
inline constexpr int64_t kTmaMaxPrograms = 132;  // the H100's and H200's SMs
inline constexpr int64_t kTmaMinPersistent = 96;
bool ChooseTmaContraction(int64_t m, int64_t n, int64_t batch, int variant,
                          ContractionConfig* c);
// The TMA kernel of a convolution in shifted-rows form (contraction_spec.h, ShiftedRows):
// `samples` x `reach` output positions (the flattened input's, see there) by `n` output
// channels, K = taps x `channels`.  Variant 0 only, as ChooseTmaContraction, and not where the
// tiles would leave most SMs idle (kTmaMinPrograms).  Tiles: 128 positions by up to 128
// channels (the next power of two of `n`, at least 16: tl.dot's minimum), BLOCK_K the largest
// of 64, 32, 16 dividing `channels` (16 otherwise: a box past the copy's channels reads zeros,
// and the weight's next tap beside them multiplies those zeros), 3 stages.  Compiled for sm_90
// on the CPU (Triton 3.6; conv2d 64 -> 128 channels, 3 x 3): 128 x 128 x 64 over 8 warps took
// 98,328 bytes of shared memory in 3 stages (131,104 in 4), its 9 K steps pipelined as TMA
// copies into asynchronous wgmma reading both tiles from shared memory.  H100 (2026-12-06,
// results/h100-2026-12-06, conv_variants.py tma_shifted, the same kernel by hand autotuned
// over five tiles): 128 x 128 x 64, 8 warps, 3 stages was fastest at both KernelBench L2
// shapes timed, ahead of the same tile in 4 stages: 0.725 and 1.426 ms, 413-427 TFLOP/s.  In a
// later run (h100-2026-12-06c) the hand kernel chose 4 stages at 0.803 ms while this one, 3
// stages, took 0.883 replayed alone (0.876-0.891 in three runs).  Replayed at 4 stages
// (h100-2026-12-06d): 0.858 ms against 0.873 at 3 in the same run, 1.7%, once; kept at 3.
// Each kernel on each set of buffers (h100-2026-12-07b): the teacher's 6-7% slower on both,
// whose build differed from the hand kernel's in the epilogue's runtime strides only (now
// literal: kernel.h AllocatedStrides, 219 -> 90 registers, two programs an SM).
// Nor for fewer than kShiftedRowsMinChannels input channels: a box of 16 channels past 8 real
// ones reads zeros, and every tap is a K step of its own.  H100, bf16, whole candidates in one
// run (results/h100-2026-12-07, variant_probe.py --pointer): with 8 input channels the TMA
// kernel against the pointer one, L2 7 (conv3d to 32 channels) 4.32 against 1.87 ms, L2 71
// (conv2d to 64) 0.79 against 0.36, L2 73 (conv2d to 64, batch norm) 1.13 against 0.71; L2 8
// (conv3d to 16) had run 3.64-4.23 ms on it against 1.46 on the pointer kernel.
inline constexpr int64_t kShiftedRowsMinChannels = 16;
bool ChooseShiftedRowsTma(int64_t samples, int64_t reach, int64_t n, int64_t channels,
                          int variant, ContractionConfig* c);

// Shared memory of a tl.dot kernel on Hopper.  Triton 3.6's software pipeliner stages every
// tile load of the K loop (the operands and each input a fused prologue reads) through shared
// memory in num_stages - 1 buffers, and the dot's operands pass through it once more (the
// fp16x3 split's hi and lo halves: 4 bytes an operand element).  So a step needs
//   (num_stages - 1) * (a_loads * BLOCK_M * BLOCK_K + b_loads * BLOCK_K * BLOCK_N) * 4
//   + (BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * 4 bytes,
// which matched Triton's own figure (compiled for sm_90 on the CPU: tests/teach/
// test_shared_memory.py) on all 13 tiles of the five paper-preset programs the H200 rejected
// as out of resources on 2026-12-03 (262,144 to 589,824 bytes, against 232,448): a div
// prologue (two A loads) on 128x128x64 in 3 stages is 2 * 96 KB + 64 KB = 256 KB; a
// batch_norm prologue (five A loads) on 128x64x64, 2 * 176 KB + 48 KB = 400 KB.
struct OperandLoads {
  int a = 1, b = 1;  // tile loads per K step building each operand
};
int64_t DotSharedBytes(int64_t block_m, int64_t block_n, int64_t block_k, int num_stages,
                       OperandLoads loads);
// An H200 block's shared memory (cudaDevAttrMaxSharedMemoryPerBlockOptin, the "Hardware
// limit" of Triton's OutOfResources), less 1 KB for what the model leaves out.
inline constexpr int64_t kSharedMemoryBudget = 232448 - 1024;
// Makes `c` fit kSharedMemoryBudget for `loads`: fewer stages (down to 2), then a narrower
// BLOCK_K (down to 16; K chunks and slices stay whole multiples of it), then a smaller tile.
// The autotuned list (c->tuned) starts with the fitted tile: the autotuner skips configurations
// that are out of resources, but when none fits it launches one anyway and raises
// OutOfResources (what the H200 reported).  Narrow kernels (no tl.dot) are left as they are.
void FitSharedMemory(OperandLoads loads, ContractionConfig* c);
// Depthwise convolutions (one input channel per group, conv_spec.cc): window sums through the
// narrow path, whose N (channels per group) and K (the window) are too small for tl.dot.
ContractionConfig ChooseWindowSum(int64_t m, int64_t n, int variant);
// Contractions whose running fp32 sum is longer than this sum it in chunks
// (ContractionConfig::chunk_k).  The sum has K terms with ieee and K / BLOCK_K with a split.
inline constexpr int64_t kChunkedAbove = 1024;
inline constexpr int64_t kSplitChunkedAbove = 128;
// M or N at most this: the narrow (no tl.dot) path.  tl.dot pads the small dim to 16, so
// at 4 it computes 4x the products it needs; from 5 to 15 the waste is under 4x and the
// tensor-core tile is kept.
inline constexpr int64_t kNarrowAtMost = 4;
// Not yet for compute-bound convolutions with few channels per group, whose narrow kernels
// are slow (on the H200, h200-2026-12-05: paper-preset program 5, conv_transpose3d with one
// output channel per group and 54 taps per stride phase, 178.5 ms against cuDNN's 15.5; 133,
// two channels and 25 taps, 15.7 against 1.35): a 16-wide tensor-core tile for them (N x
// taps >= 16) gave program 80 (conv3d, 2 channels per group, 36 taps) a wrong answer on the
// GPU, 45,694,216 of 45,696,960 elements, where the CPU interpreter runs the same kernel
// right in ieee and in fp16x3 at a smaller shape.  Cause not found.
// Split-K: only when the tiles leave SMs idle (fewer programs than kSplitBelowPrograms) and
// a program would loop over more than kSplitAboveSteps BLOCK_K steps; each slice keeps at
// least kMinSliceSteps steps so the software pipeline is not all fill and drain.
inline constexpr int64_t kSplitBelowPrograms = 132;
inline constexpr int64_t kSplitAboveSteps = 512;
inline constexpr int64_t kMinSliceSteps = 128;

// Operand rows for tl.dot.  Triton specializes an integer kernel argument divisible by 16
// (`tt.divisibility`) and only then vectorizes a tile's loads and copies it into shared memory
// with 16-byte async copies; a row stride that is not (KernelBench L1 8: A 8205x2949,
// B 2949x5921, row-major) leaves every operand element a 4-byte scalar load.  On the H200
// (2026-12-01, results/h200-2026-12-01-f) that GEMM ran at 12.8 TFLOP/s (22.4 ms, eager 6.4)
// where row strides of multiples of 16 reach ~124.  So the wrapper checks each operand that
// is a plain read of a stored tensor (an input or a kernel's output) at run time (unit stride
// along its rows, a row stride not a multiple of kRowAlignment elements) and copies such an
// operand into a buffer whose rows are padded to kRowAlignment with zeros (emit_repack.cc);
// the contraction's loads along the rows mask at the padded length, which keeps them whole
// vectors too.  Predicted, not measured: the copy reads and writes 97 + 70 MB, ~0.1 ms at
// 4 TB/s, against ~2.3 ms for the GEMM at the aligned rate instead of 22.4.
inline constexpr int64_t kRowAlignment = 16;
// A row of `cols` elements padded to kRowAlignment.
inline constexpr int64_t PaddedRowLength(int64_t cols) {
  return (cols + kRowAlignment - 1) / kRowAlignment * kRowAlignment;
}
// Operands smaller than this (elements) are not copied unless their contraction has at least
// kRepackMinProducts multiply-adds (RepacksUnalignedRows says why).
inline constexpr int64_t kRepackMinElements = int64_t{1} << 20;
inline constexpr int64_t kRepackMinProducts = int64_t{1} << 30;
// Whether a contraction with configuration `c` checks an operand of `rows` rows of `cols`
// elements (its last dim; rows is the product of the others) for unaligned rows at run time
// (kUnknownSize: a runtime size).
// `products`: the contraction's multiply-adds (M x N x K x batch; kUnknownSize: unknown).
bool RepacksUnalignedRows(const ContractionConfig& c, int64_t rows, int64_t cols,
                          int64_t products);
// fp16x3 operands split before the contraction (emit_split.cc): a pointwise kernel writes an
// operand's fp16 hi and lo parts (heuristics: kDefaultDotPrecision) once, and the K loop loads
// them, where it otherwise loads float32 tiles and splits them in registers in every step.  Why: in
// the sm_90 build of a 128x128x64 fp16x3 tile (8 warps, 3 stages) the split is most of the K loop,
// 658 instructions a step against 275 on pre-split parts (no F2FP, HADD2, PRMT or STS: the parts go
// from cp.async to the tensor cores without a trip through registers), and 255 registers against
// 176 (benchmarks/dot_split_speed.py's two kernels).  The H200 ran the in-register split at 146.6
// TFLOP/s on 4096^3 (results h200-2026-12-01-f), 56% of three fp16 products' peak.  Predicted, not
// measured: 185-215 TFLOP/s for the GEMM, the split costing a read of 4 and a write of 4 bytes per
// operand element (0.07 ms of 0.7 on 4096^3).  Any contraction with tl.dot: a convolution's parts
// are split from its channels-last copies, padded channels included (KernelBench L1 62's conv2d:
// 1,034 loop instructions a step, 16 of them spills, against 392 and none on parts;
// results/cpu-2026-12-05-fp16x3-parts).
//
// An operand is split first when it is stored (an input or a kernel's output, no prologue
// recomputed in the loop), its contraction has at least kPresplitMinProducts multiply-adds, and its
// elements are each loaded by at least kPresplitMinTiles tiles (window taps and broadcast batch
// entries count).  Why 16: the parts cost 8 bytes of traffic an element (read 4, write 4; the loop
// then loads 4 bytes of parts where it loaded 4 of float32), ~1.9 ps at 4.3 TB/s; the prediction
// above saves ~0.24 ms on 4096^3's 1.07G tile loads, ~0.22 ps a load.  So the parts pay from ~9
// loads an element, and a 2x margin (estimates, not measurements) gives 16: a 1024 x 8192 x 8192
// linear splits its input first (64 tiles) and its weight in the loop (8).  Why 2^31: the parts
// kernel is one more launch (~3-5 us), and 2^31 multiply-adds are ~28 us of fp16x3 tensor work of
// which the split is ~40% (the instruction counts above), so the saving is about twice the launch.
// At 2^30 KernelBench L3's ResNet101 had 33 convolutions with parts, each ~14 us of tensor work,
// where the launch is about what the parts save.
inline constexpr int64_t kPresplitMinProducts = int64_t{1} << 31;
inline constexpr int64_t kPresplitMinTiles = 16;
// `products`: the contraction's multiply-adds; `tiles`: the tile loads of each element.
bool PresplitsOperand(const ContractionConfig& c, int64_t products, int64_t tiles);
// The copy kernel's tiles: BLOCK_R rows of BLOCK_C elements.
struct RepackConfig {
  int64_t block_r = 32, block_c = 128;
  LaunchConfig launch;
};
RepackConfig ChooseRepack(int64_t rows, int64_t cols);

// Convolutions (conv and conv_transpose) read channels-last copies of their input and weight
// (emit_repack.cc, EmitChannelsLast) with K ordered (kernel offset, input channel): a K tile
// then runs along unit-stride channels, which Triton loads 16 bytes at a time, where the
// (channel, kernel offset) order of NCHW tensors gathers 4-byte elements through div/mod
// index arithmetic.  On the H200 (2026-12-01/02, results/h200-2026-12-01-f and -02) NCHW
// implicit GEMMs ran at 3-22 TFLOP/s with padding or fewer than 64 output channels and 62-65
// without padding (KernelBench L2 1, L2 4, L1 67), against ~150 for the aligned GEMMs of the
// same split.  Runs of channels must hold whole 16-byte vectors (a multiple of 4 fp32 per
// group; 3-channel images keep NCHW); depthwise convolutions (window sums) keep NCHW; so do
// generic-shape candidates (the copy's layout is fixed from literal sizes) and inlined
// operands (no tensor to copy).  The copy reads and writes the input once (L1 55's 1 GB
// input: ~0.5 ms at 4 TB/s against a 14 ms conv).  Variant 1 keeps NCHW, so the search has
// both layouts to time.  Measured on the H200 (2026-12-02, results/h200-2026-12-02): all 22
// channels-last convolutions of KernelBench's level-1 dev split beat eager, 1.24x - 11.62x
// (L1 56: 0.96x -> 5.70x, 130.8 TFLOP/s; L1 65: 0.16x -> 1.77x).
// A convolution (not transposed, one group) whose channels miss a multiple of 4 by at most a
// third of them (RGB's 3 -> 4, 6 -> 8, 7 -> 8) is copied with zero channels added: a third more
// products for 16-byte loads.  H200 (results h200-2026-12-04c): the 3-channel L1 50 (11x11,
// stride 4, K 363 -> 484) went from 0.57x eager in NCHW to 1.92x.  But where the unpadded K
// fits one BLOCK_K step (kChannelsLastPadMinK), each operand element is loaded once a tile
// and the gathers cost little, while padding adds a second, mostly masked step: L1 59's 3x3x3
// conv3d of 3 channels (K 27 -> 36) ran 2.72 ms padded (0.99x eager) against 1.05 in NCHW
// (2.56x, 2026-12-02); so such convolutions keep NCHW.
inline constexpr int64_t kChannelsLastMultiple = 4;
inline constexpr int64_t kChannelsLastPadMinK = 32;
// The channels per group of the channels-last copies (a multiple of kChannelsLastMultiple, at
// least `channels_per_group`), or 0 for NCHW operands.  `window`: kernel positions (the
// product of the kernel's spatial sizes).  `paddable`: zero channels may be added.
int64_t ConvChannelsLast(int64_t channels_per_group, int64_t window, bool window_sum,
                         bool paddable, int variant);
// The channels-last copy's tiles: BLOCK_R positions by BLOCK_C channels of one sample.
RepackConfig ChooseChannelsLast(int64_t positions, int64_t channels);
// The size the heuristics assume for a dim known only at run time (generic-shape
// candidates): a large problem, so that tiles take their full size and masks or loops
// cover whatever smaller size comes.  2^24 keeps products of two such sizes in int64.
inline constexpr int64_t kUnknownSize = int64_t{1} << 24;

// Number of distinct variants the heuristics offer (variant = 0 .. kNumVariants - 1).
inline constexpr int kNumVariants = 4;

}  // namespace drtriton::codegen

// Private to codegen/: what every emitter shares.  A kernel is emitted as text plus the
// argument list its launch needs; the wrapper (wrapper.cc) strings the launches together.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "catalog/attr.h"
#include "ir/program.h"

namespace drtriton::codegen {

// Launch configuration chosen by heuristics.cc.
struct LaunchConfig {
  int num_warps = 4;
  int num_stages = 1;
  // A cooperative launch (launch_cooperative_grid=True): the driver refuses a grid whose
  // programs cannot all be resident at once, so programs that wait for each other cannot wait
  // for one that never starts.  `max_registers` > 0 caps a thread's registers (maxnreg) so
  // that the programs per SM the wrapper counts on fit.
  bool cooperative = false;
  int max_registers = 0;
};

// One emitted `@triton.jit` kernel and how to launch it.
struct EmittedKernel {
  std::string name;
  std::string text;                     // the decorated def, ending in a newline
  std::vector<std::string> call_args;   // wrapper-side expressions, one per runtime param
  std::vector<std::string> constexprs;  // "BLOCK_M=64" keyword arguments
  std::string grid;                     // Python tuple expression: "(triton.cdiv(n, 256),)"
  std::vector<std::string> setup;       // wrapper lines before the launch (block sizes)
  LaunchConfig launch;
  // The tl.dot input precision on the GPU ("bf16x6"), passed as the DOT_PRECISION constexpr;
  // the wrapper passes "ieee" to the CPU interpreter instead (wrapper.cc).  "" = no tl.dot.
  std::string dot_precision;
  // Kernels launched first, in order, with their own setup (a row split's statistics kernel
  // and the allocation of its partials buffer).  One with empty text is another launch of this
  // kernel (a transposed convolution's other stride phases, PHASE=...).
  std::vector<EmittedKernel> before;
  // A wrapper condition (a variable its setup lines bind): the launch runs only where it holds
  // (a repack of unaligned rows, emit_repack.cc; a split row's cooperative kernel or, where it
  // cannot run, the split pair, rows_coop.cc).  "" = always.
  std::string guard;
  // A launch for one GPU tl.dot precision (an operand's fp16x3 parts, emit_split.cc): the
  // wrapper runs its setup and launch only where the precision variable of that name holds it
  // (wrapper.cc WriteSplitChoice), and the `otherwise` lines (placeholders for the buffers the
  // contraction takes but does not read) elsewhere.  "" = always.
  std::string for_precision;
  std::vector<std::string> otherwise;
  // An autotuned kernel (heuristics.h, TunedTiles): its tile constexprs and launch options
  // come from the autotuner, so the launch passes neither them nor num_warps/num_stages, and
  // `grid` is a function of the chosen tile (META).
  bool tuned = false;
  // Its setup makes host tensor descriptors (a contraction's TMA kernel): the candidate
  // imports TensorDescriptor.
  bool tensor_descriptors = false;
  // A convolution's TMA kernel that also computes the pool group reading its output
  // (GroupContext::pool_after) where this wrapper flag holds: that group's launches run only
  // where it does not.  "" = none.
  std::string computes_pool_when;
};

// How a kernel addresses the values the wrapper allocates (every value an operator produces:
// AssembleCandidate's torch.empty of its shape, so contiguous).  kLiteral: at their contiguous
// strides as literals, where the shapes are literals; kRuntime: through stride arguments
// (generic-shape mode, whose shapes are runtime sizes).  Why: Triton gives a stride argument
// no alignment unless it is a multiple of 16, and a convolution's output rows rarely are
// (126 x 126 positions).  KernelBench L2 1's shifted-rows TMA kernel (sm_90 build on the CPU,
// Triton 3.6, 128 x 128 tiles over 8 warps) stored its NCHW tile through runtime strides in
// 64 two-byte stores a thread with 219 registers, one program an SM; at literal strides in
// 32 four-byte stores with 90 registers, two programs an SM in its 98 KB of stages, so one
// program's epilogue overlaps the other's K loop.  Program inputs keep stride arguments.
enum class AllocatedStrides { kRuntime, kLiteral };

// The runtime parameters of a kernel, in the order they are first needed: a tensor's
// pointer and the strides of its non-unit dims.  Wrapper names are the value names.
class KernelParams {
 public:
  explicit KernelParams(const Program& program,
                        AllocatedStrides allocated = AllocatedStrides::kRuntime)
      : program_(program), allocated_(allocated) {}
  // Registers `v` as a kernel argument (once) and returns its pointer parameter name.
  std::string Pointer(ValueId v);
  // The same for a buffer the wrapper allocates that is no program value (`name`).
  std::string Scratch(const std::string& name);
  // Parameter name of `v`'s stride along `dim` (registered on first use).
  std::string Stride(ValueId v, int dim);
  // The same for the scratch buffer `name`.
  std::string ScratchStride(const std::string& name, int dim);
  // From now on the wrapper passes `tensor` (a buffer holding `v`'s values, in a layout of its
  // own) for `v`'s pointer and strides; the kernel's parameter names stay `v`'s.  Before any
  // use of `v`.
  void Rebind(ValueId v, std::string tensor);
  // Rebind to a buffer whose strides are known when the kernel is written (a copy the wrapper
  // allocates in a fixed layout): the addresses hold them as literals, so Triton's alignment
  // analysis sees their divisibility (it specializes a stride argument only when it is 1 or a
  // multiple of 16, and a channels-last row of 8 channels is neither).
  void RebindLaidOut(ValueId v, std::string tensor, std::vector<std::string> strides);
  // Registers the runtime sizes `expr` mentions (generic-shape mode, sizes.h) as kernel
  // parameters named as in the wrapper, and returns `expr`.  Literals register nothing.
  std::string Sizes(const std::string& expr);
  // Registers a scalar parameter `param` (once) that the wrapper passes as `arg` (a Python
  // expression), and returns `param`.
  std::string Scalar(const std::string& param, const std::string& arg) {
    Add(param, arg);
    return param;
  }
  // `ptr + c0 * stride_0 + ...` for the coordinates of `v`.  `zero` is an int tensor of the
  // tile's shape: "offs * 0" (1-D) or "(rows + r) * 0" (2-D, the two axes' sum).  In a 2-D
  // tile a coordinate may span one axis only while tl.load/tl.store need a pointer of the
  // mask's full shape, so a 2-D zero is always added; a 1-D one only when every
  // coordinate is the constant 0.
  std::string Address(ValueId v, const std::vector<std::string>& coords, const std::string& zero);
  // The same address's offset from `v`'s pointer (`c0 * stride_0 + ...`, the flat index, or
  // "0" for none), registering what Address registers: a buffer laid out as `v` (fp16x3's
  // parts, emit_split.cc) is read at it.
  std::string Offset(ValueId v, const std::vector<std::string>& coords, const std::string& zero);
  // While set, Address() of a value of `shape` read at exactly `coords` (the full
  // coordinates of the kernel's output) is `ptr + flat`, with no strides: the contiguous fast
  // path of pointwise kernels (emit_pointwise.cc), valid only where the launch checked those
  // values are contiguous.  The shape matters: narrow(x, d, 0, n) reads its larger input at
  // the same coordinate names (KernelBench L3 43's q, k, v split of one linear was read flat
  // from the (B, T, 3C) tensor as if it were (B, T, C)).  Such values are recorded in
  // flat_values(), in first-use order.  An empty `flat` turns it off.
  void SetFlatIndex(std::vector<std::string> coords, std::string flat, Shape shape = {}) {
    flat_coords_ = std::move(coords);
    flat_ = std::move(flat);
    flat_shape_ = std::move(shape);
  }
  // Rows kernels (emit_rows.cc) keep one body for both layouts: a value read at exactly
  // `coords` is loaded from `ptr + flat` under the kernel's CONTIG flag and through its
  // strides otherwise (ExprEmitter::SetContiguousFlag).  Several (coords, flat) pairs may be
  // registered: the input's coordinates and, for layer_norm's weight, the reduced ones.  Only
  // values of `shape` qualify (see SetFlatIndex).
  void AddContiguousRead(std::vector<std::string> coords, std::string flat, Shape shape);
  // `ptr + flat` for a read registered above, recording `v` in flat_values(); "" otherwise.
  std::string ContiguousAddress(ValueId v, const std::vector<std::string>& coords);
  const std::vector<ValueId>& flat_values() const { return flat_values_; }
  const std::vector<std::string>& params() const { return params_; }
  const std::vector<std::string>& args() const { return args_; }

 private:
  void Add(std::string param, std::string arg);
  // `ptr + flat` for `v`, recorded in flat_values() (both flat paths above).
  std::string FlatAddress(ValueId v, const std::string& flat);
  // The wrapper's tensor for a value (Rebind), its name otherwise.
  const std::string& TensorOf(ValueId v) const;
  const Program& program_;
  AllocatedStrides allocated_;
  std::vector<std::pair<ValueId, std::string>> rebound_;
  std::vector<std::pair<ValueId, std::vector<std::string>>> laid_out_;
  std::vector<std::string> params_;
  std::vector<std::string> args_;
  std::vector<std::string> flat_coords_;
  std::string flat_;
  Shape flat_shape_;
  struct ContiguousRead {
    std::vector<std::string> coords;
    std::string flat;
    Shape shape;
  };
  std::vector<ContiguousRead> contiguous_reads_;
  std::vector<ValueId> flat_values_;
};

// --- Text helpers (index.cc). --------------------------------------------------------

// A Python float literal that reads back to the same double ("1.0", "1e-05", "float('inf')").
std::string FloatLiteral(double v);
std::string IntLiteral(int64_t v);
int64_t NextPow2(int64_t v);
int64_t Product(const Shape& shape, size_t begin = 0, size_t end = SIZE_MAX);
int64_t CeilDiv(int64_t a, int64_t b);
// Writes `prefix_i = ...` lines decomposing the flat row-major index `flat` over `shape`
// and returns the coordinate expressions ("0" for unit dims, never written).
std::vector<std::string> Decompose(class PythonWriter& w, const std::string& flat,
                                   const Shape& shape, const std::string& prefix);
// Coordinates of the value of shape `in` that an elementwise operation of result shape
// `out` reads at `coords` (right-aligned broadcast: unit dims read coordinate 0).
std::vector<std::string> BroadcastCoords(const Shape& in, const Shape& out,
                                         const std::vector<std::string>& coords);
// Normalizes a possibly negative dim of a rank-`rank` tensor.
int NormDim(int64_t dim, size_t rank);
std::string Join(const std::vector<std::string>& parts, const std::string& sep);

}  // namespace drtriton::codegen

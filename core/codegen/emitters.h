// Private to codegen/: one emitter per group kind (fusion.h), and the pieces they share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/fusion.h"
#include "codegen/kernel.h"
#include "codegen/python_writer.h"
#include "codegen/sizes.h"
#include "ir/program.h"
#include "util/result.h"

namespace drtriton::codegen {

struct GroupContext {
  const Program& program;
  const FusionPlan& plan;
  const Group& group;
  std::string kernel_name;
  int variant = 0;
  // Some tensor of the program has 2^31 elements or more: index arithmetic in int64
  // (paper-preset programs reach 2^32 elements).
  bool wide = false;
  // Generic-shape mode (CodegenOptions::generic_shapes): the runtime sizes of every value;
  // null = sizes are the program's literals.
  const SizeSyms* syms = nullptr;
  // Per value: its rounding reaches an error amplifier (amplify.h, AmplifiedValues).
  const std::vector<bool>* amplified = nullptr;
  // A convolution group's: the pool group that is the only reader of its output, which its
  // TMA kernel may compute as well (EmittedKernel::computes_pool_when); null = none.
  const Group* pool_after = nullptr;

  bool generic() const { return syms != nullptr; }
  // How its kernels address the values the wrapper allocates (kernel.h, AllocatedStrides).
  AllocatedStrides allocated_strides() const {
    return generic() ? AllocatedStrides::kRuntime : AllocatedStrides::kLiteral;
  }
  // A wrapper variable of this group's kernels: "k0_<what>" (buffers, flags, descriptors).
  std::string WrapperName(const std::string& what) const {
    return kernel_name.substr(0, kernel_name.find('_')) + "_" + what;
  }
  // Another kernel of this group: "k0_linear_<role>_kernel" for "k0_linear_kernel".
  std::string KernelNamed(const std::string& role) const {
    std::string name = kernel_name;
    return name.insert(name.rfind("_kernel"), "_" + role);
  }
  // `v`'s dims: size names in generic mode, literals otherwise.
  Dims DimsOf(ValueId v) const {
    return syms ? syms->values[v.index] : LiteralDims(program.value(v).shape);
  }
};

// The programs along one grid axis for `count` elements in blocks of `block` (each a literal
// or a wrapper expression): "4" when both are literals, else a triton.cdiv.
std::string BlocksOf(const std::string& count, const std::string& block);
// The grid of a 1-D launch over `count` programs' worth of work in blocks of `block`: "(4,)"
// or "(triton.cdiv(n, 128),)".
std::string Grid1D(const std::string& count, const std::string& block);
// A wrapper's Python tuple of dims: "(a, b)", and "(a,)" for one; of a concrete shape's sizes.
std::string ShapeTuple(const Dims& dims);
std::string ShapeTuple(const Shape& shape);

// The wrapper's expression for the device the program runs on: its first input's
// (`x0.device`), or 'cuda' for a program without inputs.
std::string InputDevice(const Program& program);
// A wrapper line allocating `name`, a float32 scratch buffer of `floats` elements on the
// inputs' device (a row split's partial statistics, split-K's partial tiles).
std::string ScratchAllocation(const Program& program, const std::string& name, int64_t floats);

// `torch.empty_strided(shape, strides, device=..., dtype=<like>.dtype)` on the inputs' device:
// a copy of the wrapper's tensor `like` (an input at the mode's dtype, or a float32
// intermediate), in its dtype.
std::string StridedAllocation(const Program& program, const Dims& shape, const Dims& strides,
                              const std::string& like);

// `a.is_contiguous() and b.is_contiguous()` over the values a kernel reads through
// KernelParams' flat paths (flat_values()), leaving out `fresh` (buffers the wrapper has just
// allocated in the layout the flat reads expect: an output, a channels-last copy); "" when none
// is left.
std::string ContiguityCheck(const Program& program, const std::vector<ValueId>& flat,
                            const std::vector<ValueId>& fresh = {});
// Passes the kernel's CONTIG constexpr from `check` (a wrapper line `contig = <check>`).
void SetContiguityFlag(EmittedKernel& kernel, const std::string& check);

// `tl.program_id(axis)` and `tl.arange(0, block)`, widened to int64 for wide programs.
std::string ProgramId(int axis, bool wide);
std::string Arange(const std::string& block, bool wide);

Result<EmittedKernel> EmitPointwise(const GroupContext& ctx);
Result<EmittedKernel> EmitRows(const GroupContext& ctx);         // emit_rows.cc
Result<EmittedKernel> EmitContraction(const GroupContext& ctx);  // emit_contraction.cc
Result<EmittedKernel> EmitPool(const GroupContext& ctx);         // emit_pool.cc

// The contraction operand `v` (a candidate input) copied into rows padded to kRowAlignment
// elements (emit_repack.cc): a kernel to launch before the contraction, whose setup lines
// decide from `v`'s strides whether to copy (EmittedKernel::guard) and bind RepackBuffer to
// the padded buffer, or to `v` itself when its rows are aligned already.
EmittedKernel EmitRepack(const GroupContext& ctx, ValueId v);
// A channels-last copy of `value`: dim `channel` becomes unit-stride and the dims after it follow
// in order, each strided by the channels (NCHW -> NHWC for an input, (C_out, C_in, *k) ->
// (C_out, *k, C_in) for a conv weight).  `channels` (at least the dim's size) adds zero channels
// up to it, so that rows of channels fill whole 16-byte vectors.
struct ChannelsLastCopy {
  ValueId value;
  size_t channel = 1;
  int64_t channels = 0;
  // Zeros added before and after each dim after the channel dim (a convolution's padding, for
  // the shifted-rows kernel: contraction_spec.h); empty = none.  The copy's buffer is then
  // `k0_x0_clpad`.
  std::vector<int64_t> pad_low, pad_high;
  // With padding: each padded dim's stride s (its padded size a multiple of s), by which the
  // copy is folded: padded position j is stored at residue j mod s, position j div s, the
  // residues outermost (contraction_spec.h, ShiftedRows::fold); empty: none.
  std::vector<int64_t> fold;
};
// The wrapper allocates the copy's buffer (ChannelsLastBuffer) and launches the copy before the
// contraction, which reads the buffer at literal strides.  Literal sizes only.
EmittedKernel EmitChannelsLast(const GroupContext& ctx, const ChannelsLastCopy& copy);
// The shape of that buffer: `value`'s, the channel dim widened to `channels` and the dims
// after it by their padding.
Shape CopyShape(const Program& program, const ChannelsLastCopy& copy);
// The strides of that buffer (literals).
Dims ChannelsLastStrides(const Program& program, const ChannelsLastCopy& copy);
// The wrapper variable of that buffer: `k0_x0_cl` (an unpadded copy of `v`).
std::string ChannelsLastBuffer(const GroupContext& ctx, ValueId v);
// `k0_x0_cl`, or `k0_x0_clpad` for a padded copy.
std::string CopyBuffer(const GroupContext& ctx, const ChannelsLastCopy& copy);
// The size the heuristics see for `dim`: its literal, or kUnknownSize (a runtime size).
int64_t HeuristicSize(const std::string& dim);
// The wrapper variable holding `v`'s rows for the contraction of `ctx`: `k0_x0_rows`.
std::string RepackBuffer(const GroupContext& ctx, ValueId v);
// The wrapper's bool saying whether it copied them: `k0_x0_repack`.
std::string RepackFlag(const GroupContext& ctx, ValueId v);
// A wrapper expression for how far a load along `v`'s rows (of `cols` elements) may read: the
// padded length where the wrapper copied them (the padding holds zeros), `cols` otherwise.
std::string RepackedRowBound(const GroupContext& ctx, ValueId v, const std::string& cols);

// fp16x3's parts of the contraction operand `v`, read from `source` (its wrapper tensor: `v`'s
// name, or the RepackBuffer or ChannelsLastBuffer the contraction reads instead), written by a
// kernel launched before the contraction where it runs the fp16x3 split (emit_split.cc;
// heuristics.h, PresplitsOperand).  The parts' buffers are laid out as `source`.  `dense`: the
// elements of a source the wrapper allocated without gaps (a channels-last copy, whose padded
// channels the parts need as zeros too), split along its storage; 0: `v`'s elements.
// `repacked`: `source` is `v`'s RepackBuffer, split along its storage (padding as zeros) where
// the wrapper made the copy (RepackFlag), as `v` otherwise.
EmittedKernel EmitSplitParts(const GroupContext& ctx, ValueId v, const std::string& source,
                             int64_t dense = 0, bool repacked = false);
// The wrapper variable of a part's buffer: `k0_x0_hi`, `k0_x0_lo`.
std::string SplitPartBuffer(const GroupContext& ctx, ValueId v, const std::string& part);
// `hi` and `lo`, fp16x3's parts of the float32 tile `x` (x * 2^-8 rounded to fp16, and the
// rest scaled by 2^11), as lines of `w`.
void WriteFp16Parts(PythonWriter& w, const std::string& x, const std::string& hi,
                    const std::string& lo);

// `for var in tl.range(0, bound, step):` for a literal bound.  A runtime bound (generic-shape
// mode) opens `var = pid * 0` / `while var < bound:` instead, which CloseLoop steps: Triton
// 3.6's interpreter turns a runtime scalar range bound into an index with int() on a
// one-element array, which NumPy 2 refuses.  `pid * 0` makes the counter an int32 tensor,
// as a loop-carried variable must be on the GPU.  The body is written between the two.
// `start` is the first value (a constexpr or literal; rows kernels start after a first
// block they keep in registers).
void OpenLoop(PythonWriter& w, const std::string& var, const std::string& bound,
              const std::string& step, const std::string& start = "0");
void CloseLoop(PythonWriter& w, const std::string& var, const std::string& bound,
               const std::string& step);

// Whether kernel text reads lowering::kLibdeviceFlag (log1p's, expm1's, tanh's formulas).
bool UsesLibdeviceFlag(const std::string& text);

// `@triton.jit def name(params..., CONSTEXPRS: tl.constexpr):` followed by `body`
// (already indented one level) and a leading comment line; a body that reads
// lowering::kLibdeviceFlag declares it last (AssembleCandidate's launch passes it).
std::string KernelText(const std::string& name, const std::string& comment,
                       const KernelParams& params, const std::vector<std::string>& constexprs,
                       const std::string& body);

// Why a program cannot be emitted, per node ("" = supported).
std::string UnsupportedReason(const Program& program, NodeId node);

}  // namespace drtriton::codegen

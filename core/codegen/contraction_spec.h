// Private to codegen/: what a contraction kernel (emit_contraction.cc) is told about its
// operator.  Each contraction is C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] where (b, m, n, k)
// map to the operands' own coordinates; a spec says how, as index arithmetic in text.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/heuristics.h"
#include "codegen/kernel.h"
#include "codegen/python_writer.h"

namespace drtriton::codegen {

using Coords = std::vector<std::string>;

// A convolution whose output position o reads input position o + offset(tap) for every kernel
// tap: stride 1, one group, literal sizes, and channels-last copies of input and weight
// (conv_spec.cc); with padding, the input's copy is padded with zeros (ChannelsLastCopy::pad),
// which makes it a convolution without.  Flattened over the (padded) input's positions (P, the
// product of its spatial sizes), an output tile of consecutive positions p then reads, per
// tap, the consecutive input rows p + offset: one box of the (N, P, C) copy, which the TMA
// engine can fetch (emit_contraction.cc, ShiftedRowsTma).  An output position is computed at
// its input position's index p = sum(o_d * stride_d); positions of o_d past the output's
// size are computed and dropped (P / (OH * OW) of the products: 3% more at 128 x 128 with a
// 3 x 3 kernel, 14% at 32 x 32).
// A direct convolution of stride s > 1 along a dim reads its copy folded by s (fold below):
// the copy holds the positions of each residue r = j mod s together, at j div s, so output o's
// tap t reads residue (t * dilation) mod s at o + (t * dilation) div s, again consecutive rows.
// A transposed convolution (one group) is one such convolution per stride phase (conv_spec.cc's
// top): phase outputs j read inputs j + shift - t * rate for their taps t, so the copy is padded
// below by the largest (taps - 1) * rate - shift and above as far as the last output reads.
struct ShiftedPhase {
  // Per spatial dim: the output phase (o = phase + stride * j), its taps, the kernel offset of
  // tap 0 (offsets first + t * step), the copy position of output j's tap 0 less j, and the
  // phase's output length.
  std::vector<int64_t> phase, taps, first, base, outs;
};
struct ShiftedRows {
  ValueId input, weight;       // the copied operands (ChannelsLastBuffer of each)
  int64_t samples = 1;         // N (1 for an unbatched input)
  int64_t channels = 0;        // the copies' channels (input channels, zeros added)
  Shape grid_sp, k_sp;         // the (padded) input's spatial sizes, the kernel's
  // Per spatial dim: the kernel offsets between taps (1; a transposed one's step), the copy
  // positions between taps (the dilation; a transposed one's -rate), the output's stride
  // between a phase's positions (1; the transposed convolution's stride).
  std::vector<int64_t> step, delta, stride;
  std::vector<int64_t> pad_low, pad_high;  // the copy's zeros per dim; empty: none
  // A direct convolution's stride per dim, by which its copy is folded (above); empty: none.
  // grid_sp is then the folded grid (the padded sizes, each a multiple of its stride, over it).
  std::vector<int64_t> fold;
  std::vector<ShiftedPhase> phases;        // one for a direct convolution
  bool batched = true;
  bool transposed = false;  // the weight copy is (C_in, *k, C_out), not (C_out, *k, C_in)
  // The input's positions P, and a phase's last output position in that flattening plus one:
  // the phase's tiles of one sample cover [0, reach).
  int64_t positions() const;
  // The copy's rows per sample: the positions times the residues of a folded copy.
  int64_t rows() const;
  int64_t reach(const ShiftedPhase& phase) const;
};

// An operand's coordinates plus an extra validity mask ("" = none).
struct Operand {
  Coords coords;
  std::string mask;
};

struct ContractionSpec {
  // Sizes for the heuristics (the largest launch's where there are several).
  Shape batch_shape, m_shape, k_shape;
  int64_t n = 1;
  // The same as text (sizes.h): literals, or runtime sizes in generic mode; a transposed
  // convolution's phase launches also name the phase's own lengths (conv_spec.cc).
  Dims batch_dims, m_dims, k_dims;
  std::string n_dim;
  Dims operand_dims;  // sizes only the operands' addressing reads (a convolution's input)
  ValueId a, b, bias;
  std::function<Operand(PythonWriter&, const Coords& bc, const Coords& mc, const Coords& kc)> a_at;
  std::function<Operand(PythonWriter&, const Coords& bc, const Coords& kc, const std::string& n)>
      b_at;
  std::function<Coords(const Coords& bc, const Coords& mc, const std::string& n)> out_at;
  std::function<std::string(const Coords& bc, const std::string& n)> channel;  // bias index
  // B as a row-major (N, K) matrix when the wrapper finds it contiguous: the flat offset of
  // element (k, n) given the flat K index `k` (a convolution's weight); empty = always strided.
  std::function<std::string(const Coords& bc, const std::string& k, const std::string& n)> b_flat;
  // Several launches of one kernel, told apart by the PHASE constexpr (0 .. phases - 1): a
  // transposed convolution's stride phases.  `phase_lines` writes the phase's constants at
  // the top of the kernel; `phase_m` is the wrapper's M of a phase ("" = no output, no launch).
  // Multiply-accumulate through tl.sum instead of tl.dot (ChooseWindowSum): a depthwise
  // convolution's N and K are too small for tl.dot's 16-wide tiles, which would be mostly zeros.
  bool window_sum = false;
  // Operands the kernel reads from channels-last copies (heuristics.h, ConvChannelsLast): the
  // wrapper copies them first (EmitChannelsLast) and the kernel addresses the copies at their
  // literal strides.
  std::vector<ChannelsLastCopy> channels_last;
  // Set where the convolution is in shifted-rows form (ShiftedRows above).
  std::optional<ShiftedRows> shifted_rows;
  int64_t phases = 1;
  std::function<void(PythonWriter&, KernelParams&)> phase_lines;
  std::function<std::string(int64_t phase)> phase_m;
};

// conv (transpose = false) and conv_transpose as implicit GEMMs (conv_spec.cc).
ContractionSpec ConvSpec(const GroupContext& ctx, const Node& node, bool transpose);

// --- Index text helpers (conv_spec.cc). ----------------------------------------------------

Coords Concat(Coords a, const Coords& b);
// The terms joined with " + ", zeros dropped ("0" when none is left).
std::string Sum(const std::vector<std::string>& terms);
// `c` times a literal, `c` times a size (a literal or a runtime size).
std::string Scaled(const std::string& c, int64_t k);
std::string ScaledBy(const std::string& c, const std::string& dim);

}  // namespace drtriton::codegen

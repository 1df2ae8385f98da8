// Copies of contraction operands into rows padded to kRowAlignment elements (heuristics.h:
// why, and when).  The wrapper decides at run time, from the input's strides: inputs may come
// strided, and only a unit-stride row whose stride is not a multiple of 16 elements is
// copied.  A copy is one small kernel, BLOCK_R rows by BLOCK_C columns a program, reading the
// input through its strides and writing the buffer's padded rows, the padding as zeros: the
// contraction's loads along the rows mask at the padded length (RepackedRowBound), a multiple
// of 16 that keeps them whole 16-byte vectors.  At the row's own length (L1 8's K of 2949) the
// mask varies element by element and Triton loads one element at a time: in the fp16x3 parts'
// K loop 128 two-byte LDG.E.U16 a step, which cp.async cannot take (its smallest copy is 4
// bytes), so nothing was pipelined (sm_90 build, 2026-12-05; 52 TFLOP/s on the H200 where
// aligned shapes ran 178).
#include <cassert>
#include <string>
#include <vector>

#include "codegen/contraction_spec.h"
#include "codegen/emitters.h"
#include "codegen/heuristics.h"

namespace drtriton::codegen {
namespace {

// `(cols + 15) // 16 * 16`, folded for a literal.
std::string PaddedRow(const std::string& cols) {
  const std::string a = IntLiteral(kRowAlignment);
  if (IsLiteral(cols)) return IntLiteral(PaddedRowLength(std::stoll(cols)));
  return "(" + cols + " + " + IntLiteral(kRowAlignment - 1) + ") // " + a + " * " + a;
}

// The strides of a row-major buffer of `dims` whose last dim is padded (PaddedRow).
Dims PaddedStrides(const Dims& dims) {
  Dims strides(dims.size(), "1");
  if (dims.size() < 2) return strides;
  strides[dims.size() - 2] = PaddedRow(dims.back());
  for (size_t d = dims.size() - 2; d-- > 0;)
    strides[d] = DimProduct({Atom(strides[d + 1]), dims[d + 1]});
  return strides;
}

std::string Grid2D(const std::string& rows, const std::string& cols, const RepackConfig& c) {
  return "(" + BlocksOf(rows, IntLiteral(c.block_r)) + ", " +
         BlocksOf(cols, IntLiteral(c.block_c)) + ")";
}

}  // namespace

int64_t HeuristicSize(const std::string& dim) {
  return IsLiteral(dim) ? std::stoll(dim) : kUnknownSize;
}

std::string RepackBuffer(const GroupContext& ctx, ValueId v) {
  const std::string& kernel = ctx.kernel_name;
  return kernel.substr(0, kernel.find('_')) + "_" + ctx.program.value(v).name + "_rows";
}

std::string RepackFlag(const GroupContext& ctx, ValueId v) {
  const std::string buffer = RepackBuffer(ctx, v);
  return buffer.substr(0, buffer.rfind("_rows")) + "_repack";
}

std::string RepackedRowBound(const GroupContext& ctx, ValueId v, const std::string& cols) {
  return "(" + PaddedRow(cols) + " if " + RepackFlag(ctx, v) + " else " + cols + ")";
}

EmittedKernel EmitRepack(const GroupContext& ctx, ValueId v) {
  const Program& p = ctx.program;
  const Value& value = p.value(v);
  const Dims dims = ctx.DimsOf(v);
  assert(dims.size() >= 2 && "a repacked operand is a matrix or a batch of them");
  const size_t rank = dims.size();
  const std::string rows = DimProduct(dims, 0, rank - 1), cols = dims.back();
  const RepackConfig c = ChooseRepack(HeuristicSize(rows), HeuristicSize(cols));
  const std::string buffer = RepackBuffer(ctx, v);

  KernelParams params(p, ctx.allocated_strides());
  PythonWriter w(1);
  w.Line("offs_r = " + ProgramId(0, ctx.wide) + " * BLOCK_R + " + Arange("BLOCK_R", ctx.wide) +
         "[:, None]");
  w.Line("offs_c = " + ProgramId(1, ctx.wide) + " * BLOCK_C + " + Arange("BLOCK_C", ctx.wide) +
         "[None, :]");
  const std::string rows_param = params.Sizes(rows);  // in this order: the parameters'
  const std::string cols_param = params.Sizes(cols);
  w.Line("mask = (offs_r < " + rows_param + ") & (offs_c < " + cols_param + ")");
  const Dims leading(dims.begin(), dims.end() - 1);
  std::vector<std::string> coords = DecomposeDims(w, "offs_r", leading, "rc");
  coords.push_back("offs_c");
  w.Line("x = tl.load(" + params.Address(v, coords, "(offs_r + offs_c) * 0") +
         ", mask=mask, other=0.0)");
  const std::string out = params.Scratch(buffer);
  const std::string row_stride = params.ScratchStride(buffer, static_cast<int>(rank - 2));
  // The padding too, as zeros (the loaded `other`): the contraction reads it.
  w.Line("tl.store(" + out + " + offs_r * " + row_stride + " + offs_c, x, mask=(offs_r < " +
         rows_param + ") & (offs_c < " + row_stride + "))");

  EmittedKernel k;
  k.name = buffer + "_kernel";
  k.text =
      KernelText(k.name,
                 value.name + " " + ShapeTuple(dims) + " into rows padded to a multiple of " +
                     IntLiteral(kRowAlignment) + " elements, zeros after (aligned loads in the "
                     "contraction)",
                 params, {"BLOCK_R", "BLOCK_C"}, w.str());
  k.call_args = params.args();
  k.constexprs = {"BLOCK_R=" + IntLiteral(c.block_r), "BLOCK_C=" + IntLiteral(c.block_c)};
  k.grid = Grid2D(rows, PaddedRow(cols), c);
  k.launch = c.launch;
  const std::string flag = RepackFlag(ctx, v);
  const std::string row = std::to_string(rank - 2), col = std::to_string(rank - 1);
  // Allocated with its last row's padding (empty_strided would end the storage at the row's
  // last element, and the copy writes past it), then viewed at the rows' own length.
  Dims padded = dims;
  padded.back() = PaddedRow(cols);
  const std::string allocation = StridedAllocation(p, padded, PaddedStrides(dims), value.name);
  k.setup = {flag + " = " + value.name + ".stride(" + col + ") == 1 and " + value.name +
                 ".stride(" + row + ") % " + IntLiteral(kRowAlignment) + " != 0",
             buffer + " = " + allocation + "[..., :" + cols + "] if " + flag + " else " +
                 value.name};
  k.guard = flag;
  return k;
}

// The copy's shape: `value`'s, with the channel dim widened to `channels`.
Shape CopyShape(const Program& program, const ChannelsLastCopy& copy) {
  Shape shape = program.value(copy.value).shape;
  shape[copy.channel] = copy.channels;
  for (size_t d = 0; d < copy.pad_low.size(); ++d)
    shape[copy.channel + 1 + d] += copy.pad_low[d] + copy.pad_high[d];
  return shape;
}

// The channel dim 1, each later dim the channels times the positions after it, each earlier dim
// one sample's C * P times the samples after it.
Dims ChannelsLastStrides(const Program& program, const ChannelsLastCopy& copy) {
  const Shape shape = CopyShape(program, copy);
  Dims strides(shape.size(), "1");
  int64_t inner = shape[copy.channel];
  for (size_t d = shape.size(); d-- > copy.channel + 1;) {
    strides[d] = IntLiteral(inner);
    inner *= shape[d];
  }
  for (size_t d = copy.channel; d-- > 0;) {
    strides[d] = IntLiteral(inner);
    inner *= shape[d];
  }
  return strides;
}

std::string ChannelsLastBuffer(const GroupContext& ctx, ValueId v) {
  const std::string& kernel = ctx.kernel_name;
  return kernel.substr(0, kernel.find('_')) + "_" + ctx.program.value(v).name + "_cl";
}

std::string CopyBuffer(const GroupContext& ctx, const ChannelsLastCopy& copy) {
  return ChannelsLastBuffer(ctx, copy.value) + (copy.pad_low.empty() ? "" : "pad");
}

namespace {

// A padded copy's load (ChannelsLastCopy::pad_low, pad_high): the copy's position offs_r as
// coordinates of the padded dims (unfolded where the copy is folded: ChannelsLastCopy::fold),
// each less its low padding in the source, masked outside it (the zeros).  Returns the source
// coordinates after the channel (`rc0`, ...) and binds `inside`.
std::vector<std::string> WritePaddedSource(PythonWriter& w, const Shape& after,
                                           const ChannelsLastCopy& copy) {
  Shape padded = after;
  for (size_t d = 0; d < padded.size(); ++d) padded[d] += copy.pad_low[d] + copy.pad_high[d];
  std::vector<std::string> at;
  if (copy.fold.empty()) {
    at = DecomposeDims(w, "offs_r", LiteralDims(padded), "pc");
  } else {  // (residue_0, ..., position_0, ...): padded position residue + position * fold
    Shape folded = copy.fold;
    for (size_t d = 0; d < padded.size(); ++d) folded.push_back(padded[d] / copy.fold[d]);
    const std::vector<std::string> parts = DecomposeDims(w, "offs_r", LiteralDims(folded), "pc");
    for (size_t d = 0; d < padded.size(); ++d)
      at.push_back(Sum({Scaled(parts[padded.size() + d], copy.fold[d]), parts[d]}));
  }
  std::vector<std::string> coords, inside;
  for (size_t d = 0; d < at.size(); ++d) {
    const std::string rc = "rc" + std::to_string(d);
    w.Line(rc + " = " + Atom(at[d]) + " - " + IntLiteral(copy.pad_low[d]));
    inside.push_back("(" + rc + " >= 0) & (" + rc + " < " + IntLiteral(after[d]) + ")");
    coords.push_back(rc);
  }
  w.Line("inside = " + Join(inside, " & "));
  return coords;
}

}  // namespace

// One program copies BLOCK_R positions x BLOCK_C channels of one sample n (heuristics.h,
// ChooseChannelsLast): grid (samples x position blocks, channel blocks).  A contiguous source
// is read at `n * C * P + c * P + p`, any other through its strides; the copy is written at
// `n * C' * P' + p' * C' + c` (C' >= C: the added channels are written as zeros; P' >= P: the
// positions of a padded copy, whose borders are written as zeros, WritePaddedSource).
EmittedKernel EmitChannelsLast(const GroupContext& ctx, const ChannelsLastCopy& copy) {
  assert(!ctx.generic() && "channels-last copies have literal sizes");
  const Program& p = ctx.program;
  const ValueId v = copy.value;
  const size_t channel = copy.channel;
  const Value& value = p.value(v);
  const Shape& shape = value.shape;
  assert(channel < shape.size() && copy.channels >= shape[channel]);
  const Shape lead(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(channel));
  const Shape after(shape.begin() + static_cast<std::ptrdiff_t>(channel) + 1, shape.end());
  const Shape copied = CopyShape(p, copy);
  const Shape copied_after(copied.begin() + static_cast<std::ptrdiff_t>(channel) + 1,
                           copied.end());
  const int64_t samples = Product(lead), chans = shape[channel], positions = Product(after);
  const int64_t wide = copy.channels, slots = Product(copied_after);  // the copy's C' and P'
  const RepackConfig c = ChooseChannelsLast(slots, wide);
  const int64_t blocks_r = CeilDiv(slots, c.block_r);
  const std::string buffer = CopyBuffer(ctx, copy);
  const bool padded = !copy.pad_low.empty();

  KernelParams params(p, ctx.allocated_strides());
  PythonWriter w(1);
  w.Line("pid = " + ProgramId(0, ctx.wide));
  w.Line("n = pid // " + IntLiteral(blocks_r));
  w.Line("offs_r = (pid % " + IntLiteral(blocks_r) + ") * BLOCK_R + " +
         Arange("BLOCK_R", ctx.wide) + "[:, None]");
  w.Line("offs_c = " + ProgramId(1, ctx.wide) + " * BLOCK_C + " + Arange("BLOCK_C", ctx.wide) +
         "[None, :]");
  std::vector<std::string> at;  // the source's coordinates after the channel (padded copy)
  if (padded) at = WritePaddedSource(w, after, copy);
  std::string read = "(offs_r < " + IntLiteral(slots) + ") & (offs_c < " + IntLiteral(chans) + ")";
  if (padded) read += " & inside";
  w.Line("mask = " + read);
  const std::string src = params.Pointer(v);
  const std::string zeros = wide > chans || padded ? ", other=0.0" : "";
  std::string flat = "offs_r";
  if (padded) {
    std::vector<std::string> terms;
    int64_t inner = positions;
    for (size_t d = 0; d < at.size(); ++d) {
      inner /= after[d];
      terms.push_back(inner > 1 ? at[d] + " * " + IntLiteral(inner) : at[d]);
    }
    flat = Join(terms, " + ");
  }
  w.Open("if CONTIG:");
  w.Line("x = tl.load(" + src + " + n * " + IntLiteral(chans * positions) + " + offs_c * " +
         IntLiteral(positions) + " + " + flat + ", mask=mask" + zeros + ")");
  w.Dedent();
  w.Open("else:");
  std::vector<std::string> coords = DecomposeDims(w, "n", LiteralDims(lead), "nc");
  coords.push_back("offs_c");
  if (!padded) at = DecomposeDims(w, "offs_r", LiteralDims(after), "rc");
  coords.insert(coords.end(), at.begin(), at.end());
  w.Line("x = tl.load(" + params.Address(v, coords, "(offs_r + offs_c) * 0") + ", mask=mask" +
         zeros + ")");
  w.Dedent();
  const std::string write = wide > chans || padded ? "(offs_r < " + IntLiteral(slots) +
                                                         ") & (offs_c < " + IntLiteral(wide) + ")"
                                                   : "mask";
  w.Line("tl.store(" + params.Scratch(buffer) + " + n * " + IntLiteral(wide * slots) +
         " + offs_r * " + IntLiteral(wide) + " + offs_c, x, mask=" + write + ")");

  std::string what = value.name + " " + ShapeTuple(shape) + " copied channels-last (dim " +
                     std::to_string(channel) + " unit-stride";
  if (wide > chans) what += ", zeros up to " + IntLiteral(wide) + " channels";
  if (padded) what += ", zeros around as " + ShapeTuple(copied_after);
  if (!copy.fold.empty()) what += ", folded by strides " + ShapeTuple(copy.fold);
  EmittedKernel k;
  k.name = buffer + "_kernel";
  k.text = KernelText(k.name, what + ") for the contraction's loads", params,
                      {"BLOCK_R", "BLOCK_C", "CONTIG"}, w.str());
  k.call_args = params.args();
  k.constexprs = {"BLOCK_R=" + IntLiteral(c.block_r), "BLOCK_C=" + IntLiteral(c.block_c)};
  k.setup = {buffer + " = " +
             StridedAllocation(p, LiteralDims(copied), ChannelsLastStrides(p, copy), value.name)};
  SetContiguityFlag(k, ContiguityCheck(p, {v}));
  k.grid = "(" + IntLiteral(samples * blocks_r) + ", " + IntLiteral(CeilDiv(wide, c.block_c)) + ")";
  k.launch = c.launch;
  return k;
}

}  // namespace drtriton::codegen

// An fp16x3 contraction operand's parts, written before the contraction (heuristics.h,
// PresplitsOperand: when and why).  One pointwise kernel reads the operand's float32 values
// and writes fp16 hi and lo parts (the K loop's own split: emit_contraction.cc
// WriteFp16Parts) into two buffers laid out as the tensor it reads, so the contraction
// addresses the parts at the operand's own offsets.  The wrapper allocates the buffers and
// launches the kernel only where its contraction runs the fp16x3 split
// (EmittedKernel::for_precision); in every other mode the buffers are the operand itself,
// passed and never read.
#include <algorithm>
#include <cassert>
#include <string>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/heuristics.h"
#include "codegen/sizes.h"

namespace drtriton::codegen {

std::string SplitPartBuffer(const GroupContext& ctx, ValueId v, const std::string& part) {
  const std::string& kernel = ctx.kernel_name;
  return kernel.substr(0, kernel.find('_')) + "_" + ctx.program.value(v).name + "_" + part;
}

void WriteFp16Parts(PythonWriter& w, const std::string& x, const std::string& hi,
                    const std::string& lo) {
  w.Line("s" + x + " = " + x + " * 0.00390625");
  w.Line(hi + " = s" + x + ".to(tl.float16)");
  w.Line(lo + " = ((s" + x + " - " + hi + ".to(tl.float32)) * 2048.0).to(tl.float16)");
}

EmittedKernel EmitSplitParts(const GroupContext& ctx, ValueId v, const std::string& source,
                             int64_t dense, bool repacked) {
  assert(!ctx.generic() && "operands are split first at literal sizes only");
  assert(!(repacked && dense > 0) && "a rows copy is dense only where the wrapper made it");
  const Program& p = ctx.program;
  const Value& value = p.value(v);
  const int64_t numel = dense > 0 ? dense : Product(value.shape);
  // A rows copy's storage, padding included (emit_repack.cc): the rows times their padded
  // length.  Split along it where the wrapper made the copy (DENSE), so that the parts'
  // padding holds zeros as the copy's does and the contraction may load it.
  const int64_t cols = std::max<int64_t>(1, value.shape.empty() ? 1 : value.shape.back());
  const int64_t padded_cols = PaddedRowLength(cols);
  const int64_t padded = repacked ? numel / cols * padded_cols : 0;
  const PointwiseConfig c = ChoosePointwise(std::max(numel, padded), 0);
  const std::string hi = SplitPartBuffer(ctx, v, "hi"), lo = SplitPartBuffer(ctx, v, "lo");

  KernelParams params(p, ctx.allocated_strides());
  if (source != value.name) params.Rebind(v, source);
  PythonWriter w(1);
  w.Line("offs = " + ProgramId(0, ctx.wide) + " * BLOCK + " + Arange("BLOCK", ctx.wide));
  const std::string pointer = params.Pointer(v);
  // A contiguous tensor's element i is at offset i; any other's where its strides put it,
  // in the source and in the parts alike (the buffers copy the source's strides).  A dense
  // copy (a channels-last one) is split along its storage, padded channels and all.
  if (dense > 0) {
    w.Line("mask = offs < " + IntLiteral(numel));
    w.Line("at = offs");
  } else {
    if (repacked) {
      w.Open("if DENSE:");
      w.Line("mask = offs < " + IntLiteral(padded));
      w.Line("at = offs");
      w.Dedent();
      w.Open("else:");
    }
    w.Line("mask = offs < " + IntLiteral(numel));
    w.Open("if CONTIG:");
    w.Line("at = offs");
    w.Dedent();
    w.Open("else:");
    const std::vector<std::string> coords =
        DecomposeDims(w, "offs", LiteralDims(value.shape), "c");
    w.Line("at = " + params.Offset(v, coords, "offs * 0"));
    w.Dedent();
    if (repacked) w.Dedent();
  }
  w.Line("x = tl.load(" + pointer + " + at, mask=mask, other=0.0)");
  WriteFp16Parts(w, "x", "hi", "lo");
  w.Line("tl.store(" + params.Scratch(hi) + " + at, hi, mask=mask)");
  w.Line("tl.store(" + params.Scratch(lo) + " + at, lo, mask=mask)");

  EmittedKernel k;
  k.name = SplitPartBuffer(ctx, v, "parts") + "_kernel";
  k.text = KernelText(k.name,
                      value.name + " " + ShapeTuple(value.shape) +
                          " as fp16x3's hi and lo parts, laid out as " + source +
                          ", for the contraction's loads",
                      params,
                      dense > 0  ? std::vector<std::string>{"BLOCK"}
                      : repacked ? std::vector<std::string>{"BLOCK", "DENSE", "CONTIG"}
                                 : std::vector<std::string>{"BLOCK", "CONTIG"},
                      w.str());
  k.call_args = params.args();
  k.constexprs = {"BLOCK=" + IntLiteral(c.block)};
  const std::string device = source + ".device";
  const std::string flag = repacked ? RepackFlag(ctx, v) : "";
  if (repacked) k.constexprs.push_back("DENSE=" + flag);
  // empty_strided for both: empty_like would make a padded or broadcast layout contiguous.
  // A rows copy's parts are allocated as the copy is (emit_repack.cc), the last row's padding
  // included.
  for (const std::string& part : {hi, lo}) {
    std::string allocation = "torch.empty_strided(" + source + ".shape, " + source +
                             ".stride(), device=" + device + ", dtype=torch.float16)";
    if (repacked) {
      Shape rows_shape = value.shape;
      rows_shape.back() = padded_cols;
      allocation = "torch.empty(" + ShapeTuple(rows_shape) + ", device=" + device +
                   ", dtype=torch.float16)[..., :" + IntLiteral(cols) + "] if " + flag +
                   " else " + allocation;
    }
    k.setup.push_back(part + " = " + allocation);
  }
  if (dense == 0) SetContiguityFlag(k, source + ".is_contiguous()");
  const std::string blocks = IntLiteral(CeilDiv(numel, c.block));
  k.grid = "(" + (repacked ? IntLiteral(CeilDiv(padded, c.block)) + " if " + flag + " else " : "") +
           blocks + ",)";
  k.launch = c.launch;
  k.for_precision = DotPrecisionName(DotPrecision::kFp16x3);
  k.otherwise = {hi + " = " + lo + " = " + source};
  return k;
}

}  // namespace drtriton::codegen

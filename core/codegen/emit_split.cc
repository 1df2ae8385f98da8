// An fp16x3 contraction operand's parts, written before the contraction (heuristics.h,
// PresplitsOperand: when and why).  One pointwise kernel reads the operand's float32 values
// and writes fp16 hi and lo parts (the K loop's own split: emit_contraction.cc
// WriteFp16Parts) into two buffers laid out as the tensor it reads, so the contraction
// addresses the parts at the operand's own offsets.  The wrapper allocates the buffers and
// launches the kernel only where its contraction runs the fp16x3 split
// (EmittedKernel::for_precision); in every other mode the buffers are the operand itself,
// passed and never read.
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

std::string OffsetOf(const std::string& address, const std::string& pointer) {
  assert(address.compare(0, pointer.size(), pointer) == 0 && "an address starts at its pointer");
  if (address.size() == pointer.size()) return "0";
  return address.substr(pointer.size() + 3);  // past " + "
}

void WriteFp16Parts(PythonWriter& w, const std::string& x, const std::string& hi,
                    const std::string& lo) {
  w.Line("s" + x + " = " + x + " * 0.00390625");
  w.Line(hi + " = s" + x + ".to(tl.float16)");
  w.Line(lo + " = ((s" + x + " - " + hi + ".to(tl.float32)) * 2048.0).to(tl.float16)");
}

EmittedKernel EmitSplitParts(const GroupContext& ctx, ValueId v, const std::string& source,
                             int64_t dense) {
  assert(!ctx.generic() && "operands are split first at literal sizes only");
  const Program& p = ctx.program;
  const Value& value = p.value(v);
  const int64_t numel = dense > 0 ? dense : Product(value.shape);
  const PointwiseConfig c = ChoosePointwise(numel, 0);
  const std::string hi = SplitPartBuffer(ctx, v, "hi"), lo = SplitPartBuffer(ctx, v, "lo");

  KernelParams params(p);
  if (source != value.name) params.Rebind(v, source);
  PythonWriter w(1);
  w.Line("offs = " + ProgramId(0, ctx.wide) + " * BLOCK + " + Arange("BLOCK", ctx.wide));
  w.Line("mask = offs < " + IntLiteral(numel));
  const std::string pointer = params.Pointer(v);
  // A contiguous tensor's element i is at offset i; any other's where its strides put it,
  // in the source and in the parts alike (the buffers copy the source's strides).  A dense
  // copy (a channels-last one) is split along its storage, padded channels and all.
  if (dense > 0) {
    w.Line("at = offs");
  } else {
    w.Open("if CONTIG:");
    w.Line("at = offs");
    w.Dedent();
    w.Open("else:");
    const std::vector<std::string> coords =
        DecomposeDims(w, "offs", LiteralDims(value.shape), "c");
    w.Line("at = " + OffsetOf(params.Address(v, coords, "offs * 0"), pointer));
    w.Dedent();
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
                      params, dense > 0 ? std::vector<std::string>{"BLOCK"}
                                        : std::vector<std::string>{"BLOCK", "CONTIG"},
                      w.str());
  k.call_args = params.args();
  k.constexprs = {"BLOCK=" + IntLiteral(c.block)};
  const std::string device = source + ".device";
  // empty_strided for both: empty_like would make a padded or broadcast layout contiguous.
  for (const std::string& part : {hi, lo})
    k.setup.push_back(part + " = torch.empty_strided(" + source + ".shape, " + source +
                      ".stride(), device=" + device + ", dtype=torch.float16)");
  if (dense == 0) SetContiguityFlag(k, source + ".is_contiguous()");
  k.grid = "(" + IntLiteral(CeilDiv(numel, c.block)) + ",)";
  k.launch = c.launch;
  k.for_precision = DotPrecisionName(DotPrecision::kFp16x3);
  k.otherwise = {hi + " = " + lo + " = " + source};
  return k;
}

}  // namespace drtriton::codegen

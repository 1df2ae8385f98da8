// Pointwise kernels: a program output computed by elementwise, broadcast, transpose and
// batch_norm nodes alone.  A flat output index is split into N-d coordinates (sizes are
// literals, or runtime arguments in generic-shape mode) and each input is read through its
// own strides, so broadcast and non-contiguous inputs need no copies.
#include <string>

#include "codegen/emitters.h"
#include "codegen/expr.h"
#include "codegen/heuristics.h"

namespace drtriton::codegen {

Result<EmittedKernel> EmitPointwise(const GroupContext& ctx) {
  const Program& p = ctx.program;
  const Value& out = p.value(ctx.group.output);
  const Dims dims = ctx.DimsOf(ctx.group.output);
  const std::string numel = DimProduct(dims);
  // Generic mode: one block size for every shape (masks cover the tail), so the text does
  // not depend on the sizes.
  const PointwiseConfig config =
      ChoosePointwise(ctx.generic() ? kUnknownSize : Product(out.shape), ctx.variant);

  KernelParams params(p);
  PythonWriter w(1);  // the kernel body
  int counter = 0;
  w.Line("pid = " + ProgramId(0, ctx.wide));
  w.Line("offs = pid * BLOCK + tl.arange(0, BLOCK)");
  w.Line("mask = offs < " + params.Sizes(numel));
  const auto coords = DecomposeDims(w, "offs", dims, "c");
  ExprEmitter e(p, ctx.plan.materialized, params, w, "mask", "offs * 0", counter);
  const std::string val = e.Compute(ctx.group.output, coords);
  w.Line("tl.store(" + params.Address(ctx.group.output, coords, "offs * 0") + ", " + val +
         ", mask=mask)");

  EmittedKernel k;
  k.name = ctx.kernel_name;
  k.text = KernelText(k.name, "pointwise: " + out.name, params, {"BLOCK"}, w.str());
  k.call_args = params.args();
  k.constexprs = {"BLOCK=" + IntLiteral(config.block)};
  k.grid = Grid1D(numel, IntLiteral(config.block));
  k.launch = config.launch;
  return k;
}

}  // namespace drtriton::codegen

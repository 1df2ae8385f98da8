// Pointwise kernels: a program output computed by elementwise, broadcast, transpose and
// batch_norm nodes alone.  A flat output index is split into N-d coordinates (sizes are
// literals, or runtime arguments in generic-shape mode) and each input is read through its
// own strides, so broadcast and non-contiguous inputs need no copies.
//
// That general path costs a div/mod chain per element and hides contiguity from Triton
// (no 128-bit vector accesses), so kernels also get a compile-time fast path: `if CONTIG:`
// (a tl.constexpr the wrapper sets from `.is_contiguous()` of the tensors it concerns)
// reads every tensor of the output's full shape at `ptr + offs`; broadcast tensors keep
// their coordinates, and only the coordinates some line uses are written.
#include <cctype>
#include <string>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/expr.h"
#include "codegen/heuristics.h"

namespace drtriton::codegen {

namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `text` mentions the identifier `name` (not as part of a longer name).
bool Mentions(const std::string& text, const std::string& name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const size_t end = at + name.size();
    if ((at == 0 || !IsNameChar(text[at - 1])) && (end == text.size() || !IsNameChar(text[end])))
      return true;
  }
  return false;
}

// The lines of `defs` (`name = expr`, one per line, each independent of the others) whose
// name `body` uses: a contiguous body needs only its broadcast tensors' coordinates.
std::string UsedDefinitions(const std::string& defs, const std::string& body) {
  std::string kept;
  for (size_t begin = 0; begin < defs.size();) {
    size_t end = defs.find('\n', begin);
    if (end == std::string::npos) end = defs.size();
    const std::string line = defs.substr(begin, end - begin);
    const size_t name_begin = line.find_first_not_of(' ');
    const size_t name_end = line.find(" = ");
    if (name_begin != std::string::npos && name_end != std::string::npos &&
        Mentions(body, line.substr(name_begin, name_end - name_begin)))
      kept += line + "\n";
    begin = end + 1;
  }
  return kept;
}

// The loads, arithmetic and store of the output at the flat indices `offs`, at indentation
// `depth`.  `contiguous`: tensors read at the output's own coordinates (its shape) are
// addressed as `ptr + offs` (params.flat_values() lists them); otherwise every tensor goes
// through its strides.
std::string PointwiseBody(const GroupContext& ctx, const Dims& dims, KernelParams& params,
                          int depth, bool contiguous) {
  PythonWriter defs(depth);
  const auto coords = DecomposeDims(defs, "offs", dims, "c");
  if (contiguous) params.SetFlatIndex(coords, "offs", ctx.program.value(ctx.group.output).shape);
  PythonWriter body(depth);
  int counter = 0;
  ExprEmitter e(ctx.program, ctx.plan.materialized, params, body, "mask", "offs * 0", counter);
  e.LoadOneElementValuesAsScalars();
  const std::string val = e.Compute(ctx.group.output, coords);
  body.Line("tl.store(" + params.Address(ctx.group.output, coords, "offs * 0") + ", " + val +
            ", mask=mask)");
  params.SetFlatIndex({}, "");
  return UsedDefinitions(defs.str(), body.str()) + body.str();
}

}  // namespace

Result<EmittedKernel> EmitPointwise(const GroupContext& ctx) {
  const Program& p = ctx.program;
  const Value& out = p.value(ctx.group.output);
  const Dims dims = ctx.DimsOf(ctx.group.output);
  const std::string numel = DimProduct(dims);
  // Generic mode: one block size for every shape (masks cover the tail), so the text does
  // not depend on the sizes.
  const PointwiseConfig config =
      ChoosePointwise(ctx.generic() ? kUnknownSize : Product(out.shape), ctx.variant);

  KernelParams params(p, ctx.allocated_strides());
  PythonWriter w(1);  // the kernel body
  w.Line("pid = " + ProgramId(0, ctx.wide));
  w.Line("offs = pid * BLOCK + tl.arange(0, BLOCK)");
  w.Line("mask = offs < " + params.Sizes(numel));
  // A trial on a copy of the parameters tells which values the fast body reads flat.
  KernelParams trial = params;
  PointwiseBody(ctx, dims, trial, 1, /*contiguous=*/true);
  const std::string check = ContiguityCheck(p, trial.flat_values(), {ctx.group.output});
  std::vector<std::string> constexprs = {"BLOCK"};
  std::string body = w.str();
  if (check.empty()) {
    // Nothing but the output is read flat: the fast body is valid for any input strides.
    body += PointwiseBody(ctx, dims, params, 1, /*contiguous=*/true);
  } else {
    // The strided body is emitted first so that the kernel's parameters keep the order of
    // the strided path's first uses.
    const std::string strided = PointwiseBody(ctx, dims, params, 2, /*contiguous=*/false);
    const std::string fast = PointwiseBody(ctx, dims, params, 2, /*contiguous=*/true);
    constexprs.push_back("CONTIG");
    body += "    if CONTIG:\n" + fast + "    else:\n" + strided;
  }

  EmittedKernel k;
  k.name = ctx.kernel_name;
  k.text = KernelText(k.name, "pointwise: " + out.name, params, constexprs, body);
  k.call_args = params.args();
  k.constexprs = {"BLOCK=" + IntLiteral(config.block)};
  if (!check.empty()) SetContiguityFlag(k, check);
  k.grid = Grid1D(numel, IntLiteral(config.block));
  k.launch = config.launch;
  return k;
}

}  // namespace drtriton::codegen

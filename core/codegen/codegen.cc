// EmitCandidate: plan the fusion, emit one kernel per group, assemble the wrapper.
#include "codegen/codegen.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/amplify.h"
#include "codegen/emitters.h"
#include "codegen/fusion.h"
#include "codegen/heuristics.h"
#include "codegen/layout.h"
#include "codegen/reassociate.h"
#include "codegen/sizes.h"
#include "codegen/wrapper.h"

namespace drtriton::codegen {
namespace {

// "k2_softmax": the group's number and the operator that anchors it (or its last node).
std::string KernelName(const Program& p, const Group& g, size_t index) {
  NodeId named = g.anchor.valid() ? g.anchor : p.value(g.output).producer;
  const std::string op = named.valid() ? GetOp(p.node(named).op).name : "copy";
  return "k" + std::to_string(index) + "_" + op + "_kernel";
}

// 2^31 elements: beyond it int32 offsets (element index times stride) can overflow.
bool IsWide(const Program& p) {
  constexpr int64_t kInt32Elems = int64_t{1} << 31;
  for (const Value& v : p.values())
    if (Product(v.shape) >= kInt32Elems) return true;
  return false;
}

// The pool group reading a convolution group's output, the only reader of it and not a
// program output (GroupContext::pool_after), or -1.
int PoolAfter(const Program& p, const FusionPlan& plan, size_t index,
              const std::vector<std::vector<NodeId>>& users) {
  const Group& g = plan.groups[index];
  if (g.kind != GroupKind::kContraction) return -1;
  const OpInfo& op = GetOp(p.node(g.anchor).op);
  if (!(op.has(kConv) || op.has(kConvTranspose)) ||
      IsOutput(p, g.output) || users[g.output.index].size() != 1)
    return -1;
  for (size_t j = index + 1; j < plan.groups.size(); ++j)
    if (plan.groups[j].kind == GroupKind::kPool &&
        plan.groups[j].anchor == users[g.output.index][0])
      return static_cast<int>(j);
  return -1;
}

// `kernel` and the launches before it run only where `flag` does not hold.
void GuardedBy(const std::string& flag, EmittedKernel& kernel) {
  const std::string unless = "not " + flag;
  kernel.guard = kernel.guard.empty() ? unless : unless + " and (" + kernel.guard + ")";
  for (EmittedKernel& before : kernel.before) GuardedBy(flag, before);
}

// The value a pointwise group's output is a row-major view of, through layout nodes alone
// that keep the order (KeepsRowMajorOrder), or invalid.  The source must be a value this
// candidate allocates (contiguous, torch.empty): a program input may be strided, and a
// program output would alias another.  Why: KernelBench L1 11's einsum maps to a bmm whose
// (1, 1048576, 768) result is reshaped through a transpose of a size-1 dim; a pointwise kernel
// copied its 805M elements (1.6 GB each way in bf16) after the product.
ValueId RowMajorViewSource(const Program& p, const FusionPlan& plan, const Group& g) {
  if (g.kind != GroupKind::kPointwise || g.anchor.valid()) return {};
  ValueId v = g.output;
  do {
    const NodeId producer = p.value(v).producer;
    if (!producer.valid() || !KeepsRowMajorOrder(p, p.node(producer))) return {};
    v = p.node(producer).tensors[0];
  } while (!plan.materialized[v.index]);
  if (!p.value(v).producer.valid() || IsOutput(p, v)) return {};
  return v;
}

Result<EmittedKernel> EmitGroup(const GroupContext& ctx) {
  switch (ctx.group.kind) {
    case GroupKind::kPointwise:
      return EmitPointwise(ctx);
    case GroupKind::kRows:
      return EmitRows(ctx);
    case GroupKind::kContraction:
      return EmitContraction(ctx);
    case GroupKind::kPool:
      return EmitPool(ctx);
  }
  return MakeError("unknown group kind");
}

}  // namespace

std::vector<std::string> UnsupportedOps(const Program& program) {
  std::vector<std::string> names;
  for (size_t i = 0; i < program.nodes().size(); ++i) {
    const std::string why = UnsupportedReason(program, NodeId{static_cast<int32_t>(i)});
    if (!why.empty() && std::find(names.begin(), names.end(), why) == names.end())
      names.push_back(why);
  }
  return names;
}

std::vector<std::string> GenericUnsupportedOps(const Program& program) {
  std::vector<std::string> names;
  for (size_t i = 0; i < program.nodes().size(); ++i) {
    const std::string why = GenericBlocker(program, NodeId{static_cast<int32_t>(i)});
    if (!why.empty() && std::find(names.begin(), names.end(), why) == names.end())
      names.push_back(why);
  }
  // Runtime sizes are int32 kernel arguments: products of them would overflow.
  if (IsWide(program)) names.push_back("2^31 elements");
  // The rewrite writes its ranges, pads and reshapes as literal sizes, and the convolution it
  // removes costs up to 32x the FLOPs (L2 13): such a program is emitted for its own sizes.
  if (ReducesBeforeConvolutions(program))
    names.push_back("a sum or mean over a convolution's spatial dims (reassociate_conv.cc)");
  if (names.empty()) {
    auto syms = InferSizeSyms(program);
    if (!syms) names.push_back(syms.error().message);
  }
  return names;
}

Result<std::string> EmitCandidate(const Program& written, const CodegenOptions& options) {
  if (written.outputs().empty()) return MakeError("program has no outputs");
  for (size_t i = 0; i < written.nodes().size(); ++i) {
    const std::string why = UnsupportedReason(written, NodeId{static_cast<int32_t>(i)});
    if (!why.empty()) return MakeError("cannot emit " + why, written.nodes()[i].line);
  }
  // Reductions over a product's columns or a convolution's spatial dims go before it where
  // they may (reassociate.h), unless that leaves an operator configuration this generator
  // cannot emit.
  const bool generic = options.generic_shapes && GenericUnsupportedOps(written).empty();
  const std::optional<Program> reduced = Reassociate(written, generic);
  const bool use_reduced = reduced && UnsupportedOps(*reduced).empty();
  const Program& program = use_reduced ? *reduced : written;
  std::optional<SizeSyms> syms;
  // The written program passed the check above; a rewritten one is checked again.
  if (generic && (!use_reduced || GenericUnsupportedOps(program).empty()))
    syms = InferSizeSyms(program).value();
  const FusionPlan plan = PlanFusion(program, options.fuse_epilogue, !syms, options.column_stats);
  const std::vector<bool> amplified = AmplifiedValues(program, options.amplified_outputs);
  std::vector<Launch> launches;
  const std::vector<std::vector<NodeId>> users = Consumers(program);
  std::vector<std::string> computed_when(plan.groups.size());  // a pool group's TMA flag
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    const Group& g = plan.groups[i];
    if (const ValueId source = RowMajorViewSource(program, plan, g); source.valid()) {
      Launch view;
      view.output = g.output;
      view.view_of = source;
      launches.push_back(std::move(view));
      continue;
    }
    const int pool = PoolAfter(program, plan, i, users);
    GroupContext ctx{program,
                     plan,
                     g,
                     KernelName(program, g, i),
                     options.variant,
                     IsWide(program),
                     syms ? &*syms : nullptr,
                     &amplified,
                     pool >= 0 ? &plan.groups[static_cast<size_t>(pool)] : nullptr};
    auto emitted = EmitGroup(ctx);
    if (!emitted) return emitted.error();
    EmittedKernel kernel = std::move(emitted).value();
    ValueId early;  // the pool group's output, which this kernel may write
    if (!kernel.computes_pool_when.empty()) {
      computed_when[static_cast<size_t>(pool)] = kernel.computes_pool_when;
      early = plan.groups[static_cast<size_t>(pool)].output;
    }
    const bool computed = !computed_when[i].empty();
    if (computed) GuardedBy(computed_when[i], kernel);
    launches.push_back(Launch{std::move(kernel), g.output, early, computed});
  }
  return AssembleCandidate(program, launches, syms ? &*syms : nullptr);
}

std::vector<std::string> EmitVariants(const Program& program, int k, bool generic_shapes,
                                      const std::vector<std::string>& amplified_outputs) {
  // Variant 0 is the heuristic with epilogue fusion, then the same with column statistics
  // (CodegenOptions::column_stats; a duplicate where nothing pairs); then the alternative
  // block sizes; then the same without epilogue fusion (a different fusion split).
  std::vector<std::string> out;
  std::set<std::string> seen;
  const auto add = [&](const CodegenOptions& options) {
    auto text = EmitCandidate(program, options);
    if (!text) return false;
    if (static_cast<int>(out.size()) < k && seen.insert(text.value()).second)
      out.push_back(std::move(text).value());
    return true;
  };
  for (int v = 0; v < 2 * kNumVariants && static_cast<int>(out.size()) < k; ++v) {
    CodegenOptions options;
    options.variant = v % kNumVariants;
    options.fuse_epilogue = v < kNumVariants;
    options.generic_shapes = generic_shapes;
    options.amplified_outputs = amplified_outputs;
    if (!add(options)) return {};
    if (v != 0 || generic_shapes) continue;
    options.column_stats = true;
    if (!add(options)) return {};
  }
  return out;
}

}  // namespace drtriton::codegen

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
  // Reductions over a product's columns go before it where they may (reassociate.h), unless
  // that leaves an operator configuration this generator cannot emit.
  const std::optional<Program> reduced = ReduceBeforeProducts(written);
  const bool use_reduced = reduced && UnsupportedOps(*reduced).empty();
  const Program& program = use_reduced ? *reduced : written;
  std::optional<SizeSyms> syms;
  if (options.generic_shapes && GenericUnsupportedOps(program).empty())
    syms = InferSizeSyms(program).value();
  const FusionPlan plan = PlanFusion(program, options.fuse_epilogue, !syms);
  const std::vector<bool> amplified = AmplifiedValues(program, options.amplified_outputs);
  std::vector<Launch> launches;
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    const Group& g = plan.groups[i];
    GroupContext ctx{program,
                     plan,
                     g,
                     KernelName(program, g, i),
                     options.variant,
                     IsWide(program),
                     syms ? &*syms : nullptr,
                     &amplified};
    auto kernel = EmitGroup(ctx);
    if (!kernel) return kernel.error();
    launches.push_back(Launch{std::move(kernel).value(), g.output});
  }
  return AssembleCandidate(program, launches, syms ? &*syms : nullptr);
}

std::vector<std::string> EmitVariants(const Program& program, int k, bool generic_shapes,
                                      const std::vector<std::string>& amplified_outputs) {
  // Variant 0 is the heuristic with epilogue fusion; then the alternative block sizes;
  // then the same without epilogue fusion (a different fusion split).
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (int v = 0; v < 2 * kNumVariants && static_cast<int>(out.size()) < k; ++v) {
    CodegenOptions options;
    options.variant = v % kNumVariants;
    options.fuse_epilogue = v < kNumVariants;
    options.generic_shapes = generic_shapes;
    options.amplified_outputs = amplified_outputs;
    auto text = EmitCandidate(program, options);
    if (!text) return {};
    if (seen.insert(text.value()).second) out.push_back(std::move(text).value());
  }
  return out;
}

}  // namespace drtriton::codegen

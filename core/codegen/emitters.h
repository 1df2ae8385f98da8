// Private to codegen/: one emitter per group kind (fusion.h), and the pieces they share.
#pragma once

#include <string>
#include <vector>

#include "codegen/fusion.h"
#include "codegen/kernel.h"
#include "codegen/python_writer.h"
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
};

// `tl.program_id(axis)` and `tl.arange(0, block)`, widened to int64 for wide programs.
std::string ProgramId(int axis, bool wide);
std::string Arange(const std::string& block, bool wide);

Result<EmittedKernel> EmitPointwise(const GroupContext& ctx);
Result<EmittedKernel> EmitRows(const GroupContext& ctx);         // emit_rows.cc
Result<EmittedKernel> EmitContraction(const GroupContext& ctx);  // emit_contraction.cc
Result<EmittedKernel> EmitPool(const GroupContext& ctx);         // emit_pool.cc

// `@triton.jit def name(params..., CONSTEXPRS: tl.constexpr):` followed by `body`
// (already indented one level) and a leading comment line.
std::string KernelText(const std::string& name, const std::string& comment,
                       const KernelParams& params, const std::vector<std::string>& constexprs,
                       const std::string& body);

// Why a program cannot be emitted, per node ("" = supported).
std::string UnsupportedReason(const Program& program, NodeId node);

}  // namespace drtriton::codegen

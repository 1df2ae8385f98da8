// What the generator can emit (UnsupportedReason), so that `drtriton teach` lists the
// operators it skips instead of failing on them.
#include <string>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/expr.h"
#include "codegen/fusion.h"

namespace drtriton::codegen {

std::string UnsupportedReason(const Program& p, const NodeId id) {
  const Node& node = p.node(id);
  const OpInfo& op = GetOp(node.op);
  if (op.has(kElementwise)) {
    std::vector<std::string> ins(node.tensors.size(), "x");
    if (ElementwiseFormula(op, ins, node.attrs).empty()) return op.name;
    return "";
  }
  // An instance norm over running statistics (use_input_stats=False) has no row program: the
  // row emitter computes each row's own statistics.
  const int stats = op.attr_index("use_input_stats");
  if (op.row == RowKind::kInstanceNorm && stats >= 0 && !node.attrs[stats].b)
    return op.name + "(use_input_stats=False)";
  if (op.has(kContraction) || op.has(kConv) || op.has(kConvTranspose)) {
    for (ValueId t : node.tensors)
      if (t.valid() && p.value(t).dtype != "float32") return op.name + "(int64 operand)";
  }
  return "";
}

}  // namespace drtriton::codegen

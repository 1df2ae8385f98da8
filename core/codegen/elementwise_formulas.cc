// Elementwise operators in Triton: their catalog entry's lowering (catalog/lowering.h), read
// here so that the emitters never test an operator's name.
#include <string>
#include <vector>

#include "codegen/expr.h"

namespace drtriton::codegen {

std::string NanOfLanes(const std::string& acc) {
  return "tl.sum(tl.where(" + acc + " != " + acc + ", " + acc + ", 0.0), axis=1, keep_dims=True)";
}

std::string ElementwiseFormula(const OpInfo& op, const std::vector<std::string>& ins,
                               const std::vector<AttrValue>& attrs) {
  if (op.lowering == nullptr || static_cast<int>(ins.size()) != op.arity()) return "";
  return op.lowering(ins, attrs);
}

}  // namespace drtriton::codegen

// Argument binder: matches the arguments of one parsed call (positional and keyword) to the
// operator's parameters the way Python would, fills defaults, and resolves tensor names.
// Internal to ir/; the parser is its only client.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "ir/program.h"
#include "util/result.h"

namespace drtriton::ir_internal {

// One argument as written: `value` or `keyword=value`, where value is a name or a literal.
struct ArgExpr {
  std::string keyword;  // empty for a positional argument
  bool is_name = false;
  std::string name;   // when is_name
  AttrValue literal;  // otherwise (None, True, 3, 0.5, 'tanh', [1, 2])
  std::string text;   // as written, for messages
};

struct BoundArgs {
  std::vector<ValueId> tensors;  // one per tensor param; invalid = None
  std::vector<AttrValue> attrs;  // one per attribute param
};

// `callee` is the spelling used in the text, for messages; names resolve in `program`.
Result<BoundArgs> BindArgs(const OpInfo& op, const std::string& callee,
                           const std::vector<ArgExpr>& args, const Program& program, int line);

}  // namespace drtriton::ir_internal

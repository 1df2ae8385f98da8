// Private to codegen/: the sizes an emitter writes into kernel text.  Every dim is a
// Python expression: an integer literal in the default (shape-specialized) mode, or, for
// generic-shape candidates (CodegenOptions::generic_shapes), a size the wrapper reads at
// run time (`x0_s0, x0_s1 = x0.shape`) and passes to the kernels as an argument.  One set
// of emitters serves both modes: they build index math from these expressions, and the
// literal mode folds to exactly the numbers it always printed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/program.h"
#include "util/result.h"

namespace drtriton::codegen {

// One expression per dim.  "1" marks a unit dim: broadcast structure is part of the
// program (a dim that is 1 stays 1 at run time; the generic wrapper asserts it), so unit
// dims read coordinate 0 in both modes.
using Dims = std::vector<std::string>;

// The expression of every program value's dims (generic mode): input dims are the names
// `<input>_s<d>`; other values follow from their operator's shape rule.
struct SizeSyms {
  std::vector<Dims> values;  // indexed by ValueId
  // Wrapper lines computing sizes that are arithmetic on others (a conv's output length:
  // `t0_s2 = (x0_s2 + 2 * 1 - 1 * (x1_s2 - 1) - 1) // 2 + 1`), in program order, written
  // after the inputs are unpacked.
  std::vector<std::string> derived;
};

// "x0_s1": the wrapper variable (and kernel parameter) holding `value`'s size along `dim`.
std::string SizeName(const std::string& value, size_t dim);

// The operator of `node` if generic emission does not cover its shape rule, "" when it
// does (every catalog rule but kReduceAll, which programs do not use).
std::string GenericBlocker(const Program& program, NodeId node);

// Every value's dims over the inputs' runtime sizes, or an error naming the first
// operator that keeps the program specialized.
Result<SizeSyms> InferSizeSyms(const Program& program);

// Whether a dim is written as a number (a shape-specialized size), not a runtime expression.
bool IsLiteral(const std::string& dim);

// The literal dims of a concrete shape ("1" for unit dims).
Dims LiteralDims(const Shape& shape);

// The product of dims [begin, end): numeric factors are folded into one literal (so the
// literal mode prints "32", not "4 * 8"), names are joined with " * "; "1" when empty.
std::string DimProduct(const Dims& dims, size_t begin = 0, size_t end = SIZE_MAX);

// `expr` parenthesized unless it is one name or number (an operand of // or %).
std::string Atom(const std::string& expr);

// The size names (`<value>_s<d>`) that `expr` mentions, in order, each once.
std::vector<std::string> SizeNamesIn(const std::string& expr);

// Writes `prefix_i = ...` lines decomposing the flat row-major index `flat` over `dims`
// and returns the coordinate expressions ("0" for unit dims, never written).  Size names
// in the lines must be kernel parameters: see KernelParams::Sizes.
std::vector<std::string> DecomposeDims(class PythonWriter& w, const std::string& flat,
                                       const Dims& dims, const std::string& prefix);

}  // namespace drtriton::codegen

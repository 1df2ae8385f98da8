// Sums and means over a product's output columns, taken before the product.
//
// A sum over N of x @ W (x: (..., M, K), W: (..., K, N)) is x @ (W summed over N): a
// matrix-vector product after one pass over W, where the program as written multiplies the
// whole matrix and then reduces it (KernelBench L2 14: 1024 x 8192 x 8192, 137 GFLOP, becomes
// a 16.8 MFLOP product after summing W's 67M elements).  The same holds through what lies
// between the product and the reduction when each step scales its input by a factor that is
// constant along N (catalog kScalesInput: mul, div, neg), and, for a mean, shifts it by such
// a term (kShiftsInput: add, sub).  linear's weight (N, K) is reduced over its first dim, its
// bias with it.
//
// The reduction itself stays in the program, now over a dim of size 1 (an identity), so
// every value after it keeps its shape and name; the values between keep their names with N
// become 1.  The rewrite applies where the product's output and each value between have one
// consumer and are not program outputs, and N >= 2.
#pragma once

#include <optional>

#include "ir/program.h"

namespace drtriton::codegen {

// The program with every such reduction moved before its product, or nullopt where none
// applies.  Inputs, outputs and their names are the program's own.
std::optional<Program> ReduceBeforeProducts(const Program& program);

// The program with each sum or mean over a spatial dim of a convolution's output (through
// steps that commute with it, as above) taken before the convolution, one dim of each
// convolution a call (reassociate_conv.cc), or nullopt where none applies.
std::optional<Program> ReduceBeforeConvolutions(const Program& program);
// Whether ReduceBeforeConvolutions applies, without rewriting.
bool ReducesBeforeConvolutions(const Program& program);

// Each convolution of one group over one position, its kernel one position wide and no
// padding (what ReduceBeforeConvolutions leaves of a global mean), as a matrix product
// reshaped back; nullopt where there is none.
std::optional<Program> PointwiseConvolutionsAsProducts(const Program& program);

// Both rewrites, the convolutions' until every reduced spatial dim is done, and the
// reductions left over one position made reshapes; nullopt where neither applies.  With
// `generic_shapes` the products' alone: the others write sizes as literals (ranges, pads,
// reshapes), which a candidate for any input size cannot.
std::optional<Program> Reassociate(const Program& program, bool generic_shapes);

}  // namespace drtriton::codegen

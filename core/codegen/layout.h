// Private to codegen/: layout operators (catalog kLayout) as index arithmetic.  A kernel
// that reads a layout operator's result at output coordinates reads its input at the
// coordinates computed here instead: no copy is ever stored.
#pragma once

#include <string>
#include <vector>

#include "ir/program.h"

namespace drtriton::codegen {

struct LayoutRead {
  std::vector<std::string> coords;  // one expression per dim of the input
  // Where the input holds the output element (pad: inside the padding); elsewhere the
  // result is `fill`.  Empty: everywhere.
  std::string in_range;
  std::string fill;
};

// The input coordinates of layout node `node` for output coordinates `coords`.  Sizes are
// the program's literals: generic-shape mode does not take these operators (GenericBlocker).
LayoutRead LayoutInputCoords(const Program& program, const Node& node,
                             const std::vector<std::string>& coords);

// The dims a flip node reverses, normalized to [0, rank) in the node's order; empty for any
// other node.
std::vector<int> FlippedDims(const Program& program, const Node& node);

// Whether layout node `node` leaves its input's elements in row-major order: a reshape, or a
// transpose or permute that moves only dims of size 1.  Its result is then a view of a
// contiguous input (Tensor.view), with no copy.
bool KeepsRowMajorOrder(const Program& program, const Node& node);

}  // namespace drtriton::codegen

// Partitions a Program into fused groups, one kernel each.
//
// Every node is either an *anchor* (reduction, scan, softmax-like row, layer/group/instance
// norm, contraction, convolution, pooling) that needs a kernel of its own shape, or
// *inlinable* (elementwise, transpose, inference batch_norm): its value at any coordinates
// is a cheap function of its inputs at related coordinates.  Inlinable values are never
// stored; every kernel that reads one recomputes it from its producers (prologue fusion),
// but for the input of a depthwise convolution's window sum (IsWindowSum), which a pointwise
// kernel stores first.
// An anchor whose result feeds a single chain of same-shape elementwise nodes computes the
// chain in its own registers and stores only the chain's end (epilogue fusion).  Program
// outputs are always stored; an output produced by inlinable nodes alone gets a pointwise
// kernel.  So `conv -> relu -> add` is one kernel, and so is any elementwise program.
// A scan's epilogue may also pass one flip along the scan dim (and only that dim): the scan
// kernel stores each value at its mirrored position (Group::mirrored), so that
// flip(cumsum(flip(x))) is one kernel and no copy.
#pragma once

#include <vector>

#include "ir/program.h"

namespace drtriton::codegen {

enum class GroupKind { kPointwise, kRows, kContraction, kPool };

struct Group {
  GroupKind kind = GroupKind::kPointwise;
  NodeId anchor;   // invalid for pointwise groups
  ValueId output;  // the value this kernel stores: the anchor's result or its epilogue's end
  // A scan whose epilogue flips the scan dim: `output`'s coordinate along it is the
  // anchor result's mirrored (n - 1 - i).
  bool mirrored = false;
  // A rows producer this kernel computes itself, never stored (LossLogSoftmax): invalid
  // for every other group.
  NodeId absorbed;
};

struct FusionPlan {
  std::vector<Group> groups;       // in an order where every group's inputs come first
  std::vector<bool> materialized;  // per value: stored in memory (inputs, group outputs)
};

// The log_softmax along the classes whose only reader is the nll_loss `loss` (and which the
// program does not return): the loss's rows kernel computes its row statistics in the same
// read of the scores, so cross_entropy stores no (N, C) log-probabilities.  Null otherwise.
const Node* LossLogSoftmax(const Program& program, const Node& loss);

// True for nodes computed inline by whichever kernel reads them.
bool IsInlinable(const Program& program, NodeId node);
// A convolution or transposed convolution of one input channel per group, more than one group
// (depthwise, any channel multiplier): its kernel sums windows lane by lane (ChooseWindowSum)
// and reads its input as stored (PlanFusion).
bool IsWindowSum(const Program& program, const Node& node);
// The group kind of an anchor node.
GroupKind AnchorKind(const Program& program, NodeId node);

FusionPlan PlanFusion(const Program& program, bool fuse_epilogue);

}  // namespace drtriton::codegen

// Fragments of a program for the test-time search (paper §4): contiguous runs of at most
// K compute operators in program (topological) order, each rebuilt as its own functional
// task so that a policy can write a kernel for it and the verifier can judge it alone.
#pragma once

#include <string>
#include <vector>

#include "ir/program.h"
#include "util/result.h"

namespace drtriton::search {

// Nodes [start, end) of the parent program as a standalone task.  Value names are the
// parent's, so a fragment's inputs and outputs name the parent values they stand for.
struct Fragment {
  int start = 0;
  int end = 0;
  Program program;
  std::vector<std::string> inputs;   // parent values read, in first-use order
  std::vector<std::string> outputs;  // values defined here and read after `end` or returned
  // The outputs whose rounding an operator of the parent magnifies (codegen/amplify.h): the
  // fragment's kernels are to compute them at full precision though nothing in the fragment
  // amplifies.  KernelBench L3 43: the q/k/v linear's fragment, correct alone, put 14 and
  // 1,032 of 50M elements past 1e-4 once a later fragment's softmax amplified its fp16x3
  // rounding (h200-2026-12-04b).
  std::vector<std::string> amplified;
};

// Builds nodes [start, end) as a task: external inputs become parameters (created by the
// parent's create op for program inputs; else torch.rand where a use needs positive values,
// torch.randn otherwise).  Fails for a fragment that reads an integer (argmax) value.
Result<Fragment> MakeFragment(const Program& program, int start, int end);
// The same with the parent's codegen::AmplifiedValues computed once for many fragments.
Result<Fragment> MakeFragment(const Program& program, int start, int end,
                              const std::vector<bool>& amplified);

// A program longer than max_ops but of at most this many nodes, not counting layout operators,
// is also offered whole, as one more fragment (the teacher's candidate for the task itself).  Why: a contraction with a
// tail of six or more operators could only be split, and each split writes and reads the
// contraction's output once more.  H100, bf16 (results/h100-2026-12-06b): KernelBench L2 2,
// six operators, kept its transposed convolution (0.83 ms) and its five-operator tail (0.70
// ms, 1 GB read and written) apart, 0.97x torch.compile.  24 of the 67 dev level-2 problems
// have 6 to 8 operators.  Longer programs (level 3's networks) are left to the cover: one
// candidate for a whole network is many kernels to compile inside one verification.  Layout
// operators (reshape, transpose, ...) are index arithmetic in the kernels that read them
// (codegen/layout.h), no kernel of their own, so they do not count: KernelBench L1 98's KL
// divergence is 14 nodes, 2 of them reshapes. Covered by two fused fragments and five PyTorch
// operators it ran 0.36x torch.compile in bf16 on the H100 (results/h100-2026-12-08); the
// teacher's whole candidate ran 1.02x in fp32 (results/h100-2026-12-07g).
inline constexpr int kWholeProgramMaxOps = 12;

// Every buildable fragment of 1..max_ops nodes, by start then length, then the whole program
// where it is longer than max_ops and at most kWholeProgramMaxOps.  `blocked[i]` marks node i
// as one the search must leave alone (an operator kept in PyTorch); fragments containing it
// are skipped.  An empty `blocked` blocks nothing.
std::vector<Fragment> EnumerateFragments(const Program& program, int max_ops = 5,
                                         const std::vector<bool>& blocked = {});

}  // namespace drtriton::search
